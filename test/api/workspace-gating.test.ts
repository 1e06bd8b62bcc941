// Workspace resolution and subscription gating on /accounts/<account_id>/… (spec §5, §7).
import { Api, eventually, onEveryGateway } from '../support/api';
import { createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;

beforeAll(async () => {
  system = await startSystem();
  api = new Api(system.baseUrl);
  ws = await createWorkspace(system);
});
afterAll(() => system?.stop());

const contact = { name: 'Globex', invoice_account: { name: 'Globex Corporation' } };

describe('workspace tokens', () => {
  it('403 account_mismatch when the path names another workspace', async () => {
    const other = await createWorkspace(system, 'Other');
    const token = await tokenFor(system, 'live', ws.id, 'read:contacts');
    const res = await api.get(`/api/v1/accounts/${other.id}/contacts`, { token });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('account_mismatch');
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts`, { token })).status).toBe(200);
  });
});

describe('personal tokens and sessions', () => {
  it('404 (not 403) when the user is not a member of the workspace', async () => {
    const other = await createWorkspace(system, 'Stranger Inc');
    const res = await api.get(`/api/v1/accounts/${other.id}/contacts`, { token: ws.pat });
    expect(res.status).toBe(404);
    expect((await api.get('/api/v1/accounts/987654321/contacts', { token: ws.pat })).status).toBe(404);
  });
});

describe('test mode (sandbox)', () => {
  it('data created with test tokens is invisible to live tokens and vice versa', async () => {
    const test = await tokenFor(system, 'test', ws.id, 'write:contacts');
    const live = await tokenFor(system, 'live', ws.id, 'write:contacts');
    const inSandbox = await api.post(`/api/v1/accounts/${ws.id}/contacts`, { ...contact, name: 'Sandbox Co' }, { token: test });
    const inLive = await api.post(`/api/v1/accounts/${ws.id}/contacts`, { ...contact, name: 'Live Co' }, { token: live });
    expect(inSandbox.status).toBe(201);
    expect(inLive.status).toBe(201);

    const testList = await api.get(`/api/v1/accounts/${ws.id}/contacts`, { token: test });
    expect(testList.body.data.map((c: { name: string }) => c.name)).toEqual(['Sandbox Co']);
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts/${inLive.body.id}`, { token: test })).status).toBe(404);
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts/${inSandbox.body.id}`, { token: live })).status).toBe(404);
    // Personal tokens act on live data.
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts/${inSandbox.body.id}`, { token: ws.pat })).status).toBe(404);
    // A sandbox legal entity cannot be referenced from live data.
    const crossed = await api.post(`/api/v1/accounts/${ws.id}/contacts`, { invoice_account_id: inSandbox.body.invoice_account_id }, { token: live });
    expect(crossed.status).toBe(422);
  });
});

describe('subscription gating', () => {
  it('402 with upgrade_url when the workspace has no active subscription; 200 again when reactivated', async () => {
    const gated = await createWorkspace(system, 'Lapsed Ltd');
    expect((await api.get(`/api/v1/accounts/${gated.id}/contacts`, { token: gated.pat })).status).toBe(200);
    await system.cli('plan', 'set', '--workspace', String(gated.id), '--active', 'false');
    await eventually(async () => {
      const res = await api.get(`/api/v1/accounts/${gated.id}/contacts`, { token: gated.pat });
      expect(res.status).toBe(402);
      expect(res.body.error.code).toBe('subscription_inactive');
      expect(new URL(res.body.error.upgrade_url).protocol).toMatch(/^https?:$/);
    });
    // Not account-scoped: the user's workspace list still works.
    expect((await api.get('/api/v1/user/accounts', { token: gated.pat })).status).toBe(200);
    await system.cli('plan', 'set', '--workspace', String(gated.id), '--active', 'true');
    await eventually(async () => expect((await api.get(`/api/v1/accounts/${gated.id}/contacts`, { token: gated.pat })).status).toBe(200));
  });
});

describe('suspended workspace', () => {
  it('403 on every mutation, reads still work', async () => {
    const suspended = await createWorkspace(system, 'Frozen Ltd');
    const created = await api.post(`/api/v1/accounts/${suspended.id}/contacts`, contact, { token: suspended.pat });
    const bank = await api.post(`/api/v1/accounts/${suspended.id}/bank_accounts`, { account_number: '123456789' }, { token: suspended.pat });
    await system.cli('workspace', 'suspend', '--workspace', String(suspended.id));
    const base = `/api/v1/accounts/${suspended.id}`;
    // Until every gateway has applied the change (each evicts its cache on the bus event on its own).
    await eventually(() =>
      onEveryGateway(system.baseUrls, api.as(suspended.pat), async (gateway) => {
        const res = await gateway.post(`${base}/contacts`, contact);
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('workspace_suspended');
      }),
    );
    for (const res of [
      await api.patch(`${base}/contacts/${created.body.id}`, { name: 'x' }, { token: suspended.pat }),
      await api.delete(`${base}/contacts/${created.body.id}`, { token: suspended.pat }),
      await api.post(`${base}/bank_accounts`, { account_number: '1' }, { token: suspended.pat }),
      await api.patch(`${base}/bank_accounts/${bank.body.id}`, { name: 'x' }, { token: suspended.pat }),
      await api.delete(`${base}/bank_accounts/${bank.body.id}`, { token: suspended.pat }),
    ]) {
      expect(res.status).toBe(403);
    }
    expect((await api.get(`${base}/contacts/${created.body.id}`, { token: suspended.pat })).status).toBe(200);
    expect((await api.get(`${base}/bank_accounts`, { token: suspended.pat })).status).toBe(200);
    await system.cli('workspace', 'unsuspend', '--workspace', String(suspended.id));
    await eventually(async () => expect((await api.post(`${base}/contacts`, contact, { token: suspended.pat })).status).toBe(201));
  });
});

describe('scopes on account-scoped routes', () => {
  it('read allows GET only; write allows create/update/delete', async () => {
    const read = await tokenFor(system, 'live', ws.id, 'read:contacts,read:bank_accounts');
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts`, { token: read })).status).toBe(200);
    const denied = await api.post(`/api/v1/accounts/${ws.id}/contacts`, contact, { token: read });
    expect(denied.status).toBe(403);
    expect(denied.body.error.required_scope).toBe('write:contacts');
    expect((await api.post(`/api/v1/accounts/${ws.id}/bank_accounts`, { account_number: '42' }, { token: read })).status).toBe(403);
    const wrongResource = await tokenFor(system, 'live', ws.id, 'manage:invoices');
    expect((await api.get(`/api/v1/accounts/${ws.id}/contacts`, { token: wrongResource })).status).toBe(403);
  });
});
