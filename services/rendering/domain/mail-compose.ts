// The message of a delivery: subject and body as the send request resolved them (the documents service
// applies the spec defaults), or — when a request left them empty — from the localised templates; the
// HTML part wraps the same text; the PDF attached.
import type { DeliveryRecord, MailTemplates, OutgoingMail, PdfDocument } from '../ports/mail';

export function composeMail(record: DeliveryRecord, pdf: PdfDocument, templates: MailTemplates, from: string): OutgoingMail {
  const vars = { number: record.number, message: record.message, locale: record.locale };
  const text = record.message.trim() ? record.message : templates.text(vars);
  return {
    deliveryId: record.delivery_id,
    messageId: record.message_id,
    from,
    to: record.to,
    cc: record.cc,
    bcc: record.bcc,
    subject: record.subject.trim() ? record.subject : templates.subject(vars),
    text,
    html: templates.html({ ...vars, message: text }),
    attachments: [{ filename: pdf.filename, content: pdf.pdf, contentType: 'application/pdf' }],
  };
}
