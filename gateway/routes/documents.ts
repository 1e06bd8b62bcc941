// /accounts/:account_id/{invoices,credit_notes,proformas,quotes} — spec §3–§4. One route set per
// document type; the type always comes from the route, never from a body.
import { DocumentInput, DocumentType, LineItemInput } from '../../gen/invoicing/documents/v1/documents';
import type { Resource } from '../../services/shared/credentials';
import { RequestContext } from '../http/context';
import { listEnvelope, pageQuery, pathId } from '../http/ids';
import { presentDocument } from './document-presenters';
import { RouteSpec } from './route';

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Kind {
  segment: Resource & ('invoices' | 'credit_notes' | 'proformas' | 'quotes');
  type: DocumentType;
  /** Operation id stem: listInvoices, createInvoice, … */
  singular: string;
  plural: string;
  what: string;
}

const KINDS: Kind[] = [
  { segment: 'invoices', type: DocumentType.DOCUMENT_TYPE_INVOICE, singular: 'Invoice', plural: 'Invoices', what: 'invoice' },
  { segment: 'credit_notes', type: DocumentType.DOCUMENT_TYPE_CREDIT_NOTE, singular: 'CreditNote', plural: 'CreditNotes', what: 'credit note' },
  { segment: 'proformas', type: DocumentType.DOCUMENT_TYPE_PROFORMA, singular: 'Proforma', plural: 'Proformas', what: 'proforma' },
  { segment: 'quotes', type: DocumentType.DOCUMENT_TYPE_QUOTE, singular: 'Quote', plural: 'Quotes', what: 'quote' },
];

/**
 * Money and quantities: decimal strings verbatim; JSON numbers by their shortest round-trip decimal
 * (the literal the client wrote, for up to 15 significant digits). The service parses them exactly.
 */
const decimal = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' ? String(value) : (value as string);
};
/** JSON null clears an optional field; the RPC spells "clear" as an empty string (or id 0). */
const clearable = (value: unknown): string | undefined => (value === null ? '' : (value as string | undefined));
const clearableId = (value: unknown): number | undefined => (value === null ? 0 : (value as number | undefined));

function lineItem(item: Body): LineItemInput {
  return {
    name: item.name ?? '',
    description: item.description ?? undefined,
    quantity: decimal(item.quantity) ?? '',
    unit: item.unit ?? undefined,
    unit_price: decimal(item.unit_price) ?? '',
    vat_rate: decimal(item.vat_rate) ?? '',
    discount: decimal(item.discount) ?? '',
  };
}

function documentInput(body: Body): DocumentInput {
  return {
    purchaser_id: body.purchaser_id,
    issue_date: body.issue_date,
    due_date: clearable(body.due_date),
    delivery_date: clearable(body.delivery_date),
    currency: body.currency,
    exchange_rate: body.exchange_rate === null ? '' : decimal(body.exchange_rate),
    pdf_language: body.pdf_language,
    variable_symbol: clearable(body.variable_symbol),
    bank_account_id: clearableId(body.bank_account_id),
    note: clearable(body.note),
    line_items: Array.isArray(body.line_items) ? { items: body.line_items.map(lineItem) } : undefined,
    invoice_id: clearableId(body.invoice_id),
    paid_on: clearable(body.paid_on),
    buyer_reference: clearable(body.buyer_reference),
    order_reference: clearable(body.order_reference),
    contract_reference: clearable(body.contract_reference),
  };
}

/** What a document body copies from other resources: the purchaser's details, the bank account, and
 * (credit notes) the invoice's purchaser, currency and lines. */
function readsOf(kind: Kind): RouteSpec['reads'] {
  const reads: RouteSpec['reads'] = { purchaser_id: 'contacts', bank_account_id: 'bank_accounts' };
  if (kind.segment === 'credit_notes') reads.invoice_id = 'invoices';
  return reads;
}

const addresses = (value: unknown): string[] => (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value as string]);

const id = (ctx: RequestContext, kind: Kind) => pathId(ctx.params.id, kind.what);
const opts = (ctx: RequestContext) => ({ requestId: ctx.requestId });

function crudRoutes(kind: Kind): RouteSpec[] {
  const base = `/accounts/:account_id/${kind.segment}`;
  return [
    {
      method: 'get',
      path: base,
      operationId: `list${kind.plural}`,
      scope: ['read', kind.segment],
      handle: async (ctx, { documents }) => {
        const res = await documents.listDocuments({ tenant: ctx.tenant, type: kind.type, page: pageQuery(ctx.query) }, opts(ctx));
        return { status: 200, body: listEnvelope(res.documents.map(presentDocument), res.page_info) };
      },
    },
    {
      method: 'post',
      path: base,
      operationId: `create${kind.singular}`,
      scope: ['write', kind.segment],
      reads: readsOf(kind),
      handle: async (ctx, { documents }) => {
        const res = await documents.createDocument({ tenant: ctx.tenant, type: kind.type, input: documentInput(ctx.body as Body) }, opts(ctx));
        return { status: 201, body: presentDocument(res.document!) };
      },
    },
    {
      method: 'get',
      path: `${base}/:id`,
      operationId: `get${kind.singular}`,
      scope: ['read', kind.segment],
      handle: async (ctx, { documents }) => {
        const res = await documents.getDocument({ tenant: ctx.tenant, type: kind.type, id: id(ctx, kind) }, opts(ctx));
        return { status: 200, body: presentDocument(res.document!) };
      },
    },
    {
      method: 'patch',
      path: `${base}/:id`,
      operationId: `update${kind.singular}`,
      scope: ['write', kind.segment],
      reads: readsOf(kind),
      handle: async (ctx, { documents }) => {
        const res = await documents.updateDocument(
          { tenant: ctx.tenant, type: kind.type, id: id(ctx, kind), input: documentInput(ctx.body as Body) },
          opts(ctx),
        );
        return { status: 200, body: presentDocument(res.document!) };
      },
    },
    {
      method: 'delete',
      path: `${base}/:id`,
      operationId: `delete${kind.singular}`,
      scope: ['write', kind.segment],
      handle: async (ctx, { documents }) => {
        await documents.deleteDocument({ tenant: ctx.tenant, type: kind.type, id: id(ctx, kind) }, opts(ctx));
        return { status: 204 };
      },
    },
  ];
}

