// The records of a seeded workspace, built by the services' own domain code where it has a builder
// (document lines and totals, a new expense's derived fields, a contact's search text, number formats):
// what the seed writes is what the API would have written, so every row reads back through it.
import { searchText } from '../../services/contacts/domain/contacts';
import { ContactRecord, LegalEntityRecord } from '../../services/contacts/ports/contacts-store';
import { addDays, lineItems } from '../../services/documents/domain/fields';
import { newRecord } from '../../services/documents/domain/documents';
import { DEFAULT_NUMBER_FORMAT, formatNumber } from '../../services/documents/domain/number-format';
import { DocumentRecord, PartyData, SequenceRecord } from '../../services/documents/ports/documents-store';
import { composeFields } from '../../services/expenses/domain/fields';
import { newExpense } from '../../services/expenses/domain/new-expense';
import { ExpenseRecord } from '../../services/expenses/ports/expenses-store';
import { DEFAULT_SUBSCRIPTION } from '../../services/identity/domain/accounts';
import { AccountRecord, MembershipRecord, UserRecord } from '../../services/identity/ports/identity-store';
import { computeTotals } from '../../services/shared/totals';
import { Tenant } from '../../services/shared/tenant';
import { foldIdentifier } from '../../services/shared/validation';
import { amount, between, EXPENSE_NOTES, GOODS, party, Party, pick, recordRandom, VAT_RATES } from './fake';

/** Record kinds, each its own stream of the run's PRNG. */
const KIND = { workspace: 0, entity: 1, invoice: 2, expense: 3 } as const;

/** Seeded data is live data (the sandbox of a workspace stays empty). */
export const tenantOf = (accountId: number): Tenant => ({ account_id: accountId, livemode: true });

/** How far back the seeded history goes: invoices and expenses are spread over these days, oldest first. */
export const HISTORY_DAYS = 3 * 365;
/** The newest invoices of a workspace still drafts; older ones issued, and paid when due long enough ago. */
const DRAFT_SHARE = 0.05;
const PAID_SHARE = 0.85;
/** Invoices priced in a currency other than the workspace's, and the rates they carry (per workspace unit). */
const FOREIGN_SHARE = 0.2;
const RATES: Record<string, Record<string, string>> = {
  CZK: { EUR: '25.125', USD: '23.41', GBP: '29.37' },
  EUR: { CZK: '0.0398', USD: '0.93', GBP: '1.17' },
  GBP: { CZK: '0.034', EUR: '0.855', USD: '0.79' },
};

export interface Workspace {
  account: Omit<AccountRecord, 'version'>;
  owner: Omit<UserRecord, 'version'>;
  membership: Omit<MembershipRecord, 'version'>;
  /** The supplier snapshot its documents carry (the workspace's legal identity, as the directory reads it). */
  supplier: PartyData;
  currency: string;
}

export function workspace(seed: number, ordinal: number, ids: { account: number; user: number; membership: number }, passwordHash: string, at: string): Workspace {
  const rnd = recordRandom(seed, KIND.workspace, ordinal);
  const identity = party(rnd);
  const ownerName = identity.person ? identity.name : `${pick(rnd, ['Anna', 'Jan', 'Eva', 'Peter', 'Lukas'])} ${identity.name.split(' ')[0]}`;
  const legal = {
    name: identity.name, registration_id: identity.registration_id, tax_id: identity.tax_id, vat_id: identity.vat_id,
    vat_payer_type: '', vat_period: '', email: identity.email, phone_number: identity.phone, web: '', legal_form: '', legal_form_id: null,
    address: identity.address, postal_address: null,
  };
  return {
    account: {
      id: ids.account, owner_user_id: ids.user, personal: false, suspended: false, subscription: structuredClone(DEFAULT_SUBSCRIPTION),
      legal_identity: legal, accounting_type: 'simple', onboarding_step: null, vat_registration_alert: null, logo_key: null, created_at: at, updated_at: at,
    },
    owner: {
      id: ids.user, email: `owner.${ids.account}@${identity.email.split('@')[1]}`, name: ownerName, password_hash: passwordHash,
      default_account_id: ids.account, created_at: at, updated_at: at,
    },
    membership: { id: ids.membership, user_id: ids.user, account_id: ids.account, created_at: at },
    supplier: partyData(0, identity),
    currency: identity.currency,
  };
}

