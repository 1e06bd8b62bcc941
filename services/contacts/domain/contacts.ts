// Contacts: a workspace's label for a legal entity (spec §2, §4 Contacts).
import { fail } from '../../shared/errors';
import { createdUnder, createOnce, IdempotencyToken } from '../../shared/idempotency';
import { mutate } from '../../shared/store/port';
import { ownedBy, Tenant, tenantKey, tenantWhere } from '../../shared/tenant';
import { ContactRecord, ContactsStore, LegalEntityRecord } from '../ports/contacts-store';
import { foldIdentifier } from '../../shared/validation';
import { withEvent } from './events';
import { LegalEntities, LegalEntityInput } from './legal-entities';

export interface ContactView {
  contact: ContactRecord;
  entity: LegalEntityRecord;
}

export interface CreateContactInput {
  name?: string;
  invoice_account_id?: number;
  invoice_account?: LegalEntityInput;
}

export interface UpdateContactInput {
  name?: string;
  invoice_account_id?: number;
  invoice_account?: LegalEntityInput;
}

const MAX_NAME = 255;
const MAX_QUERY = 200;
const MAX_IDENTIFIER_MATCHES = 100;
const now = () => new Date().toISOString();

/** Lower-cased once here; `q` is lower-cased the same way and matched as a literal substring. */
export const searchText = (contactName: string, entityName: string) => `${contactName}\u0000${entityName}`.toLowerCase();

function label(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.trim();
  if (trimmed.length > MAX_NAME) throw fail.invalid('too_long', `name is longer than ${MAX_NAME} characters`, 'name');
  return trimmed;
}

export class Contacts {
  /** `written` wakes the outbox relay after a write that carries an event. */
  constructor(
    private readonly store: ContactsStore,
    private readonly entities: LegalEntities,
    private readonly written: () => void = () => undefined,
  ) {}

  private async entityFor(tenant: Tenant, input: CreateContactInput | UpdateContactInput): Promise<LegalEntityRecord | undefined> {
    if (input.invoice_account_id !== undefined && input.invoice_account !== undefined) {
      throw fail.invalid('ambiguous_invoice_account', 'give either invoice_account_id or invoice_account, not both', 'invoice_account');
    }
    if (input.invoice_account_id !== undefined) {
      const entity = await this.entities.visible(tenant, input.invoice_account_id);
      if (!entity) throw fail.invalid('unknown_invoice_account', `legal entity ${input.invoice_account_id} does not exist`, 'invoice_account_id');
      return entity;
    }
    return undefined;
  }

  /** Under an Idempotency-Key, a retry answers the contact the first attempt created. */
  async create(tenant: Tenant, input: CreateContactInput, token?: IdempotencyToken): Promise<ContactView> {
    let created: LegalEntityRecord | undefined;
    const contact = await createOnce(this.store.contacts, tenant, token, async () => {
      const { contact, entity } = await this.createNew(tenant, input, token);
      created = entity;
      return contact;
    });
    this.written();
    return { contact, entity: created ?? (await this.entities.get(tenant, contact.invoice_account_id)) };
  }

  private async createNew(tenant: Tenant, input: CreateContactInput, token: IdempotencyToken | undefined): Promise<ContactView> {
    let entity = await this.entityFor(tenant, input);
    const name = label(input.name);
    if (!entity) {
      if (!input.invoice_account) {
        throw fail.invalid('missing_field', 'invoice_account_id or invoice_account is required', 'invoice_account_id');
      }
      entity = await this.entities.create(tenant, { ...input.invoice_account, name: input.invoice_account.name ?? name });
    }
    const contactName = name || entity.name;
    const at = now();
    const record = {
      id: await this.store.nextId('contact'),
      ...tenantWhere(tenant),
      name: contactName,
      invoice_account_id: entity.id,
      suspended: false,
      deleted: null,
      search_text: searchText(contactName, entity.name),
      created_at: at,
      updated_at: at,
      ...createdUnder(token),
    };
    const contact = await this.store.contacts.insert(withEvent(record, 'contact', 'created'));
    return { contact, entity };
  }

  private async live(tenant: Tenant, id: number): Promise<ContactRecord> {
    const contact = await this.store.contacts.get(id);
    if (!contact || !ownedBy(contact, tenant) || contact.deleted) throw fail.notFound('contact');
    return contact;
  }

  async get(tenant: Tenant, id: number): Promise<ContactView> {
    const contact = await this.live(tenant, id);
    return { contact, entity: await this.entities.get(tenant, contact.invoice_account_id) };
  }

