// The event-bus port. Embedded: in-process (memory.ts). Distributed: Kafka via kafkajs (kafka.ts).
// One contract suite (test/contract/bus.contract.ts) runs against both.
// Delivery is at-least-once; every event carries an id consumers de-duplicate on.

export interface BusMessage {
  /** Partition key: the account id, so a workspace's events stay ordered. */
  key: string;
  /** Encoded invoicing.events.v1.Event. */
  value: Uint8Array;
  /** Transport headers (W3C `traceparent`, services/shared/observability/tracing.ts); never part of the event. */
  headers?: Record<string, string>;
  /** Set on delivery: when the bus took the message (epoch ms; Kafka's record timestamp). */
  timestamp?: number;
}

export interface SubscribeOptions {
  /**
   * Consumers sharing a group split the messages; each group sees every message.
   * A gateway replica uses a group of its own to see everything (broadcast).
   */
  group: string;
  /**
   * Where a group without a committed position starts: the beginning of the topic, or its end as of
   * subscribe() (everything published after subscribe() resolves is delivered). Durable worker groups
   * start from the beginning; broadcast groups (one per gateway replica, interested only in what
   * happens from now on) leave it unset.
   */
  fromBeginning?: boolean;
}

export type Handler = (message: BusMessage) => Promise<void>;

export interface Subscription {
  close(): Promise<void>;
}

/**
 * The broker refused the messages for good (too large for it, or an invalid record): publishing the same
 * messages again can never succeed. Any other publish error is transient (broker down, no leader, timeout).
 * When several messages were sent, the broker does not say which one it refused.
 */
export class MessagesRejected extends Error {
  constructor(readonly reason: string) {
    super(`the broker rejected the messages: ${reason}`);
    this.name = 'MessagesRejected';
  }
}

export interface EventBus {
  /** Publishes in order (per key). Throws MessagesRejected on a permanent refusal, anything else when transient. */
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(topic: string, options: SubscribeOptions, handler: Handler): Promise<Subscription>;
  close(): Promise<void>;
}

export const TOPICS = {
  identity: 'invoicing.identity.v1',
  documents: 'invoicing.documents.v1',
  /** Outcomes of e-mail deliveries (mail.delivery.sent|failed), consumed by the documents service. */
  mail: 'invoicing.mail.v1',
  /** Extraction jobs of expenses (expenses.extraction.requested), consumed by the expenses service's worker group. */
  expenses: 'invoicing.expenses.v1',
  /** Contacts and bank accounts (contacts.contact.*, contacts.bank_account.*), read by the events log. */
  contacts: 'invoicing.contacts.v1',
} as const;
