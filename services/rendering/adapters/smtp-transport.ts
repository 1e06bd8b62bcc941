// MailTransport over SMTP (nodemailer), for SMTP_URL (smtp://user:pass@host:port, smtps:// for TLS).
// A new connection per message (no pool): a broken pooled connection would only add a failure mode.
// Each attempt has an overall deadline (the Mailer's: MAIL_SMTP_TIMEOUT_MS, and always before the
// delivery's lease ends): nodemailer's per-phase timeouts alone let a relay that answers slowly but
// steadily hold an attempt for ever — past its lease, when another replica would take the delivery
// and send it again. At the deadline the socket is destroyed (not closed politely: a stalled relay
// would keep it), the transaction is abandoned before the relay accepted it, and the attempt fails
// as temporary: retried later, with the same Message-ID.
import nodemailer, { Transporter } from 'nodemailer';
import type { DeliverOptions, MailTransport, OutgoingMail } from '../ports/mail';
import { toNodemailer } from './nodemailer-message';

export class SmtpTransport implements MailTransport {
  private readonly transporter: Transporter;

  constructor(url: string) {
    // socketCloseTimeout 0: an aborted attempt destroys its socket at once.
    this.transporter = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, socketCloseTimeout: 0 } as never);
  }

  async deliver(mail: OutgoingMail, options: DeliverOptions = {}): Promise<void> {
    const budgetMs = options.deadline ? options.deadline.getTime() - Date.now() : undefined;
    if (budgetMs !== undefined && budgetMs <= 0) throw Object.assign(new Error('no time left for an SMTP attempt before the lease ends'), { code: 'ETIMEDOUT' });
    const signal = budgetMs === undefined ? undefined : AbortSignal.timeout(budgetMs);
    try {
      // Throws nodemailer's error (responseCode for SMTP replies, code for connection trouble): the
      // domain reads both (domain/mail-retry.ts).
      await this.transporter.sendMail({ ...toNodemailer(mail), signal } as never);
    } catch (err) {
      if (signal?.aborted) {
        throw Object.assign(new Error(`the SMTP attempt did not finish within its deadline (${budgetMs} ms); abandoned, retried later`), { code: 'ETIMEDOUT' });
      }
      throw err;
    }
  }

  close(): void {
    this.transporter.close();
  }
}