const [INVOICES, CREDIT_NOTES, PROFORMAS, QUOTES] = KINDS;

/** The plan's daily recipient allowance for send; unset when the plan names none (the service's default). */
const mailRecipientsPerDay = (ctx: RequestContext): number | undefined => {
  const quota = ctx.access?.subscription.quotas.mail_recipients_per_day;
  return quota === undefined ? undefined : Number(quota);
};

const actionRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: '/accounts/:account_id/invoices/:id/issue',
    operationId: 'issueInvoice',
    scope: ['manage', 'invoices'],
    handle: async (ctx, { documents }) => {
      const res = await documents.issueDocument({ tenant: ctx.tenant, type: INVOICES.type, id: id(ctx, INVOICES) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/invoices/:id/send',
    operationId: 'sendInvoice',
    scope: ['manage', 'invoices'],
    handle: async (ctx, { documents }) => {
      const body = (ctx.body ?? {}) as Body;
      const res = await documents.sendInvoice(
        {
          tenant: ctx.tenant,
          id: id(ctx, INVOICES),
          to: addresses(body.to),
          cc: addresses(body.cc),
          bcc: addresses(body.bcc),
          subject: body.subject ?? undefined,
          message: body.message ?? undefined,
          locale: body.locale ?? undefined,
          mail_recipients_per_day: mailRecipientsPerDay(ctx),
        },
        opts(ctx),
      );
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/invoices/:id/mark_paid',
    operationId: 'markInvoicePaid',
    scope: ['manage', 'invoices'],
    handle: async (ctx, { documents }) => {
      const res = await documents.markInvoicePaid({ tenant: ctx.tenant, id: id(ctx, INVOICES) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/credit_notes/:id/issue',
    operationId: 'issueCreditNote',
    scope: ['manage', 'credit_notes'],
    handle: async (ctx, { documents }) => {
      const res = await documents.issueDocument({ tenant: ctx.tenant, type: CREDIT_NOTES.type, id: id(ctx, CREDIT_NOTES) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/proformas/:id/issue',
    operationId: 'issueProforma',
    scope: ['manage', 'proformas'],
    handle: async (ctx, { documents }) => {
      const res = await documents.issueDocument({ tenant: ctx.tenant, type: PROFORMAS.type, id: id(ctx, PROFORMAS) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/proformas/:id/mark_paid',
    operationId: 'markProformaPaid',
    scope: ['manage', 'proformas'],
    handle: async (ctx, { documents }) => {
      const res = await documents.markProformaPaid({ tenant: ctx.tenant, id: id(ctx, PROFORMAS) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/proformas/:id/convert_to_invoice',
    operationId: 'convertProformaToInvoice',
    scope: ['manage', 'proformas'],
    alsoRequires: [['write', 'invoices']],
    handle: async (ctx, { documents }) => {
      const res = await documents.convertProforma({ tenant: ctx.tenant, id: id(ctx, PROFORMAS) }, opts(ctx));
      return { status: 201, body: presentDocument(res.invoice!) };
    },
  },
  {
    method: 'post',
    path: '/accounts/:account_id/quotes/:id/accept',
    operationId: 'acceptQuote',
    scope: ['manage', 'quotes'],
    handle: async (ctx, { documents }) => {
      const res = await documents.acceptQuote({ tenant: ctx.tenant, id: id(ctx, QUOTES) }, opts(ctx));
      return { status: 200, body: presentDocument(res.document!) };
    },
  },
  ...(['invoice', 'proforma'] as const).map(
    (target): RouteSpec => ({
      method: 'post',
      path: `/accounts/:account_id/quotes/:id/convert_to_${target}`,
      operationId: target === 'invoice' ? 'convertQuoteToInvoice' : 'convertQuoteToProforma',
      scope: ['manage', 'quotes'],
      alsoRequires: [['write', target === 'invoice' ? 'invoices' : 'proformas']],
      handle: async (ctx, { documents }) => {
        const res = await documents.convertQuote(
          { tenant: ctx.tenant, id: id(ctx, QUOTES), target: target === 'invoice' ? INVOICES.type : PROFORMAS.type },
          opts(ctx),
        );
        return { status: 201, body: presentDocument(res.document!) };
      },
    }),
  ),
];

export const documentRoutes: RouteSpec[] = [...KINDS.flatMap(crudRoutes), ...actionRoutes];
