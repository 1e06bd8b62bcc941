// MailTransport over SMTP (nodemailer), for SMTP_URL (smtp://user:pass@host:port, smtps:// for TLS).
// A new connection per message (no pool): deliveries are few and a broken pooled connection would only
// add a failure mode. Timeouts are short so an attempt never outlives its lease.
import nodemailer, { Transporter } from 'nodemailer';
import type { MailTransport, OutgoingMail } from '../ports/mail';
import { toNodemailer } from './nodemailer-message';

export class SmtpTransport implements MailTransport {
  private readonly transporter: Transporter;

  constructor(url: string) {
    this.transporter = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
  }

  async deliver(mail: OutgoingMail): Promise<void> {
    // Throws nodemailer's error (responseCode for SMTP replies, code for connection trouble): the domain
    // reads both (domain/mail-retry.ts).
    await this.transporter.sendMail(toNodemailer(mail));
  }

  close(): void {
    this.transporter.close();
  }
}
