// The event-bus port. Embedded: in-process (memory.ts). Distributed: Kafka via kafkajs (kafka.ts).
// One contract suite (test/contract/bus.contract.ts) runs against both.
// Delivery is at-least-once; every event carries an id consumers de-duplicate on.

export interface BusMessage {
  /** Partition key: the account id, so a workspace's events stay ordered. */
  key: string;
  /** Encoded invoicing.events.v1.Event. */
  value: Uint8Array;
}

export interface SubscribeOptions {
  /**
   * Consumers sharing a group split the messages; each group sees every message.
   * A gateway replica uses a group of its own to see everything (broadcast).
   */
  group: string;
  /** Replay what the topic holds instead of starting at the end. */
  fromBeginning?: boolean;
}

export type Handler = (message: BusMessage) => Promise<void>;

export interface Subscription {
  close(): Promise<void>;
}

export interface EventBus {
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(topic: string, options: SubscribeOptions, handler: Handler): Promise<Subscription>;
  close(): Promise<void>;
}

export const TOPICS = {
  identity: 'invoicing.identity.v1',
  documents: 'invoicing.documents.v1',
} as const;
