// Spec §2 Account, §4 "Workspaces of the current user", §5 Authentication, §7 Errors, §9 Versioning.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, SignJWT } from 'jose';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { DocumentsAdminServiceService } from '../../gen/invoicing/documents/v1/documents';
import { IdentityAdminServiceService } from '../../gen/invoicing/identity/v1/identity';
import { mintToken } from '../../services/shared/credentials';
import { connect } from '../../services/shared/grpc/typed';
import { Api, eventually } from '../support/api';
import { createUser, createWorkspace, tokenFor, uniqueEmail, Workspace } from '../support/fixtures';
import { currentMode, startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;

// Secrets given explicitly (both modes), so the tests can forge session tokens with the real key.
const secrets = {
  JWT_SECRET: randomBytes(32).toString('base64url'),
  CURSOR_SECRET: randomBytes(32).toString('base64url'),
  URL_SECRET: randomBytes(32).toString('base64url'),
};
const jwtKey = new TextEncoder().encode(secrets.JWT_SECRET);

beforeAll(async () => {
  system = await startSystem({ env: secrets });
  api = new Api(system.baseUrl);
  ws = await createWorkspace(system, 'ACME s.r.o.');
});
afterAll(() => system?.stop());

const signIn = async (email: string, password = 'correct-horse') => (await api.post('/api/v1/auth/sign_in', { email, password }, { token: null })).body.token as string;

describe('every response', () => {
  it('carries X-Request-Id, echoing a well-formed inbound one', async () => {
    const res = await api.get('/api/v1/user', { token: ws.pat, headers: { 'x-request-id': 'client-req-12345' } });
    expect(res.headers.get('x-request-id')).toBe('client-req-12345');
    const generated = await api.get('/api/v1/user', { token: null });
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(generated.body.error.request_id).toBe(generated.headers.get('x-request-id'));
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await api.get('/api/v1/nothing/here', { token: ws.pat });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('route_not_found');
  });
});

describe('health, readiness and the API description', () => {
  it('GET /healthz and /readyz: the gateway itself is alive and ready', async () => {
    expect((await fetch(`${system.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${system.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('serves the OpenAPI 3.1 document, version 1.0.0, and a reference page', async () => {
    const doc = (await (await fetch(`${system.baseUrl}/api/v1/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.paths['/user/accounts'].get).toBeDefined();
    const page = await fetch(`${system.baseUrl}/docs`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('/api/v1/openapi.json');
  });
});

describe('admin services: on their own port, never on the service port (internal network)', () => {
  it('the identity service port answers UNIMPLEMENTED for IdentityAdminService; its admin port serves it', async () => {
    const { services, admin } = system.grpcAddresses();
    const viaServicePort = connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', services.identity);
    const viaAdminPort = connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', admin.identity);
    try {
      const email = uniqueEmail();
      await expect(viaServicePort.createUser({ email, password: 'correct horse battery', name: '' })).rejects.toMatchObject({
        status: GrpcStatus.UNIMPLEMENTED,
      });
      const { user } = await viaAdminPort.createUser({ email, password: 'correct horse battery', name: '' });
      expect(user?.email).toBe(email);
    } finally {
      viaServicePort.close();
      viaAdminPort.close();
    }
  });

  it('the documents service port answers UNIMPLEMENTED for DocumentsAdminService; its admin port serves it', async () => {
    const { services, admin } = system.grpcAddresses();
    const viaServicePort = connect(DocumentsAdminServiceService, 'invoicing.documents.v1.DocumentsAdminService', services.documents);
    const viaAdminPort = connect(DocumentsAdminServiceService, 'invoicing.documents.v1.DocumentsAdminService', admin.documents);
    try {
      await expect(viaServicePort.getDocumentSettings({ account_id: ws.id })).rejects.toMatchObject({ status: GrpcStatus.UNIMPLEMENTED });
      expect((await viaAdminPort.getDocumentSettings({ account_id: ws.id })).settings).toBeDefined();
    } finally {
      viaServicePort.close();
      viaAdminPort.close();
    }
  });
});

describe('authentication (§5)', () => {
  it('401 without a credential', async () => {
    const res = await api.get('/api/v1/user/accounts', { token: null });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('missing_credentials');
  });

  it('401 for a token with a wrong checksum, before any lookup', async () => {
    const broken = ws.pat.slice(0, -1) + (ws.pat.endsWith('A') ? 'B' : 'A');
    const res = await api.get('/api/v1/user/accounts', { token: broken });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_credentials');
  });

  it('401 for a well-formed token that was never issued, and for a JWT signed by someone else', async () => {
    const neverIssued = mintToken('pat', randomBytes(32));
    const res = await api.get('/api/v1/user/accounts', { token: neverIssued });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_credentials');
    const foreign = await new SignJWT({ sid: 1 }).setProtectedHeader({ alg: 'HS256' }).setSubject('1').setIssuer('invoicing')
      .setExpirationTime('1h').sign(new TextEncoder().encode('another-secret-entirely-0123456789'));
    expect((await api.get('/api/v1/user/accounts', { token: foreign })).status).toBe(401);
  });

  it('401 once a key is revoked', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'read:accounts');
    expect((await api.get('/api/v1/user/accounts', { token })).status).toBe(200);
    await system.cli('token', 'revoke', '--token', token);
    await eventually(async () => {
      const res = await api.get('/api/v1/user/accounts', { token });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('revoked_credentials');
    });
  });

  it('the plaintext token is shown once and only a hash is stored', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'read:accounts');
    expect(token).toMatch(/^inv_pat_[0-9A-Za-z]{38}$/);
    if (system.mode === 'embedded') {
      const db = readFileSync(path.join(system.cliEnv.DATA_DIR, 'invoicing.db'));
      expect(db.includes(Buffer.from(token))).toBe(false);
    }
  });
});

