// Bank accounts and cash registers: one model, account_type bank|cash (spec §2, §4). The API creates
// bank accounts only; cash registers come from the admin CLI. Deleted records stay readable by id.
import { fail } from '../../shared/errors';
import { createdUnder, createOnce, IdempotencyToken } from '../../shared/idempotency';
import { mutate, UniqueViolation } from '../../shared/store/port';
import { ownedBy, Tenant, tenantWhere } from '../../shared/tenant';
import { normalizeAccountNumber, normalizeBic, normalizeCurrency, normalizeIban } from '../../shared/validation';
import { BankAccountRecord, CAP_SLOT_KEY, ContactsStore } from '../ports/contacts-store';
import { withEvent } from './events';

/** Absent: leave unchanged; empty string: clear (the gateway maps JSON null to ""). */
export interface BankAccountInput {
  name?: string;
  iban?: string;
  account_number?: string;
  swift?: string;
  bank_code?: string;
  currency?: string;
}

const now = () => new Date().toISOString();

function optionalText(value: string | undefined, field: string, pattern: RegExp, code: string): string | null | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  if (!pattern.test(trimmed)) throw fail.invalid(code, `${field} is not valid`, field);
  return trimmed;
}

function applyInput(record: BankAccountRecord, input: BankAccountInput): BankAccountRecord {
  const next = { ...record };
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name.length > 255) throw fail.invalid('too_long', 'name is longer than 255 characters', 'name');
    next.name = name;
  }
  if (input.currency !== undefined) next.currency = input.currency.trim() === '' ? null : normalizeCurrency(input.currency);
  const bankFields = [input.iban, input.account_number, input.swift, input.bank_code].some((v) => v !== undefined && v !== '');
  if (record.account_type === 'cash') {
    if (bankFields) throw fail.invalid('not_a_bank_account', 'a cash register has no IBAN, account number, SWIFT or bank code', 'account_type');
    if (!next.name) throw fail.invalid('missing_field', 'a cash register needs a name', 'name');
    return next;
  }
  if (input.iban !== undefined) next.iban = input.iban.trim() === '' ? null : normalizeIban(input.iban);
  const number = input.account_number === undefined || input.account_number.trim() === '' ? undefined : normalizeAccountNumber(input.account_number);
  if (input.account_number !== undefined) next.account_number = number?.number ?? null;
  if (input.swift !== undefined) next.swift = input.swift.trim() === '' ? null : normalizeBic(input.swift);
  const bankCode = optionalText(input.bank_code, 'bank_code', /^[0-9A-Za-z]{1,11}$/, 'invalid_bank_code');
  if (bankCode !== undefined) next.bank_code = bankCode;
  if (input.account_number !== undefined) next.national_bank_code = Boolean(number?.bankCode);
  // A national number names its bank after the "/": that is the bank code, and a different one — in the same
  // request or a later one — is a contradiction.
  const numberBankCode = number?.bankCode ?? (next.national_bank_code ? record.bank_code : undefined);
  if (numberBankCode) {
    if (bankCode !== undefined && bankCode !== numberBankCode) {
      throw fail.invalid('bank_code_mismatch', `bank_code ${bankCode ?? 'null'} contradicts the bank code /${numberBankCode} of account_number`, 'bank_code');
    }
    next.bank_code = numberBankCode;
  }
  if (!next.iban && !next.account_number) {
    throw fail.invalid('missing_account_identifier', 'a bank account needs an iban or an account_number', 'iban');
  }
  return next;
}

function uniqueness(err: unknown): never {
  if (err instanceof UniqueViolation) {
    if (err.key.startsWith('iban:')) throw fail.invalid('iban_taken', 'this workspace already has a bank account with this IBAN', 'iban');
    if (err.key.startsWith('cash:')) throw fail.invalid('name_taken', 'this workspace already has a cash register with this name', 'name');
  }
  throw err;
}

export class BankAccounts {
  /** `written` wakes the outbox relay after a write that carries an event. */
  constructor(
    private readonly store: ContactsStore,
    private readonly written: () => void = () => undefined,
  ) {}

  /** The validated new record, not yet stored (no slot). */
  private async draft(tenant: Tenant, type: 'bank' | 'cash', input: BankAccountInput, token?: IdempotencyToken): Promise<Omit<BankAccountRecord, 'version'>> {
    const at = now();
    const blank: BankAccountRecord = {
      id: 0,
      version: 1,
      ...tenantWhere(tenant),
      account_type: type,
      name: '',
      iban: null,
      account_number: null,
      swift: null,
      bank_code: null,
      currency: null,
      deleted: null,
      slot: null,
      created_at: at,
      updated_at: at,
      ...createdUnder(token),
    };
    const { version: _version, ...record } = applyInput(blank, input);
    return withEvent({ ...record, id: await this.store.nextId('bank_account') }, 'bank_account', 'created');
  }

