// The internal network's security and channel policy (docs/architecture.md "Internal network").
//
// mTLS: GRPC_TLS_DIR holds this process's certificate (tls.crt, tls.key) and the mesh CA (ca.crt).
// Set: every server requires a client certificate signed by the CA, every client presents its own and
// verifies the server's; a certificate's identity is its service name (CN or a DNS SAN, e.g. `contacts`).
// Unset: plaintext, allowed only on loopback or a Unix socket unless GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK
// says otherwise (assertPlaintextAllowed). Certificates are read once at start: rotation
// restarts the pods (docs/architecture.md).
//
// Authorisation: a binding names the identities that may call it (`callers`); under mTLS an
// authenticated caller outside that list gets PERMISSION_DENIED before any handler runs.
//
// Channels: client-side round_robin over every address the target resolves to (`dns:///svc:port` of
// a headless Service, `ipv4:a:p1,b:p2`), keepalive, and a bounded reconnect backoff.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PeerCertificate } from 'node:tls';
import { ConfigError } from '../config';

export interface MeshTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  /** The directory it was read from, for messages. */
  dir: string;
}

/** Reads tls.crt, tls.key and ca.crt from `dir`; a missing file fails the start. */
export function loadMeshTls(dir: string): MeshTls {
  const read = (name: string) => {
    try {
      return readFileSync(path.join(dir, name));
    } catch {
      throw new ConfigError(`GRPC_TLS_DIR=${dir} must contain tls.crt, tls.key and ca.crt (${name} is unreadable)`);
    }
  };
  return { cert: read('tls.crt'), key: read('tls.key'), ca: read('ca.crt'), dir };
}

let fromEnv: MeshTls | null | undefined;

/** The process's mesh certificates (GRPC_TLS_DIR), or null for plaintext; read once. */
export function meshTlsFromEnv(): MeshTls | null {
  if (fromEnv === undefined) fromEnv = process.env.GRPC_TLS_DIR ? loadMeshTls(process.env.GRPC_TLS_DIR) : null;
  return fromEnv;
}

/** The embedded mode talks to itself on loopback: plaintext whatever the environment says. */
export function usePlaintextMesh(): void {
  fromEnv = null;
}

/** The names a certificate stands for: its CN and its DNS subject alternative names. */
export function certificateIdentities(cert: PeerCertificate | undefined): string[] {
  if (!cert) return [];
  const names = new Set<string>();
  const cn = cert.subject?.CN;
  if (typeof cn === 'string') names.add(cn);
  for (const entry of (cert.subjectaltname ?? '').split(',')) {
    const match = /^\s*DNS:(.+)$/.exec(entry);
    if (match) names.add(match[1].trim());
  }
  return [...names];
}

export function serverCredentials(tls: MeshTls | null): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/** The server a client expects behind a service name: `invoicing.<service>.v1.X` → `<service>`. */
export function serverIdentityOf(serviceName: string): string {
  const service = serviceName.split('.')[1];
  if (!service) throw new Error(`cannot derive the server identity of ${serviceName}`);
  return service;
}

/** Server keepalive and connection ageing: clients re-resolve DNS and find new replicas. */
export const serverChannelOptions: grpc.ServerOptions = {
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 10_000,
  // A connection lives 5 minutes; then GOAWAY, the client reconnects (and re-resolves a headless
  // Service), so a scaled-up Deployment receives traffic without waiting for a failure.
  'grpc.max_connection_age_ms': 5 * 60_000,
  'grpc.max_connection_age_grace_ms': 30_000,
};

const clientChannelOptions: grpc.ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 5_000,
  // A DNS target is re-resolved at most this often when a subchannel fails (a replica went away).
  'grpc.dns_min_time_between_resolutions_ms': 2_000,
  // Channelz (runtime introspection) is unused here and counts every call.
  'grpc.enable_channelz': 0,
  'grpc.max_receive_message_length': 32 * 1024 * 1024,
};