describe('POST /auth/sign_in and /auth/sign_out', () => {
  it('signs in with e-mail and password and the JWT works as a credential', async () => {
    const res = await api.post('/api/v1/auth/sign_in', { email: ws.ownerEmail, password: 'correct-horse' }, { token: null });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    const me = await api.get('/api/v1/user', { token: res.body.token });
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(ws.ownerEmail);
    expect(me.body.credential.type).toBe('session');
  });

  it('401 for a wrong password or an unknown e-mail', async () => {
    for (const body of [{ email: ws.ownerEmail, password: 'wrong-password' }, { email: uniqueEmail(), password: 'correct-horse' }]) {
      const res = await api.post('/api/v1/auth/sign_in', body, { token: null });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_credentials');
    }
  });

  it('400 for malformed JSON and 422 for a missing or mistyped field', async () => {
    const malformed = await api.request('POST', '/api/v1/auth/sign_in', { token: null, rawBody: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('malformed_json');
    const missing = await api.post('/api/v1/auth/sign_in', { email: ws.ownerEmail }, { token: null });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatchObject({ code: 'missing_field', field: 'password' });
    const mistyped = await api.post('/api/v1/auth/sign_in', { email: 42, password: 'x' }, { token: null });
    expect(mistyped.status).toBe(422);
    expect(mistyped.body.error).toMatchObject({ code: 'invalid_type', field: 'email' });
  });

  it('sign_out puts the session on the deny list, effective at once on the gateway that answered it', async () => {
    const token = await signIn(ws.ownerEmail);
    const gateway = new Api(system.baseUrls[0]); // one gateway, also in cluster mode (the others: test/system/sign-out-gateways.test.ts)
    expect((await gateway.get('/api/v1/user/accounts', { token })).status).toBe(200); // cached by the gateway
    expect((await gateway.post('/api/v1/auth/sign_out', undefined, { token })).status).toBe(204);
    // No waiting for the identity event: the gateway dropped the session from its cache before answering.
    const res = await gateway.get('/api/v1/user/accounts', { token });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('revoked_credentials');
  });

  it('sign_out with an API key is refused (422), the key keeps working', async () => {
    const res = await api.post('/api/v1/auth/sign_out', undefined, { token: ws.pat });
    expect(res.status).toBe(422);
    expect((await api.get('/api/v1/user', { token: ws.pat })).status).toBe(200);
  });

  it('401 for an expired session', async () => {
    const expired = await new SignJWT({ sid: 1 }).setProtectedHeader({ alg: 'HS256' }).setSubject('1').setIssuer('invoicing')
      .setAudience('invoicing-api').setExpirationTime(Math.floor(Date.now() / 1000) - 60).sign(jwtKey);
    const res = await api.get('/api/v1/user', { token: expired });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('expired_credentials');
  });
});

describe('session tokens are bound to this API (aud)', () => {
  it('a session token carries aud "invoicing-api"; the same session signed without aud or for another audience → 401 invalid_credentials', async () => {
    const token = await signIn(ws.ownerEmail);
    const claims = decodeJwt(token);
    expect(claims.aud).toBe('invoicing-api');
    expect((await api.get('/api/v1/user', { token })).status).toBe(200);
    const resign = (audience?: string) => {
      const jwt = new SignJWT({ sid: claims.sid }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(claims.sub!)
        .setIssuer('invoicing').setIssuedAt().setExpirationTime(claims.exp!);
      return (audience ? jwt.setAudience(audience) : jwt).sign(jwtKey);
    };
    // Control: the very same claims with the right audience are accepted, so only aud decides below.
    expect((await api.get('/api/v1/user', { token: await resign('invoicing-api') })).status).toBe(200);
    for (const forged of [await resign(), await resign('invoicing-admin')]) {
      const res = await api.get('/api/v1/user', { token: forged });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_credentials');
    }
  });
});

describe('signing secrets are at least 32 bytes', () => {
  it.each(['JWT_SECRET', 'CURSOR_SECRET'])('the system refuses to start with a %s of 31 bytes, naming it', async (name) => {
    const weak = { ...secrets, [name]: 'x'.repeat(31) };
    await expect(startSystem({ env: weak })).rejects.toThrow(new RegExp(`${name} must be at least 32 bytes`));
  });

  // URL_SECRET signs only the file-system blob store's URLs: a process reads (and checks) it only there
  // (docs/operations.md "Secrets per workload"). Distributed processes on MinIO are never given it.
  it('URL_SECRET is checked where it is read: embedded mode refuses one of 31 bytes; distributed processes on MinIO do not read it', async () => {
    const weak = { ...secrets, URL_SECRET: 'x'.repeat(31) };
    if (currentMode() === 'embedded') {
      await expect(startSystem({ env: weak })).rejects.toThrow(/URL_SECRET must be at least 32 bytes/);
      return;
    }
    const started = await startSystem({ env: weak });
    try {
      expect((await fetch(`${started.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await started.stop();
    }
  });
});

describe('scopes (§5)', () => {
  it('403 when the credential lacks the scope; manage implies write implies read', async () => {
    const none = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    const denied = await api.get('/api/v1/user/accounts', { token: none });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'read:accounts' });

    const read = await tokenFor(system, 'pat', ws.ownerEmail, 'read:accounts');
    expect((await api.get('/api/v1/user/accounts', { token: read })).status).toBe(200);
    expect((await api.patch(`/api/v1/user/accounts/${ws.id}/set_default`, undefined, { token: read })).status).toBe(403);

    const manage = await tokenFor(system, 'pat', ws.ownerEmail, 'manage:accounts');
    expect((await api.get('/api/v1/user/accounts', { token: manage })).status).toBe(200);
    expect((await api.patch(`/api/v1/user/accounts/${ws.id}/set_default`, undefined, { token: manage })).status).toBe(200);
  });

  it('refuses unknown scopes when a key is created', async () => {
    const res = await system.cliRaw('token', 'create', '--kind', 'pat', '--user', ws.ownerEmail, '--scopes', 'read:everything');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('invalid_scope');
  });
});

describe('GET /user', () => {
  it('tells who the credential is', async () => {
    const res = await api.get('/api/v1/user', { token: ws.pat });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(ws.ownerEmail);
    expect(res.body.credential).toMatchObject({ type: 'personal_access_token', account_id: null, livemode: true });
  });

  it('a workspace token has no user', async () => {
    const token = await tokenFor(system, 'test', ws.id, 'read:accounts');
    const res = await api.get('/api/v1/user', { token });
    expect(res.body.user).toBeNull();
    expect(res.body.credential).toMatchObject({ type: 'workspace_token', account_id: ws.id, livemode: false, scopes: ['read:accounts'] });
  });
});

describe('GET /user/accounts', () => {
  it('returns a plain array of every workspace of the user with all Account fields, exactly one default', async () => {
    const second = await system.cli('workspace', 'create', '--owner', ws.ownerEmail);
    const res = await api.get('/api/v1/user/accounts', { token: ws.pat });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((a: { id: number }) => a.id).sort()).toEqual([ws.id, second.id].sort());
    expect(res.body.filter((a: { default: boolean }) => a.default)).toHaveLength(1);
    const acme = res.body.find((a: { id: number }) => a.id === ws.id);
    expect(acme.name).toBe('ACME s.r.o.');
    expect(Object.keys(acme).sort()).toEqual(
      ['accounting_type', 'created_at', 'default', 'id', 'legal_identity', 'logo_url', 'name', 'onboarding_step', 'updated_at', 'vat_registration_alert'].sort(),
    );
  });

  it("names a personal workspace after its owner and a company after its legal entity", async () => {
    const owner = await createUser(system, uniqueEmail('jana'), 'Jana Nováková');
    const personal = await system.cli('workspace', 'create', '--owner', owner.email);
    const token = await tokenFor(system, 'pat', owner.email, 'read:accounts');
    const res = await api.get(`/api/v1/user/accounts/${personal.id}`, { token });
    expect(res.body.name).toBe('Jana Nováková');
    expect(res.body.legal_identity).toBeNull();

    await system.cli('workspace', 'set-legal-identity', '--workspace', String(ws.id), '--data', JSON.stringify({
      name: 'ACME Holding a.s.', vat_id: 'CZ12345678', registration_id: '12345678', legal_form_id: 112,
      address: { street: 'Hlavní 1', municipality: 'Praha', postal_code: '11000', country_alpha2: 'cz' },
      postal_address: { name: 'ACME', street: 'P.O. Box 7', municipality: 'Praha', postal_code: '11001', country_alpha2: 'cz' },
    }));
    const acme = await api.get(`/api/v1/user/accounts/${ws.id}`, { token: ws.pat });
    expect(acme.body.name).toBe('ACME Holding a.s.');
    expect(acme.body.legal_identity).toMatchObject({ vat_id: 'CZ12345678', legal_form_id: 112, address: { street: 'Hlavní 1', country_alpha2: 'cz' }, postal_address: { street: 'P.O. Box 7' } });
    // Fields the legal identity was set without are null, not "".
    expect(acme.body.legal_identity).toMatchObject({ tax_id: null, email: null, phone_number: null, web: null, vat_payer_type: null, address: { name: null, contact: null } });
    expect(acme.body.onboarding_step).toBeNull();
    expect(acme.body.accounting_type).toBe('simple');

    // An address given without any part is absent: null, not an object of nulls.
    await system.cli('workspace', 'set-legal-identity', '--workspace', String(ws.id), '--data', JSON.stringify({
      name: 'ACME Holding a.s.', address: { country_alpha2: 'cz' }, postal_address: { street: '' },
    }));
    const blank = await api.get(`/api/v1/user/accounts/${ws.id}`, { token: ws.pat });
    expect(blank.body.legal_identity).toMatchObject({ address: { country_alpha2: 'cz', street: null }, postal_address: null });
  });

  it('a workspace token sees its own workspace only', async () => {
    const token = await tokenFor(system, 'live', ws.id, 'read:accounts');
    const res = await api.get('/api/v1/user/accounts', { token });
    expect(res.body.map((a: { id: number }) => a.id)).toEqual([ws.id]);
  });
});

describe('GET /user/accounts/<account_id>', () => {
  it('404 (not 403) when the user is not a member, does not exist, or the id is not a number', async () => {
    const other = await createWorkspace(system, 'Other Ltd');
    for (const id of [String(other.id), '999999999', 'abc']) {
      const res = await api.get(`/api/v1/user/accounts/${id}`, { token: ws.pat });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
  });

  it('works for members added later', async () => {
    const other = await createWorkspace(system, 'Shared Ltd');
    await system.cli('workspace', 'add-member', '--workspace', String(other.id), '--email', ws.ownerEmail);
    await eventually(async () => expect((await api.get(`/api/v1/user/accounts/${other.id}`, { token: ws.pat })).status).toBe(200));
  });
});

describe('PATCH /user/accounts/<account_id>/set_default', () => {
  it('is idempotent, keeps exactly one default, and applies to the user globally', async () => {
    const owner = await createUser(system);
    const a = await system.cli('workspace', 'create', '--owner', owner.email, '--name', 'A');
    const b = await system.cli('workspace', 'create', '--owner', owner.email, '--name', 'B');
    const pat = await tokenFor(system, 'pat', owner.email, 'write:accounts');
    for (let i = 0; i < 2; i++) {
      const res = await api.patch(`/api/v1/user/accounts/${b.id}/set_default`, undefined, { token: pat });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: b.id, default: true });
    }
    const session = await signIn(owner.email);
    const list = await api.get('/api/v1/user/accounts', { token: session });
    expect(list.body.filter((x: { default: boolean }) => x.default).map((x: { id: number }) => x.id)).toEqual([b.id]);
    expect(list.body.find((x: { id: number }) => x.id === a.id).default).toBe(false);
  });

  it('404 for non-members; 403 for workspace tokens', async () => {
    const other = await createWorkspace(system, 'Not Mine');
    expect((await api.patch(`/api/v1/user/accounts/${other.id}/set_default`, undefined, { token: ws.pat })).status).toBe(404);
    const token = await tokenFor(system, 'live', ws.id, 'manage:accounts');
    const res = await api.patch(`/api/v1/user/accounts/${ws.id}/set_default`, undefined, { token });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('user_credential_required');
  });
});

describe('Account.logo_url', () => {
  it('is a signed, time-limited link to the logo, or null', async () => {
    const owner = await createWorkspace(system, 'Logo Ltd');
    const before = await api.get(`/api/v1/user/accounts/${owner.id}`, { token: owner.pat });
    expect(before.body.logo_url).toBeNull();

    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
    const file = path.join(os.tmpdir(), `logo-${randomBytes(4).toString('hex')}.png`);
    writeFileSync(file, png);
    await system.cli('workspace', 'set-logo', '--workspace', String(owner.id), '--file', file);
    const after = await api.get(`/api/v1/user/accounts/${owner.id}`, { token: owner.pat });
    const url = new URL(after.body.logo_url);
    expect(url.search).toMatch(/signature|X-Amz-Signature/i);
    const image = await fetch(url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer()).equals(png)).toBe(true);
    // Tampering with the link breaks it.
    url.searchParams.set(url.searchParams.has('signature') ? 'signature' : 'X-Amz-Signature', 'forged');
    expect((await fetch(url)).status).toBeGreaterThanOrEqual(400);

    writeFileSync(file, 'not an image at all, just text');
    const refused = await system.cliRaw('workspace', 'set-logo', '--workspace', String(owner.id), '--file', file);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unsupported_media_type');

    await system.cli('workspace', 'set-logo', '--workspace', String(owner.id), '--remove');
    expect((await api.get(`/api/v1/user/accounts/${owner.id}`, { token: owner.pat })).body.logo_url).toBeNull();
  });
});

describe('persistence', () => {
  it('keeps users, workspaces and tokens across a restart', async () => {
    const owner = await createUser(system);
    const created = await system.cli('workspace', 'create', '--owner', owner.email, '--name', 'Durable Ltd');
    const token = await tokenFor(system, 'pat', owner.email, 'read:accounts');
    await system.restart();
    api = new Api(system.baseUrl);
    const res = await api.get(`/api/v1/user/accounts/${created.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Durable Ltd');
  });
});

describe('admin CLI', () => {
  it('prints one JSON object and exits non-zero with a message on failure', async () => {
    const ok = await system.cliRaw('user', 'create', '--email', uniqueEmail(), '--password', 'long-enough');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toHaveProperty('id');
    const dup = await system.cliRaw('user', 'create', '--email', ws.ownerEmail, '--password', 'long-enough');
    expect(dup.code).not.toBe(0);
    expect(dup.stderr).toContain('email_taken');
    const badId = await system.cliRaw('workspace', 'suspend', '--workspace', 'x');
    expect(badId.code).not.toBe(0);
    expect(badId.stderr).toContain('positive integer');
  });
});
