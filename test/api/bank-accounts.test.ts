// Spec §4 "Bank accounts and cash registers", §2 BankAccount, §8 bank account cap.
import { Api } from '../support/api';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;
let base: string;

const IBAN = 'DE89370400440532013000';
const IBAN_2 = 'GB82WEST12345698765432';
const IBAN_3 = 'CZ6508000000192000145399';

beforeAll(async () => {
  system = await startSystem();
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  base = `/api/v1/accounts/${ws.id}/bank_accounts`;
  await system.cli('plan', 'set', '--workspace', String(ws.id), '--cap', 'bank_accounts=100');
});
afterAll(() => system?.stop());

describe('POST /accounts/<account_id>/bank_accounts', () => {
  it('creates a bank account (account_type bank) with a validated IBAN and SWIFT', async () => {
    const res = await api.post(base, { name: 'Main', iban: 'de89 3704 0044 0532 0130 00', swift: 'deutdeff', currency: 'eur' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ account_type: 'bank', name: 'Main', iban: IBAN, swift: 'DEUTDEFF', currency: 'EUR', deleted: null });
  });

  it('accepts an account_number without an IBAN', async () => {
    const res = await api.post(base, { account_number: '19-2000145399', bank_code: '0800' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ iban: null, account_number: '19-2000145399', bank_code: '0800' });
  });

  it.each([
    [{ name: 'Nothing' }, 'missing_account_identifier'],
    [{ iban: 'DE89370400440532013001' }, 'invalid_iban'],
    [{ iban: IBAN_3, swift: 'NOTABIC' }, 'invalid_swift'],
    [{ account_number: '1', currency: 'EURO' }, 'invalid_value'],
    [{ account_number: '1', currency: 'XYZ' }, 'invalid_currency'],
    [{ account_number: '1', account_type: 'cash' }, 'unknown_field'],
  ])('422 for %j (%s)', async (body, code) => {
    const res = await api.post(base, body);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe(code);
  });

  it('an IBAN is unique within the workspace, also under concurrent creates', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => api.post(base, { iban: IBAN_2 })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('iban_taken');
    }
    // Another workspace may hold the same IBAN.
    const other = await createWorkspace(system, 'Other');
    expect((await api.post(`/api/v1/accounts/${other.id}/bank_accounts`, { iban: IBAN_2 }, { token: other.pat })).status).toBe(201);
  });

  it('402 with upgrade_url when the plan cap is reached (both types count, deleted ones do not)', async () => {
    const capped = await createWorkspace(system, 'Capped');
    const capBase = `/api/v1/accounts/${capped.id}/bank_accounts`;
    await system.cli('plan', 'set', '--workspace', String(capped.id), '--cap', 'bank_accounts=2');
    await system.cli('cash-register', 'create', '--workspace', String(capped.id), '--name', 'Till');
    const first = await api.post(capBase, { account_number: '1' }, { token: capped.pat });
    expect(first.status).toBe(201);
    const refused = await api.post(capBase, { account_number: '2' }, { token: capped.pat });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('plan_limit_reached');
    expect(refused.body.error.upgrade_url).toMatch(/^https?:\/\//);
    await api.delete(`${capBase}/${first.body.id}`, { token: capped.pat });
    expect((await api.post(capBase, { account_number: '3' }, { token: capped.pat })).status).toBe(201);
  });
});

describe('Czech/Slovak account numbers in their national form ([prefix-]number/bank code)', () => {
  it.each([
    ['19-2000145399/0800', '19-2000145399', '0800'],
    ['000019-2000145399/0800', '19-2000145399', '0800'],
    ['2600000003/1100', '2600000003', '1100'],
  ])('accepts %s: stored as %s with bank_code %s derived from the suffix', async (typed, number, bankCode) => {
    const res = await api.post(base, { account_number: typed });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ account_number: number, bank_code: bankCode });
    expect((await api.get(`${base}/${res.body.id}`)).body).toMatchObject({ account_number: number, bank_code: bankCode });
  });

  it('accepts an explicit bank_code that agrees with the suffix', async () => {
    const res = await api.post(base, { account_number: '19-2000145399/0800', bank_code: '0800' });
    expect(res.status).toBe(201);
    expect(res.body.bank_code).toBe('0800');
  });

  it.each([
    [{ account_number: '19-2000145398/0800' }, 'invalid_account_number', 'account_number'],
    [{ account_number: '18-2000145399/0800' }, 'invalid_account_number', 'account_number'],
    [{ account_number: '2600000001/1100' }, 'invalid_account_number', 'account_number'],
    [{ account_number: '2000145399/08' }, 'invalid_account_number', 'account_number'],
    [{ account_number: '19-2000145399/0800', bank_code: '0100' }, 'bank_code_mismatch', 'bank_code'],
  ])('422 for %j (%s)', async (body, code, field) => {
    const res = await api.post(base, body);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code, field });
  });

  it('PATCH with a national number sets bank_code from it; a contradicting bank_code is refused and nothing changes', async () => {
    const created = await api.post(base, { account_number: '77', bank_code: 'ABC' });
    const patched = await api.patch(`${base}/${created.body.id}`, { account_number: '2000145399/0800' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ account_number: '2000145399', bank_code: '0800' });
    const contradicted = await api.patch(`${base}/${created.body.id}`, { account_number: '19-2000145399/0800', bank_code: null });
    expect(contradicted.status).toBe(422);
    expect(contradicted.body.error.code).toBe('bank_code_mismatch');
    expect((await api.get(`${base}/${created.body.id}`)).body).toMatchObject({ account_number: '2000145399', bank_code: '0800' });
  });

  it('a later PATCH of bank_code alone cannot drift from a national number; a new number (any form) frees it', async () => {
    const created = await api.post(base, { account_number: '19-2000145399/0800' });
    expect(created.status).toBe(201);
    for (const bank_code of ['0100', null]) {
      const drift = await api.patch(`${base}/${created.body.id}`, { bank_code });
      expect([bank_code, drift.status, drift.body.error?.code]).toEqual([bank_code, 422, 'bank_code_mismatch']);
    }
    expect((await api.patch(`${base}/${created.body.id}`, { bank_code: '0800' })).status).toBe(200);
    const foreign = await api.patch(`${base}/${created.body.id}`, { account_number: '0532013000', bank_code: '37040044' });
    expect(foreign.body).toMatchObject({ account_number: '0532013000', bank_code: '37040044' });
    expect((await api.patch(`${base}/${created.body.id}`, { bank_code: '37040045' })).status).toBe(200);
  });
});

