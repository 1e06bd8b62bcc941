// A documents domain over a real SQLite store and a fake directory, for the documents unit tests.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { documentsStore } from '../../services/documents/adapters/documents-store';
import { DocumentsContext, DocumentsDeps } from '../../services/documents/domain/context';
import { Documents } from '../../services/documents/domain/documents';
import { Lifecycle } from '../../services/documents/domain/lifecycle';
import { NumberingHooks } from '../../services/documents/domain/numbering';
import { Directory } from '../../services/documents/ports/directory';
import { BankDetailsData, PartyData } from '../../services/documents/ports/documents-store';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';

export const tenant: Tenant = { account_id: 7, livemode: true };

export const party = (id: number, name: string, email = '', country = 'cz'): PartyData => ({
  id,
  name,
  registration_id: '',
  tax_id: '',
  vat_id: '',
  email,
  phone: '',
  address: { name, street: 'Main 1', municipality: 'Praha', postal_code: '11000', country_alpha2: country, contact: '' },
  postal_address: null,
});

export class FakeDirectory implements Directory {
  supplierParty = party(0, 'ACME s.r.o.', 'billing@acme.example');
  purchasers = new Map<number, PartyData>([[100, party(100, 'Customer a.s.', 'ap@customer.example')], [101, party(101, 'No Mail Ltd')]]);
  banks = new Map<number, BankDetailsData>([[5, { id: 5, name: 'Main', iban: 'CZ6508000000192000145399', account_number: '', swift: '', bank_code: '' }]]);
  async supplier() {
    return this.supplierParty;
  }
  async purchaser(_t: Tenant, id: number) {
    return this.purchasers.get(id) ?? null;
  }
  async bankAccount(_t: Tenant, id: number) {
    return this.banks.get(id) ?? null;
  }
}

export interface Domain {
  ctx: DocumentsContext;
  documents: Documents;
  lifecycle: Lifecycle;
  store: SqliteDocumentStore;
  directory: FakeDirectory;
  clock: { base: number; now(): Date };
}

export function tempDbFile(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'documents-unit-')), 'invoicing.db');
}

/** A domain instance; several over the same file behave like replicas of the service. */
export function domain(file = tempDbFile(), hooks?: NumberingHooks, extra: Pick<DocumentsDeps, 'mailAllowanceHooks' | 'mailRecipientsPerDayDefault' | 'admission'> = {}): Domain {
  const store = new SqliteDocumentStore(file);
  const directory = new FakeDirectory();
  // 2026-03-15 10:00 UTC when the domain is made, then running in real time.
  const started = Date.now();
  const clock = { base: Date.parse('2026-03-15T10:00:00Z'), now: () => new Date(clock.base + Date.now() - started) };
  const ctx = new DocumentsContext({
    store: documentsStore(store),
    directory,
    clock,
    ids: { eventId: () => randomUUID() },
    hooks: { pendingGraceMs: 100, ...hooks },
    ...extra,
    // Admission (its own rule, test/unit/documents-admission.test.ts) does not cap the numbering tests'
    // cold bursts of concurrent issues.
    admission: { initialInFlight: 1000, ...extra.admission },
  });
  return { ctx, documents: new Documents(ctx), lifecycle: new Lifecycle(ctx), store, directory, clock };
}

export const line = (unit_price = '100', vat_rate = '21', quantity = '1') => ({ name: 'Consulting', unit_price, vat_rate, quantity });

export async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  return 'no error';
}
