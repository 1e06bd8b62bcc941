// What a PDF is a function of, and the strong ETag derived from it: the document as read (its content,
// status and updated_at), the supplier as printed, the logo (content-addressed key), the language and
// the template version. Anything printed changes one of these, so it changes the ETag; the ETag is
// computed before (and without) rendering or reading a stored file.
import { createHash } from 'node:crypto';
import { Tenant } from '../../shared/tenant';
import { PrintableDocument, PrintedParty, Workspace } from '../ports/document-source';
import { Language, languageOf, LABELS } from './labels';

/** The printed words are part of the layout: a changed label changes every ETag too. */
const LABELS_VERSION = createHash('sha256').update(JSON.stringify(LABELS)).digest('hex').slice(0, 16);

export interface RenderInput {
  tenant: Tenant;
  doc: PrintableDocument;
  supplier: PrintedParty;
  logo_key: string | null;
  language: Language;
  template_version: string;
}

/**
 * An issued document prints the supplier snapshot it was issued with (its fiscal content is locked);
 * a draft prints the workspace's current legal identity, so a preview follows identity changes.
 */
export function printedSupplier(doc: PrintableDocument, workspace: Workspace): PrintedParty {
  if (doc.status !== 'draft') return doc.supplier;
  const live = workspace.identity;
  return { ...live, name: live.name || doc.supplier.name };
}

export function renderInput(tenant: Tenant, doc: PrintableDocument, workspace: Workspace, templateVersion: string): RenderInput {
  return {
    tenant: { account_id: tenant.account_id, livemode: tenant.livemode },
    doc,
    supplier: printedSupplier(doc, workspace),
    logo_key: workspace.logo_key,
    language: languageOf(doc.pdf_language),
    template_version: `${templateVersion}.${LABELS_VERSION}`,
  };
}

/** Strong ETag (quoted): 128 bits of SHA-256 over the canonical JSON of the render input. */
export function etagOf(input: RenderInput): string {
  return `"${createHash('sha256').update(JSON.stringify(input)).digest('base64url').slice(0, 22)}"`;
}

/** If-None-Match matches with the weak comparison of RFC 9110 §13.1.2: `*`, or any listed tag equal
 * to ours once a W/ prefix is ignored. */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  const value = header.trim();
  if (!value) return false;
  if (value === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The blob key of a rendered PDF: per tenant (sandbox PDFs never mix with live ones), by ETag. */
export function pdfKey(tenant: Tenant, etag: string): string {
  const hash = Buffer.from(etag.replace(/"/g, ''), 'base64url').toString('hex');
  return `pdfs/${tenant.account_id}/${tenant.livemode ? 'live' : 'test'}/${hash}.pdf`;
}

/** "Faktúra 2026000001.pdf": the localised title and the number (a draft: its id); characters no file
 * system accepts become "-". May be non-ASCII: the gateway adds the RFC 6266 filename* form. */
export function fileName(doc: PrintableDocument, language: Language): string {
  const title = LABELS[language].title[doc.type];
  const name = `${title} ${doc.number ?? `${LABELS[language].draft.toLowerCase()}-${doc.id}`}`;
  return `${name.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, '-')}.pdf`;
}
