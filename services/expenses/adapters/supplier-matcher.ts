// The supplier of an extracted expense (SupplierMatcher over the contacts service): a contact of the
// workspace whose legal entity has the read registration id (IČO) or VAT id, else a new contact with
// its legal entity made from what was read. The contacts service has no lookup by identifier, so the
// workspace's contacts are paged through (up to MAX_SCANNED). The creation is keyed by the job
// (Idempotency-Key semantics of the contacts service): a job run again after a crash finds the contact
// its first run created instead of creating a second one.
import { ContactsServiceService } from '../../../gen/invoicing/contacts/v1/contacts';
import { DomainError } from '../../shared/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { Tenant } from '../../shared/tenant';
import type { SupplierMatcher } from '../domain/extraction-runner';
import type { ExtractedFields } from '../ports/extractor';
import { Suppliers } from '../ports/suppliers';

const MAX_SCANNED = 2000;
const fold = (id: string | null | undefined) => (id ?? '').replace(/[\s.-]/g, '').toUpperCase();

export class ContactsSupplierMatcher implements SupplierMatcher {
  private readonly contacts?: AsyncClient<typeof ContactsServiceService> & { close(): void };

  constructor(address: string | undefined, private readonly suppliers: Suppliers) {
    if (address) this.contacts = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', address);
  }

  async match(tenant: Tenant, supplier: ExtractedFields['supplier'], jobId?: string): Promise<{ id: number; name: string } | null> {
    const registration = fold(supplier.registration_id);
    const vat = fold(supplier.vat_id);
    if (!registration && !vat && !supplier.name) return null;
    if ((registration || vat) && this.contacts) {
      let cursor = '';
      for (let scanned = 0; scanned < MAX_SCANNED; ) {
        const res = await this.contacts.listContacts({ tenant, page: { page_size: 100, page_token: cursor }, query: '' });
        for (const contact of res.contacts) {
          const entity = contact.invoice_account;
          if (contact.deleted || !entity) continue;
          if ((registration && fold(entity.registration_id) === registration) || (vat && fold(entity.vat_id) === vat)) {
            return { id: contact.id, name: contact.name || entity.name };
          }
        }
        scanned += res.contacts.length;
        if (!res.page_info?.has_more) break;
        cursor = res.page_info.next_page_token;
      }
    }
    // A supplier the contacts service refuses (an identifier that fails its checks) is left unlinked:
    // the fields stay on the expense for a person to fix.
    const created = await this.suppliers.create(
      tenant,
      {
        invoice_account: {
          name: supplier.name ?? undefined,
          registration_id: supplier.registration_id ?? undefined,
          tax_id: supplier.tax_id ?? undefined,
          vat_id: supplier.vat_id ?? undefined,
          address: {
            street: supplier.address.street ?? undefined,
            municipality: supplier.address.municipality ?? undefined,
            postal_code: supplier.address.postal_code ?? undefined,
            country_alpha2: supplier.address.country_alpha2 ?? undefined,
          },
        },
      },
      jobId ? { key: `extraction-job:${jobId}:supplier`, fingerprint: jobId } : undefined,
    ).catch((err: unknown) => {
      if (err instanceof DomainError && err.kind === 'invalid_argument') return null;
      throw err;
    });
    return created;
  }

  close(): void {
    this.contacts?.close();
  }
}
