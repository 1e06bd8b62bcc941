// The e-invoice export of an issued invoice or credit note (docs/e-invoicing.md): read the document and the
// workspace as a PDF does, answer 304 from the ETag alone (nothing is generated), else map the document to
// the EN 16931 model and write it in the asked syntax. Generated per request (a few ms; no store): an
// issued document's export changes only with its paid state, which changes the ETag with it.
import { createHash } from 'node:crypto';
import { fail } from '../../shared/errors';
import { Tenant } from '../../shared/tenant';
import { DocKind, DocumentSource } from '../ports/document-source';
import { ciiXml } from './einvoice/cii';
import { EInvoice, einvoiceModel } from './einvoice/model';
import { ublXml } from './einvoice/ubl';
import { languageOf } from './labels';
import { fileName, matchesIfNoneMatch, printedSupplier } from './render-input';

/** Bumped with every change of the mapping: a changed export gets a new ETag. */
export const EINVOICE_VERSION = '1';

const WRITERS: Record<string, (inv: EInvoice) => string> = { ubl: ublXml, cii: ciiXml };
export const EINVOICE_FORMATS = Object.keys(WRITERS);

export interface EInvoiceResult {
  etag: string;
  filename: string;
  notModified: boolean;
  /** null when not modified. */
  xml: Buffer | null;
  contentType: string;
}

export class EInvoices {
  constructor(private readonly source: DocumentSource) {}

  async export(tenant: Tenant, kind: DocKind, id: number, format: string, ifNoneMatch = ''): Promise<EInvoiceResult> {
    const write = Object.hasOwn(WRITERS, format) ? WRITERS[format] : undefined;
    if (!write) throw fail.invalid('unsupported_format', `format must be one of: ${EINVOICE_FORMATS.join(', ')}`, 'format');
    if (kind !== 'invoice' && kind !== 'credit_note') throw fail.invalid('unsupported_format', 'only invoices and credit notes are e-invoices', 'format');
    const [doc, workspace] = await Promise.all([this.source.document(tenant, kind, id), this.source.workspace(tenant.account_id)]);
    if (doc.status === 'draft' || doc.number === null) {
      throw fail.invalid('document_not_issued', `only an issued ${kind.replace('_', ' ')} can be exported as an e-invoice`);
    }
    const supplier = printedSupplier(doc, workspace);
    const etag = `"${createHash('sha256').update(JSON.stringify({ v: EINVOICE_VERSION, format, doc, supplier })).digest('base64url').slice(0, 22)}"`;
    const filename = fileName(doc, languageOf(doc.pdf_language)).replace(/\.pdf$/, '.xml');
    const contentType = 'application/xml';
    if (matchesIfNoneMatch(ifNoneMatch, etag)) return { etag, filename, notModified: true, xml: null, contentType };
    return { etag, filename, notModified: false, xml: Buffer.from(write(einvoiceModel(doc, supplier)), 'utf8'), contentType };
  }
}