function partyData(id: number, p: Pick<Party, 'name' | 'registration_id' | 'tax_id' | 'vat_id' | 'email' | 'phone' | 'address'>): PartyData {
  return { id, name: p.name, registration_id: p.registration_id, tax_id: p.tax_id, vat_id: p.vat_id, email: p.email, phone: p.phone, address: p.address, postal_address: null };
}

/** Legal entity `ordinal` of the run (its id is the first entity id + ordinal): a contact's party. */
export function legalEntity(seed: number, ordinal: number, id: number, accountId: number, at: string): Omit<LegalEntityRecord, 'version'> {
  const p = party(recordRandom(seed, KIND.entity, ordinal));
  return {
    id, ...tenantOf(accountId), created_at: at, updated_at: at,
    name: p.name, registration_id: p.registration_id, registration_key: foldIdentifier(p.registration_id), tax_id: p.tax_id, vat_id: p.vat_id,
    email: p.email, phone: p.phone, address: p.address, postal_address: null,
  };
}

/** The contact of a legal entity: mostly named as it, sometimes a label of the workspace's own. */
export function contact(entity: Omit<LegalEntityRecord, 'version'>, id: number, ordinal: number): Omit<ContactRecord, 'version'> {
  const name = ordinal % 5 === 0 ? `${entity.name} (${entity.address?.municipality ?? ''})` : entity.name;
  return {
    id, account_id: entity.account_id, livemode: entity.livemode, created_at: entity.created_at, updated_at: entity.updated_at,
    name, invoice_account_id: entity.id, suspended: false, deleted: null, search_text: searchText(name, entity.name),
  };
}

/** The calendar date `index` of `count` spread over the history ending `today` (oldest first). */
export function historyDate(today: string, index: number, count: number): string {
  return addDays(today, -HISTORY_DAYS + Math.floor(((index + 0.5) * HISTORY_DAYS) / Math.max(count, 1)));
}

function lines(rnd: () => number, country: string, scale: number) {
  return Array.from({ length: between(rnd, 1, 5) }, () => {
    const [name, unit, min, max] = pick(rnd, GOODS);
    return { name, unit, quantity: String(between(rnd, 1, unit === 'km' ? 400 : 12)), unit_price: amount(rnd, min * scale, max * scale), vat_rate: pick(rnd, VAT_RATES[country] ?? ['0']) };
  });
}

/** Prices are drawn in EUR-like magnitudes and scaled into the currency. */
const SCALE: Record<string, number> = { CZK: 25, EUR: 1, USD: 1, GBP: 1 };

export interface InvoiceDraw {
  id: number;
  /** Ordinal of the invoice within its workspace and how many the workspace has (dates, statuses). */
  index: number;
  count: number;
  purchaser: PartyData;
  today: string;
}

