// Legal entities: the parties that contacts (invoice_account_id) and documents (purchaser_id) point to.
// Isolation: an entity belongs to the tenant that created it and no other tenant can read or reference it;
// "shared" means shared by that workspace's contacts, documents and expenses.
import { fail } from '../../shared/errors';
import { mutate } from '../../shared/store/port';
import { ownedBy, Tenant } from '../../shared/tenant';
import { foldIdentifier, normalizeCountry, normalizeEmail, normalizeRegistrationId, normalizeVatId } from '../../shared/validation';
import { AddressData, ContactsStore, LegalEntityRecord } from '../ports/contacts-store';

export interface LegalEntityInput {
  name?: string;
  registration_id?: string;
  tax_id?: string;
  vat_id?: string;
  email?: string;
  phone?: string;
  address?: Partial<AddressData>;
  postal_address?: Partial<AddressData>;
}

const now = () => new Date().toISOString();
const MAX_TEXT = 255;

function text(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed.length > MAX_TEXT) throw fail.invalid('too_long', `${field} is longer than ${MAX_TEXT} characters`, field);
  return trimmed;
}

/** A given address replaces the stored one whole; missing parts are absent (""), and so is an address without any part. */
function address(input: Partial<AddressData> | undefined, field: string): AddressData | null | undefined {
  if (input === undefined) return undefined;
  const parsed: AddressData = {
    name: text(input.name, `${field}.name`) ?? '',
    street: text(input.street, `${field}.street`) ?? '',
    municipality: text(input.municipality, `${field}.municipality`) ?? '',
    postal_code: text(input.postal_code, `${field}.postal_code`) ?? '',
    country_alpha2: normalizeCountry(input.country_alpha2 ?? '', `${field}.country_alpha2`),
    contact: text(input.contact, `${field}.contact`) ?? '',
  };
  return Object.values(parsed).some((part) => part !== '') ? parsed : null;
}

/** Applies validated input over `base` (field names prefixed with `prefix` in errors). */
function apply(base: Omit<LegalEntityRecord, 'id' | 'version'>, input: LegalEntityInput, prefix: string) {
  const f = (name: string) => `${prefix}.${name}`;
  const next = { ...base };
  const name = text(input.name, f('name'));
  if (name !== undefined) next.name = name;
  const addr = address(input.address, f('address'));
  if (addr !== undefined) next.address = addr;
  const postal = address(input.postal_address, f('postal_address'));
  if (postal !== undefined) next.postal_address = postal;
  if (input.registration_id !== undefined) {
    next.registration_id = normalizeRegistrationId(input.registration_id, next.address?.country_alpha2 ?? '', f('registration_id'));
  }
  if (input.tax_id !== undefined) next.tax_id = text(input.tax_id, f('tax_id')) ?? '';
  if (input.vat_id !== undefined) next.vat_id = normalizeVatId(input.vat_id, f('vat_id'));
  if (input.email !== undefined) next.email = input.email.trim() === '' ? '' : normalizeEmail(input.email, f('email'));
  if (input.phone !== undefined) {
    const phone = text(input.phone, f('phone')) ?? '';
    if (phone && !/^\+?[0-9 ()./-]{3,32}$/.test(phone)) throw fail.invalid('invalid_phone', `${f('phone')} is not a phone number`, f('phone'));
    next.phone = phone;
  }
  if (!next.name) throw fail.invalid('missing_field', `${f('name')} is required`, f('name'));
  // Written on every write, so an entity stored before the key existed gets it with its next change.
  next.registration_key = foldIdentifier(next.registration_id);
  return next;
}

export class LegalEntities {
  constructor(private readonly store: ContactsStore) {}

  async create(tenant: Tenant, input: LegalEntityInput, prefix = 'invoice_account'): Promise<LegalEntityRecord> {
    const at = now();
    const blank = {
      account_id: tenant.account_id,
      livemode: tenant.livemode,
      name: '',
      registration_id: '',
      tax_id: '',
      vat_id: '',
      email: '',
      phone: '',
      address: null,
      postal_address: null,
      created_at: at,
      updated_at: at,
    };
    const values = apply(blank, input, prefix);
    return this.store.legalEntities.insert({ ...values, id: await this.store.nextId('legal_entity') });
  }

  /** The entity if this tenant may see it; otherwise null (callers answer 404 or 422). */
  async visible(tenant: Tenant, id: number): Promise<LegalEntityRecord | null> {
    const entity = await this.store.legalEntities.get(id);
    return ownedBy(entity, tenant) ? entity : null;
  }

  async get(tenant: Tenant, id: number): Promise<LegalEntityRecord> {
    const entity = await this.visible(tenant, id);
    if (!entity) throw fail.notFound('legal entity');
    return entity;
  }

  async update(tenant: Tenant, id: number, input: LegalEntityInput, prefix = 'invoice_account'): Promise<LegalEntityRecord> {
    await this.get(tenant, id);
    const updated = await mutate(this.store.legalEntities, id, (current) => {
      const { id: _id, version, ...base } = current;
      return { ...apply(base, input, prefix), id: _id, version, updated_at: now() };
    });
    if (!updated) throw fail.notFound('legal entity');
    return updated;
  }
}
