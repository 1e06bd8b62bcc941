// The Suppliers port over gRPC: the contacts service's contacts and legal entities.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Contact, ContactsServiceService, LegalEntityInput } from '../../../gen/invoicing/contacts/v1/contacts';
import { DomainError } from '../../shared/errors';
import { IdempotencyToken } from '../../shared/idempotency';
import { RemoteCallError, toDomainError } from '../../shared/grpc/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { Tenant } from '../../shared/tenant';
import { InlineSupplier, SupplierContact, Suppliers } from '../ports/suppliers';

const unavailable = () => new DomainError('unavailable', 'service_unavailable', 'the contacts service is unavailable');

/** An unreachable contacts service is UNAVAILABLE (503), never INTERNAL; its refusals (422 of a bad
 * VAT id, 403 of a suspended contact) pass through as they are. */
async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof RemoteCallError && [GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED].includes(err.status)) throw unavailable();
    if (err instanceof RemoteCallError) throw toDomainError(err);
    throw err;
  }
}

const supplierOf = (c: Contact): SupplierContact => ({ id: c.id, name: c.name || c.invoice_account?.name || '' });

/** Built with fromPartial: the encoder would write "undefined" for a missing non-optional string. */
const entityInput = (s: InlineSupplier) => LegalEntityInput.fromPartial(s.invoice_account);

export class GrpcSuppliers implements Suppliers {
  private readonly contacts?: AsyncClient<typeof ContactsServiceService> & { close(): void };

  constructor(address: string | undefined) {
    if (address) this.contacts = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', address);
  }

  private client() {
    if (!this.contacts) throw unavailable();
    return this.contacts;
  }

  async find(tenant: Tenant, contactId: number): Promise<SupplierContact | null> {
    const client = this.client();
    try {
      const res = await call(() => client.getContact({ tenant, id: contactId }));
      return res.contact && !res.contact.deleted ? supplierOf(res.contact) : null;
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') return null;
      throw err;
    }
  }

  async findByIdentifier(tenant: Tenant, ids: { registration_id?: string; vat_id?: string }): Promise<SupplierContact | null> {
    const client = this.client();
    const res = await call(() =>
      client.listContactsByIdentifier({ tenant, registration_id: ids.registration_id ?? '', vat_id: ids.vat_id ?? '', page_size: 1 }),
    );
    return res.contacts[0] ? supplierOf(res.contacts[0]) : null;
  }

  async create(tenant: Tenant, supplier: InlineSupplier, token?: IdempotencyToken): Promise<SupplierContact> {
    const client = this.client();
    const res = await call(() =>
      client.createContact({ tenant, name: supplier.contact_name ?? '', invoice_account_id: 0, invoice_account: entityInput(supplier) }, { idempotency: token }),
    );
    return supplierOf(res.contact!);
  }

  async update(tenant: Tenant, contactId: number, supplier: InlineSupplier): Promise<SupplierContact | null> {
    const client = this.client();
    try {
      const res = await call(() => client.updateContact({ tenant, id: contactId, name: supplier.contact_name, invoice_account: entityInput(supplier) }));
      return supplierOf(res.contact!);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') return null;
      throw err;
    }
  }

  close(): void {
    this.contacts?.close();
  }
}