describe('cash registers', () => {
  it('are created by the operator, listed with bank accounts, and unique by name among cash registers', async () => {
    const till = await system.cli('cash-register', 'create', '--workspace', String(ws.id), '--name', 'Front desk', '--currency', 'CZK');
    expect(till.account_type).toBe('cash');
    const dup = await system.cliRaw('cash-register', 'create', '--workspace', String(ws.id), '--name', 'front desk');
    expect(dup.code).not.toBe(0);
    expect(dup.stderr).toContain('name_taken');
    const read = await api.get(`${base}/${till.id}`);
    expect(read.body).toMatchObject({ account_type: 'cash', name: 'Front desk', currency: 'CZK', iban: null });
    // A bank account may share the name.
    expect((await api.post(base, { name: 'Front desk', account_number: '77' })).status).toBe(201);
    // A cash register holds no bank identifiers.
    const bad = await api.patch(`${base}/${till.id}`, { iban: IBAN_3 });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('not_a_bank_account');
  });
});

describe('GET /accounts/<account_id>/bank_accounts', () => {
  it('lists both types, id descending, deleted excluded, paginated', async () => {
    const list = await api.get(`${base}?limit=100`);
    const ids = list.body.data.map((b: { id: number }) => b.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(list.body.data.map((b: { account_type: string }) => b.account_type))).toEqual(new Set(['bank', 'cash']));
    const page = await api.get(`${base}?limit=1`);
    expect(page.body.has_more).toBe(true);
    const next = await api.get(`${base}?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`);
    expect(next.body.data[0].id).toBeLessThan(page.body.data[0].id);
  });
});

describe('PATCH /accounts/<account_id>/bank_accounts/<id>', () => {
  it('updates fields, clears with null, keeps the IBAN-or-number rule and uniqueness', async () => {
    const created = await api.post(base, { iban: IBAN_3, account_number: '19-2000145399', name: 'Old' });
    const renamed = await api.patch(`${base}/${created.body.id}`, { name: 'New', iban: null });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'New', iban: null, account_number: '19-2000145399' });
    const emptied = await api.patch(`${base}/${created.body.id}`, { account_number: null });
    expect(emptied.status).toBe(422);
    expect(emptied.body.error.code).toBe('missing_account_identifier');
    const taken = await api.patch(`${base}/${created.body.id}`, { iban: IBAN });
    expect(taken.status).toBe(422);
    expect(taken.body.error.code).toBe('iban_taken');
    const typed = await api.patch(`${base}/${created.body.id}`, { account_type: 'cash' });
    expect(typed.status).toBe(422);
    expect((await api.patch(`${base}/99999999`, { name: 'x' })).status).toBe(404);
  });
});

describe('DELETE /accounts/<account_id>/bank_accounts/<id>', () => {
  it('soft-deletes: excluded from lists, still readable by id with its deleted timestamp; its IBAN is free again', async () => {
    const iban = 'NL91ABNA0417164300';
    const created = await api.post(base, { iban });
    expect((await api.delete(`${base}/${created.body.id}`)).status).toBe(204);
    const read = await api.get(`${base}/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(Date.parse(read.body.deleted)).not.toBeNaN();
    const list = await api.get(`${base}?limit=100`);
    expect(list.body.data.map((b: { id: number }) => b.id)).not.toContain(created.body.id);
    expect((await api.delete(`${base}/${created.body.id}`)).status).toBe(404);
    expect((await api.patch(`${base}/${created.body.id}`, { name: 'x' })).status).toBe(404);
    expect((await api.post(base, { iban })).status).toBe(201);
  });
});
