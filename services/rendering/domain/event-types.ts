// Which internal events a tenant sees, and under which public type (docs/events.md "Types"). An event
// is public only when its outbox entry carried the resource (ResourceSnapshot) of its own kind.
const PUBLIC_TYPES: Record<string, string> = {
  'documents.invoice.created': 'invoice.created',
  'documents.invoice.updated': 'invoice.updated',
  'documents.invoice.deleted': 'invoice.deleted',
  'documents.invoice.issued': 'invoice.issued',
  'documents.invoice.paid': 'invoice.paid',
  // The send is accepted and queued: the e-mail's outcome follows as email.delivered|failed.
  'documents.invoice.send_requested': 'invoice.sent',
  'documents.invoice.email_delivered': 'email.delivered',
  'documents.invoice.email_failed': 'email.failed',
  'documents.credit_note.created': 'credit_note.created',
  'documents.credit_note.updated': 'credit_note.updated',
  'documents.credit_note.deleted': 'credit_note.deleted',
  'documents.credit_note.issued': 'credit_note.issued',
  'documents.proforma.created': 'proforma.created',
  'documents.proforma.updated': 'proforma.updated',
  'documents.proforma.deleted': 'proforma.deleted',
  'documents.proforma.issued': 'proforma.issued',
  'documents.proforma.paid': 'proforma.paid',
  'documents.proforma.converted': 'proforma.converted',
  'documents.quote.created': 'quote.created',
  'documents.quote.updated': 'quote.updated',
  'documents.quote.deleted': 'quote.deleted',
  'documents.quote.accepted': 'quote.accepted',
  // documents.quote.converted is stored on the document made from the quote: that document's own
  // `.created` event says it; the quote itself does not change.
  'contacts.contact.created': 'contact.created',
  'contacts.contact.updated': 'contact.updated',
  'contacts.contact.deleted': 'contact.deleted',
  'contacts.bank_account.created': 'bank_account.created',
  'contacts.bank_account.updated': 'bank_account.updated',
  'contacts.bank_account.deleted': 'bank_account.deleted',
  'expenses.expense.created': 'expense.created',
  'expenses.expense.updated': 'expense.updated',
  'expenses.expense.deleted': 'expense.deleted',
  'expenses.expense.extraction_completed': 'expense.extraction_completed',
  'expenses.expense.extraction_failed': 'expense.extraction_failed',
};

/** The public type of an internal event type, or undefined when tenants do not see it. */
export function publicTypeOf(internalType: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(PUBLIC_TYPES, internalType) ? PUBLIC_TYPES[internalType] : undefined;
}

/** Every public type, for the OpenAPI document's check and the docs. */
export const PUBLIC_EVENT_TYPES: readonly string[] = [...new Set(Object.values(PUBLIC_TYPES))];
