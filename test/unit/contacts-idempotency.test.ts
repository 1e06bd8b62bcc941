// Contacts and bank accounts created under an Idempotency-Key (services/shared/idempotency.ts): a retry
// answers the record the first attempt created — also at the plan's cap, where a second create would
// be refused — and the key with another request is a conflict.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { BankAccounts } from '../../services/contacts/domain/bank-accounts';
import { Contacts } from '../../services/contacts/domain/contacts';
import { LegalEntities } from '../../services/contacts/domain/legal-entities';
import { DomainError } from '../../services/shared/errors';
import { IdempotencyToken } from '../../services/shared/idempotency';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';

const tenant: Tenant = { account_id: 9, livemode: true };
const token = (fingerprint = 'fp'): IdempotencyToken => ({ key: randomBytes(16).toString('base64url'), fingerprint });

function service() {
  const store = contactsStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'contacts-unit-')), 'test.db')));
  const entities = new LegalEntities(store);
  return { store, contacts: new Contacts(store, entities), bankAccounts: new BankAccounts(store) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'no error',
    (err: unknown) => (err instanceof DomainError ? err.code : String(err)),
  );
}

describe('POST contacts under an Idempotency-Key', () => {
  it('a retry answers the first contact (with its legal entity); one contact and one legal entity exist', async () => {
    const s = service();
    const under = token();
    const input = { name: 'Customer', invoice_account: { name: 'Customer a.s.' } };
    const first = await s.contacts.create(tenant, input, under);
    const retry = await s.contacts.create(tenant, input, under);
    expect(retry.contact.id).toBe(first.contact.id);
    expect(retry.entity.id).toBe(first.entity.id);
    expect(await s.store.contacts.count({ account_id: 9, livemode: true })).toBe(1);
    expect(await s.store.legalEntities.count({ account_id: 9, livemode: true })).toBe(1);
    expect(await codeOf(s.contacts.create(tenant, input, { ...under, fingerprint: 'other' }))).toBe('idempotency_key_conflict');
  });
});

describe('POST bank_accounts under an Idempotency-Key', () => {
  it('a retry answers the first account, even when the cap is now reached; a new key is refused at the cap', async () => {
    const s = service();
    const under = token();
    const input = { name: 'Main', iban: 'CZ6508000000192000145399' };
    const first = await s.bankAccounts.createBankAccount(tenant, input, 1, under);
    const retry = await s.bankAccounts.createBankAccount(tenant, input, 1, under);
    expect(retry.id).toBe(first.id);
    expect(await codeOf(s.bankAccounts.createBankAccount(tenant, { name: 'Other', iban: 'DE89370400440532013000' }, 1, token()))).toBe('plan_limit_reached');
  });

  it('a retry is not refused as iban_taken by its own first attempt', async () => {
    const s = service();
    const under = token();
    const input = { name: 'Main', iban: 'CZ6508000000192000145399' };
    const first = await s.bankAccounts.createBankAccount(tenant, input, undefined, under);
    expect((await s.bankAccounts.createBankAccount(tenant, input, undefined, under)).id).toBe(first.id);
    expect(await codeOf(s.bankAccounts.createBankAccount(tenant, input, undefined, token()))).toBe('iban_taken');
  });
});
