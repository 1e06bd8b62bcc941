// The mail service: accepts send requests (idempotently, keyed by the event id), attempts due
// deliveries (one attempt per claim, compare-and-set), and answers what happened to them.
import { fail } from '../../shared/errors';
import { CursorCodec, PageInput } from '../../shared/pagination';
import { Collection, mutate, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { ownedBy, Tenant, tenantKey, tenantWhere } from '../../shared/tenant';
import type { DeliveryRecord, DeliveryRoute, MailTemplates, MailTransport, PdfSource, PinnedPdf, SendRequest, TransportFailure } from '../ports/mail';
import { composeMail } from './mail-compose';
import { attemptFailed, claim, expiredRequest, isDue, newDelivery, routeFor, succeeded, withPinnedPdf } from './mail-delivery';
import { MailLanes } from './mail-lanes';
import { RetryPolicy } from './mail-retry';

export interface MailerDeps {
  deliveries: Collection<DeliveryRecord>;
  /** Which workspaces have queued deliveries (mail-lanes.ts). */
  lanes: MailLanes;
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
  /** An attempt's transport must be done by then (MAIL_SMTP_TIMEOUT_MS < leaseMs): a slow relay cannot outlive the lease. */
  attemptTimeoutMs: number;
  /** Requests older than this when they arrive are failed, not delivered late (see expiredRequest). */
  maxRequestAgeMs: number;
  /** Fair sharing: attempts per workspace per round, and attempts in flight at once (per replica). */
  dispatch: DispatchLimits;
  clock: { now(): Date };
  /** Called after an outcome was written (wakes the outbox relay). */
  onOutcome?: () => void;
  /** Test seams (interleavings driven without sleeps). */
  hooks?: MailerHooks;
}

export interface DispatchLimits {
  /** At most this many attempts of one workspace per dispatch round (MAIL_WORKSPACE_CONCURRENCY). */
  perWorkspace: number;
  /** Attempts in flight at once (MAIL_DISPATCH_CONCURRENCY). */
  concurrency: number;
}

export const DEFAULT_DISPATCH: DispatchLimits = { perWorkspace: 2, concurrency: 4 };

export interface MailerHooks {
  /** After an attempt claimed its delivery, before the PDF is read and the message sent. */
  afterClaim?(record: DeliveryRecord): Promise<void> | void;
}

/** Lanes (workspaces with queued deliveries) looked at per round; beyond it, the next rounds. */
const MAX_LANES = 1000;
/** Margin kept between the transport's deadline and the end of the lease (the outcome write). */
const LEASE_MARGIN_MS = 5_000;

export class Mailer {
  private round = 0;

  constructor(private readonly deps: MailerDeps) {}

  /** Records a send request as a queued delivery; a request already recorded (redelivery) changes nothing. */
  async accept(request: SendRequest): Promise<DeliveryRecord> {
    const existing = await this.deps.deliveries.findOne({ delivery_id: request.id });
    if (existing) {
      // Redelivered (the offset did not move): a crash may have come between the insert and the lane.
      if (existing.status === 'queued') await this.deps.lanes.touch(tenantOf(existing));
      return existing;
    }
    const route = routeFor(request, this.deps.transports.smtp !== undefined);
    const now = this.deps.clock.now();
    const fresh = { ...newDelivery(request, { now, route, messageIdDomain: this.deps.messageIdDomain }), id: await this.deps.nextId(), version: 0 };
    const record = expiredRequest(fresh, now, this.deps.maxRequestAgeMs) ?? fresh;
    let inserted: DeliveryRecord;
    try {
      inserted = await this.deps.deliveries.insert(record);
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      const winner = await this.deps.deliveries.findOne({ delivery_id: request.id });
      if (!winner) throw err;
      return winner;
    }
    if (inserted.status === 'failed') {
      this.deps.onOutcome?.();
      return inserted;
    }
    await this.deps.lanes.touch(tenantOf(inserted));
    return (await this.pinAtAccept(inserted)) ?? inserted;
  }

  /**
   * Pins the PDF right when the request arrives (the moment closest to the send): the version current
   * now, stored. Best effort — a renderer that cannot produce it yet leaves it to the first attempt. Never
   * written over an attempt in flight (its lease): that attempt pins and writes it itself.
   */
  private async pinAtAccept(record: DeliveryRecord): Promise<DeliveryRecord | null> {
    let pin: PinnedPdf;
    try {
      pin = await this.deps.pdfs.pin(tenantOf(record), record.document_id);
    } catch {
      return null;
    }
    const now = this.deps.clock.now();
    const written = await mutate(this.deps.deliveries, record.id, (current) => {
      if (current.pdf || current.status !== 'queued' || (current.lease_until !== null && Date.parse(current.lease_until) > now.getTime())) return null;
      return withPinnedPdf(current, pin, now);
    });
    if (written?.status === 'failed') this.deps.onOutcome?.();
    return written;
  }

  /**
   * One dispatch round: the due deliveries of every workspace with queued ones, read by when they may
   * next be attempted (never by age: deliveries waiting out a backoff do not hide due ones), at most
   * `perWorkspace` of each, attempted in turn across workspaces (round robin) with `concurrency` in
   * flight. One workspace's backlog therefore delays another's first delivery by at most one round's
   * share of it. Returns how many attempts were made.
   */
  async dispatchDue(): Promise<number> {
    const now = this.deps.clock.now();
    const { perWorkspace, concurrency } = this.deps.dispatch;
    const queues = new Map<string, DeliveryRecord[]>();
    const add = (record: DeliveryRecord) => {
      const key = tenantKey(record);
      const queue = queues.get(key) ?? [];
      if (queue.length < perWorkspace && !queue.some((r) => r.id === record.id) && isDue(record, now)) queue.push(record);
      queues.set(key, queue);
    };
    const lanes = await this.deps.lanes.active(MAX_LANES);
    const heads = await Promise.all(
      lanes.map(async (lane) => {
        const head = await this.deps.deliveries.list({ where: { status: 'queued', ...tenantWhere(lane) }, orderBy: ['due_rank'], limit: perWorkspace });
        if (head.length === 0) await this.deps.lanes.retire(lane);
        return head;
      }),
    );
    // Rotate which workspace goes first, so a workspace is never always last in its round.
    const start = lanes.length ? this.round++ % lanes.length : 0;
    for (const head of [...heads.slice(start), ...heads.slice(0, start)]) head.forEach(add);
    // A safety net for deliveries no lane names (queued before lanes existed): the earliest due overall,
    // and any queued without a dispatch order.
    const stray = await this.deps.deliveries.list({ where: { status: 'queued' }, orderBy: ['due_rank'], limit: perWorkspace });
    const unranked = await this.deps.deliveries.list({ where: { status: 'queued', due_rank: null }, limit: perWorkspace });
    [...stray, ...unranked].forEach(add);
    const order = roundRobin([...queues.values()]);
    let attempts = 0;
    await inTurn(order, concurrency, async (record) => {
      if (await this.attempt(record)) attempts++;
    });
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
    await this.deps.hooks?.afterClaim?.(mine);
    let outcome: DeliveryRecord;
    try {
      // Pinned when the request was accepted; if the renderer could not then, the version current now
      // — still the one sent for, or the delivery fails (withPinnedPdf).
      if (!mine.pdf) mine = withPinnedPdf(mine, await this.deps.pdfs.pin(tenantOf(mine), mine.document_id), this.deps.clock.now());
      if (mine.status === 'failed' || !mine.pdf) {
        outcome = mine;
      } else {
        const pdf = await this.deps.pdfs.read(mine.pdf);
        await this.transportFor(mine.route).deliver(composeMail(mine, pdf, this.deps.templates, this.deps.from), { deadline: this.deadlineOf(mine) });
        outcome = succeeded(mine, this.deps.clock.now());
      }
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

  /** The transport's deadline: its own timeout, and in any case well before the lease ends. */
  private deadlineOf(record: DeliveryRecord): Date {
    const now = this.deps.clock.now().getTime();
    const leaseEnd = record.lease_until ? Date.parse(record.lease_until) - LEASE_MARGIN_MS : Infinity;
    return new Date(Math.min(now + this.deps.attemptTimeoutMs, leaseEnd));
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

const tenantOf = (r: Tenant): Tenant => ({ account_id: r.account_id, livemode: r.livemode });

/** [[a1, a2], [b1], [c1, c2]] → [a1, b1, c1, a2, c2]: each workspace's next item in turn. */
export function roundRobin<T>(queues: T[][]): T[] {
  const order: T[] = [];
  for (let i = 0; queues.some((q) => q.length > i); i++) for (const q of queues) if (q.length > i) order.push(q[i]);
  return order;
}

/** Runs `work` over `items` in order, at most `limit` at once. */
export async function inTurn<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, runner));
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
