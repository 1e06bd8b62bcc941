// Fault test of the mail service (distributed mode, a Mailpit of its own): the SMTP server is down while
// invoices are sent, and the services restart meanwhile. Nothing is lost — every delivery stays queued
// and is retried with backoff — and once Mailpit is back each e-mail arrives exactly once.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DeliveryStatus, MailServiceService } from '../../gen/invoicing/rendering/v1/rendering';
import { connect } from '../../services/shared/grpc/typed';
import { Api, eventually } from '../support/api';
import { createPurchaser, docsWorkspace, line } from '../support/documents';
import { startEngine, stopEngine } from '../support/engines';
import { mailpitMessagesTo } from '../support/mail';
import { startSystem, System } from '../support/system';

let mailpitDir: string;
let mailpitApi: string;
let system: System;

beforeAll(async () => {
  mailpitDir = mkdtempSync(path.join(os.tmpdir(), 'mail-outage-'));
  await startEngine('mailpit', mailpitDir);
  const ports = readFileSync(path.join(mailpitDir, 'ports'), 'utf8');
  const port = (name: string) => new RegExp(`^${name} (\\d+)$`, 'm').exec(ports)![1];
  mailpitApi = `http://127.0.0.1:${port('mailpit_http')}`;
  system = await startSystem({
    mode: 'distributed',
    // Quick retries, and enough of them to outlast the outage.
    env: { SMTP_URL: `smtp://127.0.0.1:${port('mailpit')}`, MAIL_POLL_MS: '100', MAIL_RETRY_BASE_MS: '200', MAIL_RETRY_MAX_MS: '1000', MAIL_MAX_ATTEMPTS: '1000' },
  });
}, 300_000);

afterAll(async () => {
  await system?.stop();
  if (mailpitDir) {
    await stopEngine('mailpit', mailpitDir).catch(() => undefined);
    rmSync(mailpitDir, { recursive: true, force: true });
  }
});

/** The deliveries of one invoice as the mail service reports them (MailService.ListDeliveries). */
async function deliveriesOf(accountId: number, documentId: number) {
  const client = connect(MailServiceService, 'invoicing.rendering.v1.MailService', system.cliEnv.RENDERING_ADDR);
  try {
    return (await client.listDeliveries({ tenant: { account_id: accountId, livemode: true }, document_id: documentId, page: undefined })).deliveries;
  } finally {
    client.close();
  }
}

describe('mail delivery across an SMTP outage and a restart', () => {
  it('queued sends survive, are retried, and are delivered exactly once when Mailpit returns', async () => {
    const ws = await docsWorkspace(system);
    const invoices: Array<{ id: number; to: string }> = [];
    for (let i = 0; i < 3; i++) {
      const to = `outage-${i}-${randomBytes(4).toString('hex')}@customer.example`;
      const purchaser = await createPurchaser(ws.api, ws.base, `Outage ${i}`, to);
      const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: purchaser, line_items: [line()] });
      await ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`);
      invoices.push({ id: created.body.id, to });
    }

    await stopEngine('mailpit', mailpitDir);
    for (const inv of invoices) {
      expect((await ws.api.post(`${ws.base}/invoices/${inv.id}/send`)).body.email_status).toBe('queued');
    }
    // Every delivery has been attempted (and refused by the dead server) more than once: retrying, not lost.
    for (const inv of invoices) {
      await eventually(async () => {
        const [delivery] = await deliveriesOf(ws.id, inv.id);
        expect(delivery).toMatchObject({ status: DeliveryStatus.DELIVERY_STATUS_QUEUED, route: 'smtp' });
        expect(delivery.attempts).toBeGreaterThanOrEqual(2);
        expect(delivery.last_error).toMatch(/ECONNREFUSED/);
      }, 30_000);
    }

    // The services go down and come back while the sends are still queued.
    await system.restart();
    const api = new Api(system.baseUrl, ws.pat); // the restarted gateway listens on a new port
    for (const inv of invoices) expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.email_status).toBe('queued');

    await startEngine('mailpit', mailpitDir);
    for (const inv of invoices) {
      await eventually(async () => expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.email_status).toBe('sent'), 60_000);
    }
    for (const inv of invoices) {
      const [delivery] = await deliveriesOf(ws.id, inv.id);
      expect(delivery.status).toBe(DeliveryStatus.DELIVERY_STATUS_SENT);
      const received = await mailpitMessagesTo(inv.to, mailpitApi);
      expect(received).toHaveLength(1);
      expect(received[0].messageId).toBe(delivery.message_id);
      expect(received[0].attachments.map((a) => a.contentType)).toEqual(['application/pdf']);
    }
  }, 300_000);
});
