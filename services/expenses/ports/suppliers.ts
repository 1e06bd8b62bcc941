// What the expenses domain needs from the contacts service: the workspace's contacts as suppliers.
// Implemented over gRPC in adapters/grpc-suppliers.ts.
import type { IdempotencyToken } from '../../shared/idempotency';
import { Tenant } from '../../shared/tenant';

export interface SupplierContact {
  id: number;
  /** The contact's name, else its legal entity's. */
  name: string;
}

export interface SupplierAddressInput {
  name?: string;
  street?: string;
  municipality?: string;
  postal_code?: string;
  country_alpha2?: string;
  contact?: string;
}

/** The body's top-level `unit`, `invoice_account` and `address`, as the contacts service takes them. */
export interface InlineSupplier {
  contact_name?: string;
  invoice_account: {
    name?: string;
    registration_id?: string;
    tax_id?: string;
    vat_id?: string;
    email?: string;
    phone?: string;
    address?: SupplierAddressInput;
  };
}

export interface Suppliers {
  /** A live (not deleted) contact of the tenant, or null. */
  find(tenant: Tenant, contactId: number): Promise<SupplierContact | null>;
  /**
   * The newest live contact whose legal entity has the registration id, else the VAT id (separators and
   * case ignored); null when none. An index lookup in the contacts service, unbounded by the workspace's size.
   */
  findByIdentifier(tenant: Tenant, ids: { registration_id?: string; vat_id?: string }): Promise<SupplierContact | null>;
  /** Creates a contact with a new legal entity; under `token`, a retry answers the contact the first attempt created. */
  create(tenant: Tenant, supplier: InlineSupplier, token?: IdempotencyToken): Promise<SupplierContact>;
  /** Updates the contact and its legal entity (fields given only); null when the contact is gone. */
  update(tenant: Tenant, contactId: number, supplier: InlineSupplier): Promise<SupplierContact | null>;
}

export interface Clock {
  now(): Date;
}
