// Thin gRPC handlers of ContactsService and BankingService.
import { BankingServiceService, ContactsServiceService } from '../../../gen/invoicing/contacts/v1/contacts';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { requireTenant, tenantKey } from '../../shared/tenant';
import { BankAccounts } from '../domain/bank-accounts';
import { Contacts } from '../domain/contacts';
import { LegalEntities } from '../domain/legal-entities';
import { fromLegalEntityInput, toBankAccountMessage, toContactMessage, toLegalEntityMessage } from './mapping';

const positiveOrUndefined = (id: number | undefined) => (id === undefined || id === 0 ? undefined : id);

export function contactsHandlers(contacts: Contacts, entities: LegalEntities, cursors: CursorCodec): AsyncHandlers<typeof ContactsServiceService> {
  return {
    listContacts: async (req) => {
      const tenant = requireTenant(req.tenant);
      const filterKey = Contacts.filterKey(tenant, req.query);
      const page = cursors.resolve(req.page, filterKey);
      const rows = await contacts.list(tenant, req.query, page.limit + 1, page.after?.[0] as number | undefined);
      const { items, page_info } = cursors.page(rows, page.limit, (v) => [v.contact.id], filterKey);
      return { contacts: items.map(toContactMessage), page_info };
    },
    createContact: async (req, ctx) => ({
      contact: toContactMessage(
        await contacts.create(
          requireTenant(req.tenant),
          {
            name: req.name,
            invoice_account_id: positiveOrUndefined(req.invoice_account_id),
            invoice_account: fromLegalEntityInput(req.invoice_account),
          },
          ctx.idempotency,
        ),
      ),
    }),
    getContact: async (req) => ({ contact: toContactMessage(await contacts.get(requireTenant(req.tenant), req.id)) }),
    updateContact: async (req) => ({
      contact: toContactMessage(
        await contacts.update(requireTenant(req.tenant), req.id, {
          name: req.name,
          invoice_account_id: req.invoice_account_id,
          invoice_account: fromLegalEntityInput(req.invoice_account),
        }),
      ),
    }),
    deleteContact: async (req) => {
      await contacts.delete(requireTenant(req.tenant), req.id);
      return {};
    },
    setContactSuspended: async (req) => ({
      contact: toContactMessage(await contacts.setSuspended(requireTenant(req.tenant), req.id, req.suspended)),
    }),
    listContactsByIdentifier: async (req) => ({
      contacts: (await contacts.findByIdentifier(requireTenant(req.tenant), { registration_id: req.registration_id, vat_id: req.vat_id }, req.page_size)).map(
        toContactMessage,
      ),
    }),
    getLegalEntity: async (req) => ({ legal_entity: toLegalEntityMessage(await entities.get(requireTenant(req.tenant), req.id)) }),
  };
}

export function bankingHandlers(bankAccounts: BankAccounts, cursors: CursorCodec): AsyncHandlers<typeof BankingServiceService> {
  return {
    listBankAccounts: async (req) => {
      const tenant = requireTenant(req.tenant);
      const filterKey = `bank_accounts|${tenantKey(tenant)}`;
      const page = cursors.resolve(req.page, filterKey);
      const rows = await bankAccounts.list(tenant, page.limit + 1, page.after?.[0] as number | undefined);
      const { items, page_info } = cursors.page(rows, page.limit, (b) => [b.id], filterKey);
      return { bank_accounts: items.map(toBankAccountMessage), page_info };
    },
    createBankAccount: async (req, ctx) => {
      const { tenant, cap, ...input } = req;
      return { bank_account: toBankAccountMessage(await bankAccounts.createBankAccount(requireTenant(tenant), input, cap, ctx.idempotency)) };
    },
    getBankAccount: async (req) => ({ bank_account: toBankAccountMessage(await bankAccounts.get(requireTenant(req.tenant), req.id)) }),
    updateBankAccount: async (req) => {
      const { tenant, id, ...input } = req;
      return { bank_account: toBankAccountMessage(await bankAccounts.update(requireTenant(tenant), id, input)) };
    },
    deleteBankAccount: async (req) => {
      await bankAccounts.delete(requireTenant(req.tenant), req.id);
      return {};
    },
    createCashRegister: async (req) => ({
      bank_account: toBankAccountMessage(await bankAccounts.createCashRegister(requireTenant(req.tenant), req.name, req.currency)),
    }),
  };
}
