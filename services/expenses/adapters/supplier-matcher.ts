// The supplier of an extracted expense (SupplierMatcher over the Suppliers port): a contact of the
// workspace whose legal entity has the read registration id (IČO) or VAT id — the contacts service's
// index lookup (ListContactsByIdentifier), whatever the size of the workspace — else a new contact with
// its legal entity made from what was read. The creation is keyed by the job (Idempotency-Key semantics
// of the contacts service): a job run again after a crash finds the contact its first run created
// instead of creating a second one.
import { DomainError } from '../../shared/errors';
import { derivedToken, IdempotencyToken } from '../../shared/idempotency';
import { Tenant } from '../../shared/tenant';
import type { SupplierMatcher } from '../domain/extraction-runner';
import type { ExtractedFields } from '../ports/extractor';
import { Suppliers } from '../ports/suppliers';

/** The contacts service's key of the supplier a job creates: `extraction-job-<job id>-supplier`. */
export const jobSupplierToken = (jobId: string): IdempotencyToken => derivedToken(`extraction-job-${jobId}`, 'supplier');

export class ContactsSupplierMatcher implements SupplierMatcher {
  constructor(private readonly suppliers: Suppliers) {}

  async match(tenant: Tenant, supplier: ExtractedFields['supplier'], jobId?: string): Promise<{ id: number; name: string } | null> {
    const registration = supplier.registration_id?.trim() ?? '';
    const vat = supplier.vat_id?.trim() ?? '';
    if (!registration && !vat && !supplier.name) return null;
    if (registration || vat) {
      const known = await this.suppliers.findByIdentifier(tenant, { registration_id: registration, vat_id: vat });
      if (known) return known;
    }
    // A supplier the contacts service refuses (an identifier that fails its checks) is left unlinked:
    // the fields stay on the expense for a person to fix.
    return this.suppliers
      .create(
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
        jobId ? jobSupplierToken(jobId) : undefined,
      )
      .catch((err: unknown) => {
        if (err instanceof DomainError && err.kind === 'invalid_argument') return null;
        throw err;
      });
  }
}
