// MailTransport into a directory (DATA_DIR/outbox): each message built by nodemailer exactly as SMTP
// would carry it (Bcc kept, as the envelope's record) and written as <delivery id>.eml. The write is
// atomic (temporary file, then rename) and idempotent (the name is the delivery), so a retried or
// repeated attempt leaves one file.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { SendMailOptions } from 'nodemailer';
import type { MailTransport, OutgoingMail } from '../ports/mail';
import { toNodemailer } from './nodemailer-message';

export function outboxFileName(deliveryId: string): string {
  return `${deliveryId.replace(/[^A-Za-z0-9._-]/g, '_')}.eml`;
}

export class EmlOutbox implements MailTransport {
  private readonly builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

  constructor(readonly dir: string) {}

  async deliver(mail: OutgoingMail): Promise<void> {
    // keepBcc: the file is the record of what was sent, recipients included.
    const info = (await this.builder.sendMail({ ...toNodemailer(mail), keepBcc: true } as SendMailOptions)) as unknown as { message: Buffer };
    await mkdir(this.dir, { recursive: true });
    const target = path.join(this.dir, outboxFileName(mail.deliveryId));
    const temporary = `${target}.${process.pid}.tmp`;
    await writeFile(temporary, info.message);
    await rename(temporary, target);
  }
}
