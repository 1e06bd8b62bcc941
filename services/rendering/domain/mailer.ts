// The mail service: accepts send requests (idempotently, keyed by the event id), attempts due
// deliveries (one attempt per claim, compare-and-set), and answers what happened to them.
import { fail } from '../../shared/errors';
import { CursorCodec, PageInput } from '../../shared/pagination';
import { Collection, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { ownedBy, Tenant, tenantKey } from '../../shared/tenant';
import type { DeliveryRecord, DeliveryRoute, MailTemplates, MailTransport, PdfSource, SendRequest, TransportFailure } from '../ports/mail';
import { composeMail } from './mail-compose';
import { attemptFailed, claim, expiredRequest, isDue, newDelivery, routeFor, succeeded } from './mail-delivery';
import { RetryPolicy } from './mail-retry';

export interface MailerDeps {
  deliveries: Collection<DeliveryRecord>;
  /** Record ids (the store's sequence). */
  nextId(): Promise<number>;
  /** `outbox` always; `smtp` only when SMTP_URL is configured. */
  transports: { outbox: MailTransport; smtp?: MailTransport };
  pdfs: PdfSource;
  templates: MailTemplates;
  from: string;
  messageIdDomain: string;
  retry: RetryPolicy;
  /** How long an attempt holds its delivery (longer than the slowest send; a crash frees it after). */
  leaseMs: number;
  /** Requests older than this when they arrive are failed, not delivered late (see expiredRequest). */
  maxRequestAgeMs: number;
  clock: { now(): Date };
  /** Called after an outcome was written (wakes the outbox relay). */
  onOutcome?: () => void;
}

/** Queued deliveries looked at per dispatch round. */
const SCAN_LIMIT = 500;

export class Mailer {
  constructor(private readonly deps: MailerDeps) {}

  /** Records a send request as a queued delivery; a request already recorded (redelivery) changes nothing. */
  async accept(request: SendRequest): Promise<DeliveryRecord> {
    const existing = await this.deps.deliveries.findOne({ delivery_id: request.id });
    if (existing) return existing;
    const route = routeFor(request, this.deps.transports.smtp !== undefined);
    const now = this.deps.clock.now();
    const fresh = { ...newDelivery(request, { now, route, messageIdDomain: this.deps.messageIdDomain }), id: await this.deps.nextId(), version: 0 };
    const record = expiredRequest(fresh, now, this.deps.maxRequestAgeMs) ?? fresh;
    try {
      const inserted = await this.deps.deliveries.insert(record);
      if (inserted.status === 'failed') this.deps.onOutcome?.();
      return inserted;
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      const winner = await this.deps.deliveries.findOne({ delivery_id: request.id });
      if (!winner) throw err;
      return winner;
    }
  }

  /** Attempts every due delivery once; returns how many attempts were made. */
  async dispatchDue(): Promise<number> {
    const now = this.deps.clock.now();
    const queued = await this.deps.deliveries.list({ where: { status: 'queued' }, limit: SCAN_LIMIT });
    const due = queued.filter((r) => isDue(r, now)).sort((a, b) => a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id - b.id);
    let attempts = 0;
    for (const record of due) {
      if (await this.attempt(record)) attempts++;
    }
    return attempts;
  }

  /** One attempt of one delivery, if it can still be claimed. Returns the record after the attempt. */
  async attempt(candidate: DeliveryRecord): Promise<DeliveryRecord | null> {
    const claimed = claim(candidate, this.deps.clock.now(), this.deps.leaseMs);
    if (!claimed) return null;
    let mine: DeliveryRecord;
    try {
      mine = await this.deps.deliveries.update(claimed);
    } catch (err) {
      if (err instanceof VersionConflict) return null; // another dispatcher took it
      throw err;
    }
    let outcome: DeliveryRecord;
    try {
      const pdf = await this.deps.pdfs.pdf({ account_id: mine.account_id, livemode: mine.livemode }, mine.document_id);
      await this.transportFor(mine.route).deliver(composeMail(mine, pdf, this.deps.templates, this.deps.from));
      outcome = succeeded(mine, this.deps.clock.now());
    } catch (err) {
      outcome = attemptFailed(mine, asFailure(err), this.deps.clock.now(), this.deps.retry);
    }
    // Our lease makes us the only writer; a conflict means the lease ran out and another attempt took over.
    try {
      const written = await this.deps.deliveries.update(outcome);
      if (written.status !== 'queued') this.deps.onOutcome?.();
      return written;
    } catch (err) {
      if (err instanceof VersionConflict) return null;
      throw err;
    }
  }

  private transportFor(route: DeliveryRoute): MailTransport {
    if (route === 'smtp' && this.deps.transports.smtp) return this.deps.transports.smtp;
    // A live delivery queued while SMTP was configured, now without it: the outbox keeps it visible.
    return this.deps.transports.outbox;
  }

  async get(tenant: Tenant, deliveryId: string): Promise<DeliveryRecord> {
    const record = await this.deps.deliveries.findOne({ delivery_id: deliveryId });
    if (!record || !ownedBy(record, tenant)) throw fail.notFound('delivery');
    return record;
  }

  async list(tenant: Tenant, documentId: number, page: PageInput | undefined, cursors: CursorCodec) {
    const filterKey = `deliveries|${tenantKey(tenant)}|${documentId}`;
    const resolved = cursors.resolve(page, filterKey);
    const rows = await this.deps.deliveries.list({
      where: { account_id: tenant.account_id, livemode: tenant.livemode, ...(documentId ? { document_id: documentId } : {}) },
      after: resolved.after,
      limit: resolved.limit + 1,
    });
    return cursors.page(rows, resolved.limit, (r) => [r.id], filterKey);
  }
}

/** Whatever an attempt threw, in the shape the retry rules read. */
export function asFailure(err: unknown): TransportFailure {
  if (err && typeof err === 'object') {
    const e = err as { responseCode?: unknown; code?: unknown; message?: unknown };
    return {
      responseCode: typeof e.responseCode === 'number' ? e.responseCode : undefined,
      code: typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' && e.message ? e.message : String(err),
    };
  }
  return { message: String(err) };
}