  async list(tenant: Tenant, query: string, limit: number, after?: number): Promise<ContactView[]> {
    if (query.length > MAX_QUERY) throw fail.invalid('too_long', `q is longer than ${MAX_QUERY} characters`, 'q');
    const needle = query.toLowerCase().replace(/\u0000/g, '');
    const contacts = await this.store.contacts.list({
      where: { ...tenantWhere(tenant), deleted: null },
      after: after === undefined ? undefined : [after],
      limit,
      contains: needle ? { field: 'search_text', text: needle } : undefined,
    });
    // The page's legal entities in one read (a page of 100 contacts of 100 entities was 100 concurrent
    // reads: on a loaded shared database, seconds). One the tenant may not see fails as a single read would.
    const read = await this.store.legalEntities.getMany([...new Set(contacts.map((c) => c.invoice_account_id))]);
    const entities = new Map(read.filter((e) => ownedBy(e, tenant)).map((e) => [e.id, e]));
    return Promise.all(contacts.map(async (contact) => ({ contact, entity: entities.get(contact.invoice_account_id) ?? (await this.entities.get(tenant, contact.invoice_account_id)) })));
  }

  /**
   * Live contacts whose legal entity has the registration id or the VAT id (folded: separators and case
   * ignored): registration id matches first, then VAT id matches, at most `limit` (1–100, 0 → 10).
   */
  async findByIdentifier(tenant: Tenant, ids: { registration_id?: string; vat_id?: string }, limit = 0): Promise<ContactView[]> {
    if (limit < 0 || limit > MAX_IDENTIFIER_MATCHES) throw fail.invalid('invalid_limit', `page_size must be between 1 and ${MAX_IDENTIFIER_MATCHES}`, 'page_size');
    const wanted = limit || 10;
    const found = new Map<number, ContactRecord>();
    const queries = [
      { field: 'registration_key' as const, value: foldIdentifier(ids.registration_id) },
      { field: 'vat_id' as const, value: foldIdentifier(ids.vat_id) },
    ];
    for (const query of queries) {
      if (!query.value || found.size >= wanted) continue;
      for (const contact of await this.store.contactsByIdentifier(tenant, query, wanted)) {
        if (found.size < wanted) found.set(contact.id, contact);
      }
    }
    return Promise.all([...found.values()].map(async (contact) => ({ contact, entity: await this.entities.get(tenant, contact.invoice_account_id) })));
  }

  static filterKey(tenant: Tenant, query: string) {
    return `contacts|${tenantKey(tenant)}|q=${query}`;
  }

  async update(tenant: Tenant, id: number, input: UpdateContactInput): Promise<ContactView> {
    const current = await this.live(tenant, id);
    if (current.suspended) throw fail.forbidden('contact_suspended', 'this contact is suspended and cannot be updated');
    const repointed = await this.entityFor(tenant, input);
    const name = label(input.name);
    if (name === '') throw fail.invalid('invalid_value', 'name cannot be empty', 'name');
    let entity = repointed ?? (await this.entities.get(tenant, current.invoice_account_id));
    if (input.invoice_account) entity = await this.entities.update(tenant, entity.id, input.invoice_account);
    const contact = await mutate(this.store.contacts, id, (c) => {
      if (c.suspended) throw fail.forbidden('contact_suspended', 'this contact is suspended and cannot be updated');
      if (c.deleted) throw fail.notFound('contact');
      const nextName = name ?? c.name;
      return withEvent({ ...c, name: nextName, invoice_account_id: entity.id, search_text: searchText(nextName, entity.name), updated_at: now() }, 'contact', 'updated');
    });
    this.written();
    if (input.invoice_account) await this.reindexEntity(tenant, entity);
    return { contact: contact!, entity };
  }

  /** Other contacts of the same legal entity keep matching `q` on its new name. */
  private async reindexEntity(tenant: Tenant, entity: LegalEntityRecord): Promise<void> {
    let after: number | undefined;
    for (;;) {
      const batch = await this.store.contacts.list({
        where: { ...tenantWhere(tenant), invoice_account_id: entity.id },
        after: after === undefined ? undefined : [after],
        limit: 100,
      });
      for (const c of batch) {
        const text = searchText(c.name, entity.name);
        if (c.search_text !== text) await mutate(this.store.contacts, c.id, (x) => ({ ...x, search_text: searchText(x.name, entity.name) }));
      }
      if (batch.length < 100) return;
      after = batch[batch.length - 1].id;
    }
  }

  async delete(tenant: Tenant, id: number): Promise<void> {
    await this.live(tenant, id);
    await mutate(this.store.contacts, id, (c) => (c.deleted ? null : withEvent({ ...c, deleted: now(), updated_at: now() }, 'contact', 'deleted')));
    this.written();
  }

  async setSuspended(tenant: Tenant, id: number, suspended: boolean): Promise<ContactView> {
    await this.live(tenant, id);
    const contact = await mutate(this.store.contacts, id, (c) => withEvent({ ...c, suspended, updated_at: now() }, 'contact', 'updated'));
    this.written();
    return { contact: contact!, entity: await this.entities.get(tenant, contact!.invoice_account_id) };
  }
}