/** Credentials and options of a channel to `serviceName`: under mTLS the server must prove it is that service. */
export function clientChannel(tls: MeshTls | null, serviceName: string): { credentials: grpc.ChannelCredentials; options: grpc.ChannelOptions } {
  if (!tls) return { credentials: grpc.credentials.createInsecure(), options: clientChannelOptions };
  const expected = serverIdentityOf(serviceName);
  const credentials = grpc.credentials.createSsl(tls.ca, tls.key, tls.cert, {
    // The chain is verified against ca.crt by TLS itself; this checks whose certificate it is.
    checkServerIdentity: (_host, cert) =>
      certificateIdentities(cert).includes(expected)
        ? undefined
        : new Error(`the server's certificate (${certificateIdentities(cert).join(', ') || 'no name'}) is not ${expected}'s`),
  });
  // The name TLS checks (SNI and hostname verification) is the service's, whatever address the target resolves to.
  return { credentials, options: { ...clientChannelOptions, 'grpc.ssl_target_name_override': expected, 'grpc.default_authority': expected } };
}

/** The verified identities of a call's client certificate (empty on a plaintext connection). */
export function callerIdentities(call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } }): string[] {
  return certificateIdentities(call.getAuthContext().sslPeerCertificate);
}

/**
 * Wraps a service implementation so that only `callers` reach it. Used only under mTLS, where the
 * TLS handshake has already verified the certificate against the CA. A refused call ends with its status
 * whatever the method's shape: unary and client-streaming handlers answer through their callback, a
 * server-streaming (or bidi) handler has none and fails its stream with the status instead.
 */
export function authorised(
  name: string,
  definition: grpc.ServiceDefinition,
  implementation: grpc.UntypedServiceImplementation,
  callers: readonly string[],
): grpc.UntypedServiceImplementation {
  const guarded: grpc.UntypedServiceImplementation = {};
  const refusal = (call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } }): Partial<grpc.ServiceError> | undefined => {
    const identities = callerIdentities(call);
    if (identities.length === 0) return { code: grpc.status.UNAUTHENTICATED, details: 'a client certificate is required' };
    if (!identities.some((id) => callers.includes(id))) return { code: grpc.status.PERMISSION_DENIED, details: `${identities[0]} may not call ${name}` };
    return undefined;
  };
  for (const [method, handler] of Object.entries(implementation)) {
    if (definition[method]?.responseStream) {
      guarded[method] = ((call: grpc.ServerWritableStream<unknown, unknown>) => {
        const refused = refusal(call);
        if (refused) return call.emit('error', refused);
        return (handler as grpc.handleServerStreamingCall<unknown, unknown>)(call);
      }) as grpc.UntypedHandleCall;
      continue;
    }
    guarded[method] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const refused = refusal(call);
      if (refused) return callback(refused, null);
      return (handler as grpc.handleUnaryCall<unknown, unknown>)(call, callback);
    }) as grpc.UntypedHandleCall;
  }
  return guarded;
}

/** The setting that lets a gRPC server listen beyond loopback in plaintext, and the one value that does. */
export const PLAINTEXT_NETWORK_SETTING = 'GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK';
export const PLAINTEXT_NETWORK_CONSENT = 'i-understand';

/** Loopback (127.0.0.0/8, ::1, localhost): only processes on this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) || /^::ffff:127\./.test(bare);
}

/**
 * Refuses a plaintext server beyond loopback: anyone who can reach the address could call every service
 * with any tenant and, on the admin port, create users and tokens. Only mTLS (GRPC_TLS_DIR) or the
 * operator's explicit consent (a network encrypted and trusted by other means) lets it start.
 */
export function assertPlaintextAllowed(host: string, setting: string, env: NodeJS.ProcessEnv = process.env): void {
  if (isLoopbackHost(host)) return;
  const consent = env[PLAINTEXT_NETWORK_SETTING];
  if (consent === PLAINTEXT_NETWORK_CONSENT) return;
  throw new ConfigError(
    `${setting}=${host} listens beyond loopback without mTLS: anyone on the network could call the internal services. ` +
      `Set GRPC_TLS_DIR (mutual TLS), bind ${setting} to 127.0.0.1, or set ${PLAINTEXT_NETWORK_SETTING}=${PLAINTEXT_NETWORK_CONSENT} ` +
      `if the network is encrypted and trusted by other means` +
      (consent === undefined ? '' : ` (${PLAINTEXT_NETWORK_SETTING}=${consent} is not that value)`),
  );
}
