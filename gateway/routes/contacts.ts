// /accounts/:account_id/contacts — spec §4 Contacts.
import { BankAccount, BankAccountType, Contact, LegalEntity, LegalEntityInput } from '../../gen/invoicing/contacts/v1/contacts';
import { HttpError } from '../http/errors';
import { listEnvelope, pageQuery, pathId } from '../http/ids';
import { presentAddress, textOrNull } from './presenters';
import { RouteSpec } from './route';

const BASE = '/accounts/:account_id/contacts';

export function presentLegalEntity(e: LegalEntity | undefined) {
  if (!e) return null;
  return {
    id: e.id,
    name: e.name,
    registration_id: textOrNull(e.registration_id),
    tax_id: textOrNull(e.tax_id),
    vat_id: textOrNull(e.vat_id),
    email: textOrNull(e.email),
    phone: textOrNull(e.phone),
    address: presentAddress(e.address),
    postal_address: presentAddress(e.postal_address),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function presentContact(c: Contact) {
  return {
    id: c.id,
    name: c.name,
    invoice_account_id: c.invoice_account_id,
    invoice_account: presentLegalEntity(c.invoice_account),
    suspended: c.suspended,
    deleted: c.deleted ?? null,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

export function presentBankAccount(b: BankAccount) {
  return {
    id: b.id,
    account_type: b.account_type === BankAccountType.BANK_ACCOUNT_TYPE_CASH ? 'cash' : 'bank',
    name: b.name || null,
    iban: b.iban ?? null,
    account_number: b.account_number ?? null,
    swift: b.swift ?? null,
    bank_code: b.bank_code ?? null,
    currency: b.currency ?? null,
    deleted: b.deleted ?? null,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The inline legal entity of a body as a proto message. Built with fromPartial, never passed raw: the
 * encoder writes String(value) for a missing non-optional string, which stored "undefined" as text.
 */
const legalEntityInput = (value: unknown) => (value === undefined || value === null ? undefined : LegalEntityInput.fromPartial(value as LegalEntityInput));

export const contactRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: BASE,
    operationId: 'listContacts',
    scope: ['read', 'contacts'],
    handle: async (ctx, { contacts }) => {
      const q = ctx.query.q;
      if (q !== undefined && typeof q !== 'string') throw new HttpError(422, 'invalid_type', 'q must be a string', { field: 'q' });
      const res = await contacts.listContacts({ tenant: ctx.tenant, page: pageQuery(ctx.query), query: q ?? '' }, { requestId: ctx.requestId });
      return { status: 200, body: listEnvelope(res.contacts.map(presentContact), res.page_info) };
    },
  },
  {
    method: 'post',
    path: BASE,
    operationId: 'createContact',
    scope: ['write', 'contacts'],
    handle: async (ctx, { contacts }) => {
      const body = ctx.body as Body;
      const res = await contacts.createContact(
        { tenant: ctx.tenant, name: body.name ?? '', invoice_account_id: body.invoice_account_id ?? 0, invoice_account: legalEntityInput(body.invoice_account) },
        { requestId: ctx.requestId },
      );
      return { status: 201, body: presentContact(res.contact!) };
    },
  },
  {
    method: 'get',
    path: `${BASE}/:id`,
    operationId: 'getContact',
    scope: ['read', 'contacts'],
    handle: async (ctx, { contacts }) => {
      const res = await contacts.getContact({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'contact') }, { requestId: ctx.requestId });
      return { status: 200, body: presentContact(res.contact!) };
    },
  },
  {
    method: 'patch',
    path: `${BASE}/:id`,
    operationId: 'updateContact',
    scope: ['write', 'contacts'],
    handle: async (ctx, { contacts }) => {
      const body = ctx.body as Body;
      const res = await contacts.updateContact(
        { tenant: ctx.tenant, id: pathId(ctx.params.id, 'contact'), name: body.name, invoice_account_id: body.invoice_account_id, invoice_account: legalEntityInput(body.invoice_account) },
        { requestId: ctx.requestId },
      );
      return { status: 200, body: presentContact(res.contact!) };
    },
  },
  {
    method: 'delete',
    path: `${BASE}/:id`,
    operationId: 'deleteContact',
    scope: ['write', 'contacts'],
    handle: async (ctx, { contacts }) => {
      await contacts.deleteContact({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'contact') }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
];

const BANK = '/accounts/:account_id/bank_accounts';
/** JSON null clears an optional field; the RPC spells "clear" as an empty string. */
const clearable = (value: string | null | undefined) => (value === null ? '' : value);

export const bankAccountRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: BANK,
    operationId: 'listBankAccounts',
    scope: ['read', 'bank_accounts'],
    handle: async (ctx, { banking }) => {
      const res = await banking.listBankAccounts({ tenant: ctx.tenant, page: pageQuery(ctx.query) }, { requestId: ctx.requestId });
      return { status: 200, body: listEnvelope(res.bank_accounts.map(presentBankAccount), res.page_info) };
    },
  },
  {
    method: 'post',
    path: BANK,
    operationId: 'createBankAccount',
    scope: ['write', 'bank_accounts'],
    handle: async (ctx, { banking }) => {
      const body = ctx.body as Body;
      const cap = ctx.access?.subscription.caps.bank_accounts;
      const res = await banking.createBankAccount(
        {
          tenant: ctx.tenant,
          name: body.name ?? '',
          iban: body.iban ?? undefined,
          account_number: body.account_number ?? undefined,
          swift: body.swift ?? undefined,
          bank_code: body.bank_code ?? undefined,
          currency: body.currency ?? undefined,
          cap,
        },
        { requestId: ctx.requestId },
      );
      return { status: 201, body: presentBankAccount(res.bank_account!) };
    },
  },
  {
    method: 'get',
    path: `${BANK}/:id`,
    operationId: 'getBankAccount',
    scope: ['read', 'bank_accounts'],
    handle: async (ctx, { banking }) => {
      const res = await banking.getBankAccount({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'bank account') }, { requestId: ctx.requestId });
      return { status: 200, body: presentBankAccount(res.bank_account!) };
    },
  },
  {
    method: 'patch',
    path: `${BANK}/:id`,
    operationId: 'updateBankAccount',
    scope: ['write', 'bank_accounts'],
    handle: async (ctx, { banking }) => {
      const body = ctx.body as Body;
      const res = await banking.updateBankAccount(
        {
          tenant: ctx.tenant,
          id: pathId(ctx.params.id, 'bank account'),
          name: clearable(body.name),
          iban: clearable(body.iban),
          account_number: clearable(body.account_number),
          swift: clearable(body.swift),
          bank_code: clearable(body.bank_code),
          currency: clearable(body.currency),
        },
        { requestId: ctx.requestId },
      );
      return { status: 200, body: presentBankAccount(res.bank_account!) };
    },
  },
  {
    method: 'delete',
    path: `${BANK}/:id`,
    operationId: 'deleteBankAccount',
    scope: ['write', 'bank_accounts'],
    handle: async (ctx, { banking }) => {
      await banking.deleteBankAccount({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'bank account') }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
];
