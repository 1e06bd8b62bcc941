// One OutgoingMail → nodemailer message mapping, shared by the SMTP transport and the .eml outbox so a
// file in the outbox is byte-for-byte the message SMTP would have carried.
import type { SendMailOptions } from 'nodemailer';
import type { OutgoingMail } from '../ports/mail';

export function toNodemailer(mail: OutgoingMail): SendMailOptions {
  return {
    messageId: mail.messageId,
    from: mail.from,
    to: mail.to,
    cc: mail.cc.length ? mail.cc : undefined,
    bcc: mail.bcc.length ? mail.bcc : undefined,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    attachments: mail.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
    headers: { 'X-Invoicing-Delivery': mail.deliveryId },
  };
}
