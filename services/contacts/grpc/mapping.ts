// Domain records ⇄ generated proto messages.
import { Address } from '../../../gen/invoicing/common/v1/common';
import { BankAccount, BankAccountType, Contact, LegalEntity, LegalEntityInput as LegalEntityInputMessage } from '../../../gen/invoicing/contacts/v1/contacts';
import { LegalEntityInput } from '../domain/legal-entities';
import { ContactView } from '../domain/contacts';
import { AddressData, BankAccountRecord, LegalEntityRecord } from '../ports/contacts-store';

const address = (a: AddressData | null): Address | undefined => a ?? undefined;

export function toLegalEntityMessage(e: LegalEntityRecord): LegalEntity {
  return {
    id: e.id,
    name: e.name,
    registration_id: e.registration_id,
    tax_id: e.tax_id,
    vat_id: e.vat_id,
    email: e.email,
    phone: e.phone,
    address: address(e.address),
    postal_address: address(e.postal_address),
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function toContactMessage({ contact, entity }: ContactView): Contact {
  return {
    id: contact.id,
    name: contact.name,
    invoice_account_id: contact.invoice_account_id,
    invoice_account: toLegalEntityMessage(entity),
    suspended: contact.suspended,
    deleted: contact.deleted ?? undefined,
    created_at: contact.created_at,
    updated_at: contact.updated_at,
  };
}

export function toBankAccountMessage(b: BankAccountRecord): BankAccount {
  return {
    id: b.id,
    account_type: b.account_type === 'cash' ? BankAccountType.BANK_ACCOUNT_TYPE_CASH : BankAccountType.BANK_ACCOUNT_TYPE_BANK,
    name: b.name,
    iban: b.iban ?? undefined,
    account_number: b.account_number ?? undefined,
    swift: b.swift ?? undefined,
    bank_code: b.bank_code ?? undefined,
    currency: b.currency ?? undefined,
    deleted: b.deleted ?? undefined,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

export function fromLegalEntityInput(input: LegalEntityInputMessage | undefined): LegalEntityInput | undefined {
  if (!input) return undefined;
  return {
    name: input.name,
    registration_id: input.registration_id,
    tax_id: input.tax_id,
    vat_id: input.vat_id,
    email: input.email,
    phone: input.phone,
    address: input.address,
    postal_address: input.postal_address,
  };
}
