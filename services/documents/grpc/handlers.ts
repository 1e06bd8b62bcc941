// Thin gRPC handlers: decode, call the domain, encode. Errors are DomainErrors thrown by the domain.
import { DocumentSettingsServiceService, DocumentsAdminServiceService, DocumentsServiceService } from '../../../gen/invoicing/documents/v1/documents';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { requireTenant, tenantKey } from '../../shared/tenant';
import { Documents } from '../domain/documents';
import { Lifecycle } from '../domain/lifecycle';
import { Directory } from '../ports/directory';
import { Settings } from '../domain/settings';
import { docType, fromDocumentInput, toDocumentMessage, toSettingsMessage } from './mapping';

export function documentsHandlers(documents: Documents, lifecycle: Lifecycle, cursors: CursorCodec): AsyncHandlers<typeof DocumentsServiceService> {
  return {
    listDocuments: async (req) => {
      const tenant = requireTenant(req.tenant);
      const type = docType(req.type);
      const filterKey = `documents|${type}|${tenantKey(tenant)}`;
      const page = cursors.resolve(req.page, filterKey);
      const rows = await documents.list(tenant, type, page.limit + 1, page.after?.[0] as number | undefined);
      const { items, page_info } = cursors.page(rows, page.limit, (v) => [v.record.id], filterKey);
      return { documents: items.map(toDocumentMessage), page_info };
    },
    getDocument: async (req) => ({ document: toDocumentMessage(await documents.get(requireTenant(req.tenant), docType(req.type), req.id)) }),
    createDocument: async (req, ctx) => ({
      document: toDocumentMessage(await documents.create(requireTenant(req.tenant), docType(req.type), fromDocumentInput(req.input), ctx.idempotency)),
    }),
    updateDocument: async (req) => ({
      document: toDocumentMessage(await documents.update(requireTenant(req.tenant), docType(req.type), req.id, fromDocumentInput(req.input))),
    }),
    deleteDocument: async (req) => {
      await documents.delete(requireTenant(req.tenant), docType(req.type), req.id);
      return {};
    },
    issueDocument: async (req, ctx) => ({
      document: toDocumentMessage(await lifecycle.issue(requireTenant(req.tenant), docType(req.type), req.id, ctx.idempotency, ctx.deadline)),
    }),
    markInvoicePaid: async (req, ctx) => ({ document: toDocumentMessage(await lifecycle.markPaid(requireTenant(req.tenant), req.id, ctx.idempotency)) }),
    markProformaPaid: async (req, ctx) => ({
      document: toDocumentMessage(await lifecycle.markProformaPaid(requireTenant(req.tenant), req.id, ctx.idempotency)),
    }),
    sendInvoice: async (req, ctx) => ({
      document: toDocumentMessage(
        await lifecycle.send(requireTenant(req.tenant), req.id, {
          to: req.to,
          cc: req.cc,
          bcc: req.bcc,
          subject: req.subject,
          message: req.message,
          locale: req.locale,
        }, ctx.idempotency, req.mail_recipients_per_day),
      ),
    }),
    convertProforma: async (req, ctx) => ({ invoice: toDocumentMessage(await lifecycle.convertProforma(requireTenant(req.tenant), req.id, ctx.idempotency)) }),
    acceptQuote: async (req, ctx) => ({ document: toDocumentMessage(await lifecycle.acceptQuote(requireTenant(req.tenant), req.id, ctx.idempotency)) }),
    convertQuote: async (req, ctx) => ({
      document: toDocumentMessage(await lifecycle.convertQuote(requireTenant(req.tenant), req.id, docType(req.target), ctx.idempotency)),
    }),
  };
}

export function documentsAdminHandlers(settings: Settings): AsyncHandlers<typeof DocumentsAdminServiceService> {
  return {
    getDocumentSettings: async (req) => {
      const stored = await settings.stored(req.account_id);
      return { settings: toSettingsMessage(stored ?? { number_format: '', currency: '', locale: '' }) };
    },
    setDocumentSettings: async (req) => ({
      settings: toSettingsMessage(
        await settings.set(req.account_id, { number_format: req.number_format, currency: req.currency, locale: req.locale }),
      ),
    }),
  };
}

/** The effective settings other services default to (expenses: the workspace currency). */
export function documentSettingsHandlers(settings: Settings, directory: Directory): AsyncHandlers<typeof DocumentSettingsServiceService> {
  return {
    getEffectiveSettings: async (req) => ({ settings: toSettingsMessage(await settings.resolve(req.account_id, await directory.supplier(req.account_id))) }),
  };
}
