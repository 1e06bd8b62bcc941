// The events log of the events part (docs/events.md): what a tenant's events are stored as. The log
// lives in the shared document-store port (one collection of events, one of per-workspace counters).
import { StoredDoc } from '../../shared/store/port';

export interface EventRecord extends StoredDoc {
  /** Public id, "evt_" + the outbox event's UUID without dashes: the same on every redelivery. */
  event_id: string;
  account_id: number;
  livemode: boolean;
  /** Public type, e.g. "invoice.paid". */
  type: string;
  /** The part of `type` before the dot ("invoice"): the `type=invoice.` prefix filter is equality on it. */
  kind: string;
  /** RFC 3339 from toISOString() (fixed width, so text order is time order): when it was stored. */
  created_at: string;
  /** Position among the workspace's (and mode's) events; strictly increasing, may skip. */
  sequence: number;
  /** The resource (invoicing.events.v1.ResourceSnapshot), protobuf-encoded, base64: opaque to the log. */
  object: string;
}

/** An event the bus delivered, in the log's terms. */
export interface IncomingEvent {
  /** The outbox event's id (a UUID). */
  id: string;
  /** Internal type, e.g. "documents.invoice.paid". */
  type: string;
  account_id: number;
  livemode: boolean;
  /** The encoded resource (base64), absent on events that carry none. */
  object?: string;
}

export interface EventFilters {
  /** An exact public type, or a prefix ending in a dot ("invoice."); empty: every type. */
  type: string;
  created_at_gte: string;
  created_at_gt: string;
  created_at_lte: string;
  created_at_lt: string;
}

/**
 * The numbering of a workspace's mode: the last sequence handed out and its created_at. Both are taken in
 * one compare-and-set, so created_at grows with sequence (newest first by time is newest first by number).
 */
export interface EventSequenceRecord extends StoredDoc {
  sequence: number;
  last_at: string;
}
