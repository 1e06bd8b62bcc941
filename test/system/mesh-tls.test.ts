// The internal network under mTLS (docs/architecture.md "Internal network"): every service process
// and the gateway run with GRPC_TLS_DIR; the whole API works through the real peer graph (gateway →
// every service, documents → identity and contacts, rendering → documents and identity, the CLI on
// the admin ports), and a service refuses callers without a certificate, with a certificate of
// another CA, and authenticated callers it does not expect. Distributed mode, real engines.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { IdentityAdminServiceService, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { loadMeshTls } from '../../services/shared/grpc/mesh';
import { connect } from '../../services/shared/grpc/typed';
import { createTestCa, TestCa } from '../support/certs';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { serviceModules } from '../../deploy/modules';
import { startSystem, System } from '../support/system';

let ca: TestCa;
let system: System;
let ws: DocsWorkspace;

/** Every process's certificate identity: each service, the gateway and the admin CLI. */
const IDENTITIES = [...serviceModules.map((m) => m.name), 'gateway', 'admin'];

beforeAll(async () => {
  ca = createTestCa();
  system = await startSystem({ mode: 'distributed', tlsDirs: Object.fromEntries(IDENTITIES.map((id) => [id, ca.dir(id)])) });
  ws = await docsWorkspace(system);
}, 300_000);

afterAll(async () => {
  await system?.stop();
});

const tenant = () => ({ account_id: ws.id, livemode: true });
const contactsAs = (tlsDir: string) =>
  connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', system.grpcAddresses().services.contacts, loadMeshTls(tlsDir));

/** A status, whatever the call's outcome. */
async function statusOf(call: Promise<unknown>): Promise<grpc.status> {
  return call.then(
    () => grpc.status.OK,
    (err: { status: grpc.status }) => err.status,
  );
}

describe('the system under mTLS', () => {
  it('serves the API through every internal hop: contacts, invoices (documents → identity, contacts), the PDF (rendering → documents, identity)', async () => {
    const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
    expect(created.status).toBe(201);
    const issued = await ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`, {});
    expect(issued.status).toBe(200);
    const pdf = await ws.api.get(`${ws.base}/invoices/${created.body.id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
  });

  it('the admin CLI reaches the admin ports with its own certificate (identity admin)', async () => {
    const settings = await system.cli('workspace', 'document-settings', '--workspace', String(ws.id), '--locale', 'en');
    expect(settings.locale).toBe('en');
  });
});

describe('a service under mTLS', () => {
  it('answers a caller with a valid certificate of an expected peer (the gateway)', async () => {
    const client = contactsAs(ca.dir('gateway'));
    try {
      expect((await client.listContacts({ tenant: tenant(), query: '' })).contacts.length).toBeGreaterThan(0);
    } finally {
      client.close();
    }
  });

  it('refuses a caller without a client certificate (the TLS handshake fails: UNAVAILABLE)', async () => {
    const ca_crt = readFileSync(path.join(ca.dir('gateway'), 'ca.crt'));
    const Client = grpc.makeGenericClientConstructor(ContactsServiceService, 'invoicing.contacts.v1.ContactsService');
    const client = new Client(system.grpcAddresses().services.contacts, grpc.credentials.createSsl(ca_crt), {
      'grpc.ssl_target_name_override': 'contacts',
    }) as unknown as grpc.Client & { listContacts: Function };
    try {
      const code = await new Promise<grpc.status>((resolve) =>
        client.listContacts({ tenant: tenant(), query: '' }, { deadline: Date.now() + 5000 }, (err: grpc.ServiceError | null) =>
          resolve(err ? err.code : grpc.status.OK),
        ),
      );
      expect(code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      client.close();
    }
  });

  it('refuses a plaintext caller', async () => {
    const client = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', system.grpcAddresses().services.contacts, null);
    try {
      expect(await statusOf(client.listContacts({ tenant: tenant(), query: '' }, { timeoutMs: 5000 }))).toBe(grpc.status.UNAVAILABLE);
    } finally {
      client.close();
    }
  });

  it('refuses a certificate of another CA, even one naming an expected peer', async () => {
    const client = contactsAs(createTestCa('impostor-ca').dir('gateway'));
    try {
      expect(await statusOf(client.listContacts({ tenant: tenant(), query: '' }, { timeoutMs: 5000 }))).toBe(grpc.status.UNAVAILABLE);
    } finally {
      client.close();
    }
  });

  it('answers PERMISSION_DENIED to an authenticated caller it does not expect: rendering may not send contacts a tenant', async () => {
    const client = contactsAs(ca.dir('rendering'));
    try {
      expect(await statusOf(client.listContacts({ tenant: tenant(), query: '' }))).toBe(grpc.status.PERMISSION_DENIED);
    } finally {
      client.close();
    }
  });

  it('admin services: UNIMPLEMENTED on the service port, PERMISSION_DENIED on the admin port for anyone but admin', async () => {
    const { services, admin } = system.grpcAddresses();
    const gatewayTls = loadMeshTls(ca.dir('gateway'));
    const onServicePort = connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', services.identity, gatewayTls);
    const onAdminPort = connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', admin.identity, gatewayTls);
    const asAdmin = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', services.identity, loadMeshTls(ca.dir('admin')));
    const request = { email: 'mallory@example.com', password: 'correct horse battery', name: '' };
    try {
      expect(await statusOf(onServicePort.createUser(request))).toBe(grpc.status.UNIMPLEMENTED);
      expect(await statusOf(onAdminPort.createUser(request))).toBe(grpc.status.PERMISSION_DENIED);
      // The admin identity is for the admin surface (and the CLI's contacts commands), not the public services.
      expect(await statusOf(asAdmin.getUser({ user_id: 1 }))).toBe(grpc.status.PERMISSION_DENIED);
    } finally {
      [onServicePort, onAdminPort, asAdmin].forEach((c) => c.close());
    }
  });

  it('a client accepts only the service it asked for: contacts cannot answer for identity', async () => {
    const misdirected = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', system.grpcAddresses().services.contacts, loadMeshTls(ca.dir('gateway')));
    try {
      expect(await statusOf(misdirected.getUser({ user_id: 1 }, { timeoutMs: 5000 }))).toBe(grpc.status.UNAVAILABLE);
    } finally {
      misdirected.close();
    }
  });
});
