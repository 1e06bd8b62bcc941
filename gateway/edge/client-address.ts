// The client address that anonymous and invalid-credential requests are limited by (docs/edge.md,
// "Rate limits"). By default it is the socket's peer and no header is believed: anyone can send an
// X-Forwarded-For. Behind proxies, TRUST_PROXY lists them (addresses, CIDRs, `loopback`, `private`);
// X-Forwarded-For is then walked from the right — each hop appends the address it received the
// request from — past trusted hops, and the first untrusted address is the client.
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { ConfigError } from '../../services/shared/config';

export interface TrustedProxies {
  /** The configuration as given, for logs. */
  readonly spec: string;
  trusts(address: string): boolean;
}

const NAMED: Record<string, Array<[string, number]>> = {
  loopback: [['127.0.0.0', 8], ['::1', 128]],
  private: [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['fc00::', 7]],
};

const family = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** Parses TRUST_PROXY; '' (the default) trusts nobody. Fails fast on anything it does not understand. */
export function parseTrustProxy(spec: string): TrustedProxies {
  const list = new BlockList();
  let empty = true;
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    empty = false;
    const named = NAMED[entry.toLowerCase()];
    if (named) {
      for (const [net, prefix] of named) list.addSubnet(net, prefix, family(net));
      continue;
    }
    const [address, prefixText, extra] = entry.split('/');
    const version = isIP(address);
    const max = version === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!version || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      throw new ConfigError(`TRUST_PROXY: "${entry}" is not an IP address, a CIDR (address/prefix), "loopback" or "private"`);
    }
    list.addSubnet(address, prefix, family(address));
  }
  return { spec, trusts: (address) => !empty && isIP(address) !== 0 && list.check(address, family(address)) };
}

/** An address as written in X-Forwarded-For or by the socket, without brackets, port or IPv4-in-IPv6 form; '' if none. */
export function normalizeAddress(raw: string | undefined): string {
  let address = (raw ?? '').trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  if (/^::ffff:\d{1,3}(\.\d{1,3}){3}$/i.test(address)) address = address.slice(7);
  return isIP(address) ? address.toLowerCase() : '';
}

/** The client's address: the peer, or — when the peer is a trusted proxy — the first untrusted hop of X-Forwarded-For. */
export function clientAddress(req: IncomingMessage, trusted: TrustedProxies): string {
  let client = normalizeAddress(req.socket.remoteAddress) || 'unknown';
  if (!trusted.trusts(client)) return client;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  for (let i = hops.length - 1; i >= 0 && trusted.trusts(client); i--) {
    const hop = normalizeAddress(hops[i]);
    // A hop that is not an address was not written by a trusted proxy: stop at the last one that was.
    if (!hop) break;
    client = hop;
  }
  return client;
}
