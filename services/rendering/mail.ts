// The e-mail half of the rendering service, a part of it (see part.ts): deliveries in the store, the
// send_requested consumer and dispatcher, the outcome relay, the MailService handlers. The PDF is the
// service's own (the same stored file a download serves).
import path from 'node:path';
import { MailServiceService } from '../../gen/invoicing/rendering/v1/rendering';
import { ConfigError, readEnv } from '../shared/config';
import { implement, restrict } from '../shared/grpc/typed';
import { outboxRelayOptions } from '../shared/outbox/options';
import { OutboxRelay } from '../shared/outbox/relay';
import { CursorCodec } from '../shared/pagination';
import { deliveriesCollection, deliveriesOutbox } from './adapters/delivery-store';
import { EmlOutbox } from './adapters/eml-outbox';
import { MailWorker } from './adapters/mail-worker';
import { HandlebarsMailTemplates } from './adapters/mail-templates';
import { PdfsPdfSource } from './adapters/pdfs-pdf-source';
import { SmtpTransport } from './adapters/smtp-transport';
import { DEFAULT_DISPATCH, DispatchLimits, Mailer } from './domain/mailer';
import { MailLanes, mailLanesSpec } from './domain/mail-lanes';
import { mailHandlers } from './grpc/mail-handlers';
import { DEFAULT_RETRY, RetryPolicy } from './domain/mail-retry';
import { RenderingPart } from './part';

export interface MailConfig {
  smtpUrl?: string;
  from: string;
  messageIdDomain: string;
  outboxDir: string;
  pollMs: number;
  leaseMs: number;
  /** An SMTP attempt's overall deadline; shorter than the lease (checked at start). */
  smtpTimeoutMs: number;
  maxRequestAgeMs: number;
  retry: RetryPolicy;
  dispatch: DispatchLimits;
}

export function readMailConfig(env: NodeJS.ProcessEnv = process.env): MailConfig {
  const { str, optional, int } = readEnv(env);
  const from = str('MAIL_FROM', 'Invoicing <invoices@invoicing.localhost>');
  const fromDomain = /@([^>\s]+)>?\s*$/.exec(from)?.[1];
  if (!fromDomain) throw new ConfigError(`MAIL_FROM must be an e-mail address (optionally "Name <address>"), got "${from}"`);
  const smtpUrl = optional('SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${smtpUrl}"`);
  const maxAttempts = int('MAIL_MAX_ATTEMPTS', DEFAULT_RETRY.maxAttempts);
  if (maxAttempts < 1) throw new ConfigError('MAIL_MAX_ATTEMPTS must be at least 1');
  const leaseMs = int('MAIL_LEASE_MS', 120_000);
  const smtpTimeoutMs = int('MAIL_SMTP_TIMEOUT_MS', 60_000);
  // The lease must outlast the attempt, or a second replica takes the delivery over while the first
  // one's relay is still talking — and the message goes out twice.
  if (smtpTimeoutMs < 1 || smtpTimeoutMs >= leaseMs) throw new ConfigError(`MAIL_SMTP_TIMEOUT_MS (${smtpTimeoutMs}) must be positive and below MAIL_LEASE_MS (${leaseMs})`);
  const perWorkspace = int('MAIL_WORKSPACE_CONCURRENCY', DEFAULT_DISPATCH.perWorkspace);
  const concurrency = int('MAIL_DISPATCH_CONCURRENCY', DEFAULT_DISPATCH.concurrency);
  if (perWorkspace < 1 || concurrency < 1) throw new ConfigError('MAIL_WORKSPACE_CONCURRENCY and MAIL_DISPATCH_CONCURRENCY must be at least 1');
  return {
    smtpUrl,
    from,
    messageIdDomain: optional('MAIL_MESSAGE_ID_DOMAIN') ?? fromDomain,
    outboxDir: path.resolve(optional('MAIL_OUTBOX_DIR') ?? path.join(str('DATA_DIR', '.data'), 'outbox')),
    pollMs: int('MAIL_POLL_MS', 1000),
    leaseMs,
    smtpTimeoutMs,
    dispatch: { perWorkspace, concurrency },
    maxRequestAgeMs: int('MAIL_REQUEST_MAX_AGE_MS', 24 * 3600_000),
    retry: { baseMs: int('MAIL_RETRY_BASE_MS', DEFAULT_RETRY.baseMs), maxMs: int('MAIL_RETRY_MAX_MS', DEFAULT_RETRY.maxMs), maxAttempts },
  };
}

export const mailPart: RenderingPart = {
  name: 'mail',
  async create(deps) {
    const config = readMailConfig();
    const { adapters, log, secrets } = deps;
    const deliveries = deliveriesCollection(adapters.store);
    const relay = new OutboxRelay([deliveriesOutbox(deliveries)], adapters.bus, log, outboxRelayOptions());
    const smtp = config.smtpUrl ? new SmtpTransport(config.smtpUrl) : undefined;
    const mailer = new Mailer({
      deliveries,
      lanes: new MailLanes(adapters.store.collection(mailLanesSpec), () => adapters.store.nextId('mail_lanes')),
      nextId: () => adapters.store.nextId('mail_deliveries'),
      transports: { outbox: new EmlOutbox(config.outboxDir), smtp },
      pdfs: new PdfsPdfSource(deps.pdfs),
      templates: new HandlebarsMailTemplates(),
      from: config.from,
      messageIdDomain: config.messageIdDomain,
      retry: config.retry,
      leaseMs: config.leaseMs,
      attemptTimeoutMs: config.smtpTimeoutMs,
      dispatch: config.dispatch,
      maxRequestAgeMs: config.maxRequestAgeMs,
      clock: { now: () => new Date() },
      onOutcome: () => relay.notify(),
    });
    const worker = new MailWorker(mailer, adapters.bus, log, { pollMs: config.pollMs });
    relay.start();
    await worker.start();
    return {
      bindings: [
        restrict(implement('invoicing.rendering.v1.MailService', MailServiceService, mailHandlers(mailer, new CursorCodec(secrets.cursorSecret)), log), {
          callers: ['gateway'],
        }),
      ],
      async stop() {
        await worker.stop();
        await relay.stop();
        smtp?.close();
      },
    };
  },
};
