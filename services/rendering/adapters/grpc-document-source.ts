// The DocumentSource port over gRPC: documents from the documents service, the workspace's legal
// identity from the identity service, the logo from the blob store (by its content-addressed key), and
// the revision from the change counters both services bump on every write (shared/change-counters.ts).
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Address } from '../../../gen/invoicing/common/v1/common';
import { BankDetails, Document, DocumentsServiceService, DocumentType, Party } from '../../../gen/invoicing/documents/v1/documents';
import { IdentityServiceService } from '../../../gen/invoicing/identity/v1/identity';
import { BlobStore } from '../../shared/blobs/port';
import { ChangeCounters } from '../../shared/change-counters';
import { DomainError, fail } from '../../shared/errors';
import { RemoteCallError } from '../../shared/grpc/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { DocKind, DocumentSource, PrintableDocument, PrintedAddress, PrintedBank, PrintedParty } from '../ports/document-source';

export const DOCUMENT_TYPE_OF: Record<DocKind, DocumentType> = {
  invoice: DocumentType.DOCUMENT_TYPE_INVOICE,
  credit_note: DocumentType.DOCUMENT_TYPE_CREDIT_NOTE,
  proforma: DocumentType.DOCUMENT_TYPE_PROFORMA,
  quote: DocumentType.DOCUMENT_TYPE_QUOTE,
};

const KIND_OF = new Map<DocumentType, DocKind>(Object.entries(DOCUMENT_TYPE_OF).map(([kind, type]) => [type, kind as DocKind]));

const WHAT: Record<DocKind, string> = { invoice: 'invoice', credit_note: 'credit note', proforma: 'proforma', quote: 'quote' };

function address(a: Address | undefined): PrintedAddress | null {
  if (!a) return null;
  return { name: a.name, street: a.street, municipality: a.municipality, postal_code: a.postal_code, country_alpha2: a.country_alpha2 };
}

function party(p: Party | undefined): PrintedParty | null {
  if (!p) return null;
  return { name: p.name, registration_id: p.registration_id, tax_id: p.tax_id, vat_id: p.vat_id, email: p.email, phone: p.phone, address: address(p.address) };
}

function bank(b: BankDetails | undefined): PrintedBank | null {
  if (!b || (!b.iban && !b.account_number)) return null;
  return { name: b.name, iban: b.iban, account_number: b.account_number, bank_code: b.bank_code, swift: b.swift };
}

export function printable(d: Document): PrintableDocument {
  return {
    id: d.id,
    type: KIND_OF.get(d.type) ?? 'invoice',
    number: d.number ?? null,
    status: d.status,
    supplier: party(d.supplier) ?? { name: '', registration_id: '', tax_id: '', vat_id: '', email: '', phone: '', address: null },
    purchaser: party(d.purchaser),
    issue_date: d.issue_date,
    due_date: d.due_date ?? null,
    delivery_date: d.delivery_date ?? null,
    currency: d.currency,
    exchange_rate: d.exchange_rate,
    accounting_currency: d.accounting_currency ?? null,
    pdf_language: d.pdf_language,
    variable_symbol: d.variable_symbol ?? null,
    bank_account: bank(d.bank_account),
    note: d.note ?? null,
    line_items: d.line_items.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity,
      unit: l.unit,
      unit_price: l.unit_price,
      vat_rate: l.vat_rate,
      discount: l.discount,
      net_amount: l.net_amount,
    })),
    subtotal: d.subtotal,
    vat_breakdown: d.vat_breakdown.map((r) => ({ vat_rate: r.vat_rate, base: r.base, vat: r.vat })),
    vat_total: d.vat_total,
    total: d.total,
    credited_amount: d.credited_amount,
    amount_due: d.amount_due,
    paid_on: d.paid_on ?? null,
    invoice_number: d.invoice?.number ?? null,
    buyer_reference: d.buyer_reference ?? null,
    order_reference: d.order_reference ?? null,
    contract_reference: d.contract_reference ?? null,
    updated_at: d.updated_at,
  };
}

const peerUnavailable = (peer: string) => fail.unavailable('service_unavailable', `the ${peer} service is unavailable`, 1);

/** NOT_FOUND → the given error; an unreachable peer → UNAVAILABLE (503), never INTERNAL. */
async function call<T>(peer: string, notFound: DomainError, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof RemoteCallError && err.status === GrpcStatus.NOT_FOUND) throw notFound;
    if (err instanceof RemoteCallError && [GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED].includes(err.status)) throw peerUnavailable(peer);
    throw err;
  }
}

export class GrpcDocumentSource implements DocumentSource {
  private readonly documents?: AsyncClient<typeof DocumentsServiceService> & { close(): void };
  private readonly identity?: AsyncClient<typeof IdentityServiceService> & { close(): void };

  constructor(
    peers: { documents?: string; identity?: string },
    private readonly blobs: BlobStore,
    private readonly counters?: ChangeCounters,
  ) {
    if (peers.documents) this.documents = connect(DocumentsServiceService, 'invoicing.documents.v1.DocumentsService', peers.documents);
    if (peers.identity) this.identity = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', peers.identity);
  }

  async document(tenant: { account_id: number; livemode: boolean }, kind: DocKind, id: number): Promise<PrintableDocument> {
    const documents = this.documents;
    if (!documents) throw peerUnavailable('documents');
    const res = await call('documents', fail.notFound(WHAT[kind]), () => documents.getDocument({ tenant, type: DOCUMENT_TYPE_OF[kind], id }));
    return printable(res.document!);
  }

  async workspace(accountId: number) {
    const identity = this.identity;
    if (!identity) throw peerUnavailable('identity');
    const res = await call('identity', fail.notFound('account'), () => identity.getAccount({ account_id: accountId }));
    const account = res.account!;
    const li = account.legal_identity;
    return {
      identity: {
        name: li?.name || account.name,
        registration_id: li?.registration_id ?? '',
        tax_id: li?.tax_id ?? '',
        vat_id: li?.vat_id ?? '',
        email: li?.email ?? '',
        phone: li?.phone_number ?? '',
        address: address(li?.address),
      },
      logo_key: account.logo_key ?? null,
    };
  }

  async revision(tenant: { account_id: number }, _kind: DocKind, id: number): Promise<string | null> {
    if (!this.counters) return null;
    try {
      const [document, account] = await Promise.all([this.counters.read('documents', id), this.counters.read('accounts', tenant.account_id)]);
      return `${document}.${account}`;
    } catch {
      // The store unreachable: the services still answer (nothing is kept or used meanwhile).
      return null;
    }
  }

  async logo(key: string) {
    const blob = await this.blobs.get(key);
    return blob ? { data: blob.data, contentType: blob.contentType } : null;
  }

  close(): void {
    this.documents?.close();
    this.identity?.close();
  }
}