  /**
   * `cap` is the plan's bank_accounts cap: the number of records (both types, deleted excluded) allowed.
   * The check holds for what is written, whatever the interleaving: a capped record takes one of the cap's
   * slots (a unique key of the store, released on delete) in the same single-document insert, so two
   * creates that both saw room cannot both take the last slot; the loser looks again and gets 402.
   */
  createBankAccount(tenant: Tenant, input: BankAccountInput, cap: number | undefined, token?: IdempotencyToken): Promise<BankAccountRecord> {
    // Under an Idempotency-Key, a retry answers the account the first attempt created (no second slot).
    return createOnce(this.store.bankAccounts, tenant, token, () => this.createNew(tenant, input, cap, token)).finally(() => this.written());
  }

  private async createNew(tenant: Tenant, input: BankAccountInput, cap: number | undefined, token?: IdempotencyToken): Promise<BankAccountRecord> {
    const record = await this.draft(tenant, 'bank', input, token);
    if (cap === undefined) return this.store.bankAccounts.insert(record).catch(uniqueness);
    // A slot found taken though no stored record holds it is being taken by a create in flight: it counts
    // as taken, so every attempt rules out one more slot and the loop ends within cap + 1 attempts.
    const reserved = new Set<number>();
    for (;;) {
      const slot = await this.freeSlot(tenant, cap, reserved);
      try {
        return await this.store.bankAccounts.insert({ ...record, slot });
      } catch (err) {
        if (!(err instanceof UniqueViolation && err.key.startsWith(CAP_SLOT_KEY))) uniqueness(err);
        reserved.add(slot);
      }
    }
  }

  /** The lowest slot below the cap that no record holds and no create in flight reserved; 402 when none is left. */
  private async freeSlot(tenant: Tenant, cap: number, reserved: Set<number>): Promise<number> {
    const active = await this.store.bankAccounts.list({ where: { ...tenantWhere(tenant), deleted: null }, limit: cap + 1 });
    // Records created without a cap (cash registers, earlier plans) hold no slot but count: they take
    // room from the top, so the slots left are 0 … cap − unslotted − 1.
    const unslotted = active.filter((r) => r.slot === undefined || r.slot === null).length;
    const taken = new Set(active.map((r) => r.slot));
    if (active.length < cap) {
      for (let slot = 0; slot < cap - unslotted; slot++) if (!taken.has(slot) && !reserved.has(slot)) return slot;
    }
    throw fail.planLimit('plan_limit_reached', `this plan allows ${cap} bank accounts; upgrade for more`, { feature: 'bank_accounts', cap: String(cap) });
  }

  async createCashRegister(tenant: Tenant, name: string, currency?: string): Promise<BankAccountRecord> {
    return this.store.bankAccounts.insert(await this.draft(tenant, 'cash', { name, currency })).catch(uniqueness).finally(() => this.written());
  }

  /** Deleted records remain readable by id. */
  async get(tenant: Tenant, id: number): Promise<BankAccountRecord> {
    const record = await this.store.bankAccounts.get(id);
    if (!record || !ownedBy(record, tenant)) throw fail.notFound('bank account');
    return record;
  }

  list(tenant: Tenant, limit: number, after?: number): Promise<BankAccountRecord[]> {
    return this.store.bankAccounts.list({
      where: { ...tenantWhere(tenant), deleted: null },
      after: after === undefined ? undefined : [after],
      limit,
    });
  }

  /** A deleted record is read-only: updating or deleting it again answers 404. */
  async update(tenant: Tenant, id: number, input: BankAccountInput): Promise<BankAccountRecord> {
    const current = await this.get(tenant, id);
    if (current.deleted) throw fail.notFound('bank account');
    const updated = await mutate(this.store.bankAccounts, id, (b) => {
      if (b.deleted) throw fail.notFound('bank account');
      return withEvent({ ...applyInput(b, input), updated_at: now() }, 'bank_account', 'updated');
    }).catch(uniqueness);
    this.written();
    return updated!;
  }

  async delete(tenant: Tenant, id: number): Promise<void> {
    const current = await this.get(tenant, id);
    if (current.deleted) throw fail.notFound('bank account');
    await mutate(this.store.bankAccounts, id, (b) => (b.deleted ? null : withEvent({ ...b, deleted: now(), updated_at: now() }, 'bank_account', 'deleted')));
    this.written();
  }
}