/** An invoice as the API would have left it: a draft, or issued (status exposed) and possibly paid. */
export function invoice(seed: number, ws: Workspace, draw: InvoiceDraw): DocumentRecord {
  const rnd = recordRandom(seed, KIND.invoice, draw.id);
  const issueDate = historyDate(draw.today, draw.index, draw.count);
  const foreign = rnd() < FOREIGN_SHARE ? Object.keys(RATES[ws.currency] ?? RATES.EUR) : [];
  const currency = foreign.length ? pick(rnd, foreign) : ws.currency;
  const line_items = lineItems(lines(rnd, ws.supplier.address?.country_alpha2 ?? '', SCALE[currency] ?? 1), currency, 'invoice');
  const at = `${issueDate}T09:00:00.000Z`;
  const fields = {
    purchaser_id: draw.purchaser.id, purchaser: draw.purchaser, issue_date: issueDate, due_date: addDays(issueDate, 14), delivery_date: issueDate,
    currency, exchange_rate: currency === ws.currency ? '1' : (RATES[ws.currency] ?? RATES.EUR)[currency], pdf_language: 'en', variable_symbol: null,
    bank_account_id: null, bank_account: null, note: rnd() < 0.3 ? 'Thank you for your business.' : null, line_items, totals: computeTotals(line_items, currency),
    invoice_id: null, paid_on: null,
  };
  const record: DocumentRecord = { ...newRecord(tenantOf(ws.account.id), 'invoice', draw.id, fields, ws.supplier, at), revision: 1 };
  if (draw.index >= draw.count * (1 - DRAFT_SHARE)) return record;
  const paid = issueDate < addDays(draw.today, -60) ? rnd() < PAID_SHARE : rnd() < 0.3;
  const paidOn = addDays(issueDate, between(rnd, 0, 20));
  return { ...record, status: paid ? 'paid' : 'exposed', issued_at: at, paid_on: paid ? (paidOn < draw.today ? paidOn : draw.today) : null, revision: 2 };
}

/** Numbers an issued invoice: its counter in the (workspace, year) sequence, printed in the default format. */
export function numbered(doc: DocumentRecord, counter: number): DocumentRecord {
  const year = Number(doc.issue_date.slice(0, 4));
  const number = formatNumber(DEFAULT_NUMBER_FORMAT, year, counter);
  const digits = number.replace(/\D/g, '');
  return { ...doc, number, sequence_year: year, sequence_number: counter, variable_symbol: digits.length <= 10 ? digits : null };
}

/** The sequence record of (workspace, invoices, year) standing at `last`: the next issue continues after it. */
export function sequence(id: number, accountId: number, year: number, last: number, at: string): Omit<SequenceRecord, 'version'> {
  return { id, ...tenantOf(accountId), type: 'invoice', year, last, pending: null, updated_at: at };
}

export interface ExpenseDraw {
  id: number;
  index: number;
  count: number;
  supplier: { contactId: number; contactName: string; entity: PartyData };
  today: string;
}

/** A manually entered expense of a supplier that is one of the workspace's contacts, with items and totals. */
export function expense(seed: number, ws: Workspace, draw: ExpenseDraw): ExpenseRecord {
  const rnd = recordRandom(seed, KIND.expense, draw.id);
  const issueDate = historyDate(draw.today, draw.index, draw.count);
  const country = draw.supplier.entity.address?.country_alpha2 ?? '';
  const currency = rnd() < 0.85 ? ws.currency : pick(rnd, ['EUR', 'USD', 'CZK'].filter((c) => c !== ws.currency));
  const items = lines(rnd, country, SCALE[currency] ?? 1).map((l) => ({ name: l.name, quantity: l.quantity, unit_price: l.unit_price, vat_rate: l.vat_rate }));
  const fields = composeFields(null, {
    issue_date: issueDate, due_date: addDays(issueDate, 14), currency, items,
    document_number: `${issueDate.slice(0, 4)}-${String(between(rnd, 1, 99999)).padStart(5, '0')}`,
    variable_symbol: String(between(rnd, 10000000, 99999999)),
    note: pick(rnd, EXPENSE_NOTES),
  });
  const at = `${issueDate}T12:00:00.000Z`;
  const e = draw.supplier.entity;
  return newExpense({ id: draw.id, ...tenantOf(ws.account.id) }, at, {
    ...fields,
    supplier_id: draw.supplier.contactId,
    supplier_contact_name: draw.supplier.contactName,
    supplier: {
      name: e.name, registration_id: e.registration_id || null, tax_id: e.tax_id || null, vat_id: e.vat_id || null,
      address: { street: e.address?.street || null, municipality: e.address?.municipality || null, postal_code: e.address?.postal_code || null, country_alpha2: e.address?.country_alpha2 || null },
    },
  });
}
