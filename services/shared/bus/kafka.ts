// Distributed adapter of the event-bus port: Apache Kafka via kafkajs. Messages are keyed by account id
// (ordered per workspace); the producer is idempotent and waits for all in-sync replicas.
// A namespace (KAFKA_TOPIC_PREFIX) prefixes every topic and consumer group, so several deployments — or
// test systems — can share one cluster without reading each other's events.
import { IHeaders, Kafka, Producer } from 'kafkajs';
import { createLogger, Logger } from '../logger';
import { kafkaLevelOf, kafkaLogCreator } from './kafka-log';
import { BusMessage, EventBus, Handler, MessagesRejected, SubscribeOptions, Subscription } from './port';

/** Broker error types that refuse the records themselves: retrying the same records cannot succeed. */
const REJECTIONS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD']);

/** The error and the ones it wraps (kafkajs wraps protocol errors in retry errors), outermost first. */
function* chain(err: unknown): Generator<{ type?: unknown; retriable?: unknown }> {
  for (let e = err as { type?: unknown; retriable?: unknown; cause?: unknown; originalError?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    yield e;
    e = (e.cause ?? e.originalError) as typeof e;
  }
}

/** The broker's refusal of the records, if that is what the error (or one it wraps) is. */
function rejection(err: unknown): string | undefined {
  for (const e of chain(err)) if (typeof e.type === 'string' && REJECTIONS.has(e.type)) return e.type;
  return undefined;
}

/** Whether the error, or one it wraps, is one the broker says may succeed when retried. */
const retriable = (err: unknown): boolean => [...chain(err)].some((e) => e.retriable === true);

/**
 * Runs `step` again while the broker answers with a retriable error (a group coordinator that moved
 * or is still loading: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, …), which kafkajs's admin client
 * passes through for offset calls right after a group or broker comes up.
 */
export async function retryRetriable<T>(step: () => Promise<T>, attempts = 10): Promise<T> {
  for (let attempt = 1, pause = 200; ; attempt++, pause = Math.min(pause * 2, 2_000)) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= attempts || !retriable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Record headers as strings (kafkajs hands them over as Buffers); undefined when there are none. */
function headersOf(raw: IHeaders | undefined): Record<string, string> | undefined {
  if (!raw) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) headers[name] = first.toString();
  }
  return Object.keys(headers).length ? headers : undefined;
}

export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private producer?: Promise<Producer>;
  private readonly subscriptions = new Set<Subscription>();
  private readonly knownTopics = new Set<string>();

  constructor(brokers: string[], clientId: string, private readonly partitions = 3, private readonly namespace = '', log: Logger = createLogger(clientId)) {
    this.kafka = new Kafka({ brokers, clientId, logLevel: kafkaLevelOf(log), logCreator: kafkaLogCreator(log), retry: { retries: 8, initialRetryTime: 200 } });
  }

  private async ensureTopic(topic: string): Promise<void> {
    if (this.knownTopics.has(topic)) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: this.partitions }], waitForLeaders: true });
      // createTopics waits for leaders only when this call created the topic. When another process created
      // it a moment earlier, its partitions may have no leader yet, and the consumer's first metadata
      // request then fails with "This server does not host this topic-partition" (a service failed to
      // start on it under load). So: every partition has a leader before the topic is used.
      await retryRetriable(async () => {
        const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        const leaderless = metadata.partitions.filter((p) => p.leader < 0).length;
        if (metadata.partitions.length === 0 || leaderless > 0) {
          throw Object.assign(new Error(`topic ${topic}: ${leaderless} of ${metadata.partitions.length} partitions without a leader`), { retriable: true });
        }
      }, 30);
    } finally {
      await admin.disconnect();
    }
    this.knownTopics.add(topic);
  }

  private getProducer(): Promise<Producer> {
    this.producer ??= (async () => {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    })().catch((err) => {
      this.producer = undefined;
      throw err;
    });
    return this.producer;
  }

  async publish(logicalTopic: string, messages: BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const topic = this.namespace + logicalTopic;
    await this.ensureTopic(topic);
    const producer = await this.getProducer();
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: messages.map((m) => ({ key: m.key, value: Buffer.from(m.value), ...(m.headers ? { headers: m.headers } : {}) })),
      });
    } catch (err) {
      // kafkajs neither splits a batch that is over the broker's message.max.bytes nor tells which record
      // was refused: the caller (the outbox relay) bounds its batches and narrows a rejection down.
      const refused = rejection(err);
      if (refused) throw new MessagesRejected(refused);
      throw err;
    }
  }

  /**
   * "From now on", exactly: a group that has no committed position gets the topic's current end
   * committed before its consumer joins. Left to kafkajs, "latest" would be resolved only after the
   * first rebalance, and whatever was published in between would be skipped.
   */
  private async startNewGroupAtEnd(groupId: string, topic: string): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const uncommitted = new Set(committed.partitions.filter((p) => Number(p.offset) < 0).map((p) => p.partition));
      if (uncommitted.size === 0) return;
      const ends = await admin.fetchTopicOffsets(topic);
      const partitions = ends.filter((p) => uncommitted.has(p.partition)).map((p) => ({ partition: p.partition, offset: p.high }));
      await admin.setOffsets({ groupId, topic, partitions });
    } finally {
      await admin.disconnect();
    }
  }

  async subscribe(logicalTopic: string, options: SubscribeOptions, handler: Handler): Promise<Subscription> {
    const topic = this.namespace + logicalTopic;
    const groupId = this.namespace + options.group;
    await this.ensureTopic(topic);
    if (!options.fromBeginning) await retryRetriable(() => this.startNewGroupAtEnd(groupId, topic));
    const consumer = this.kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: options.fromBeginning ?? false });
    let joined!: () => void;
    const ready = new Promise<void>((resolve) => (joined = resolve));
    const stopListening = consumer.on(consumer.events.GROUP_JOIN, () => joined());
    let closing = false;
    await consumer.run({
      eachMessage: async ({ message, heartbeat }) => {
        const delivered: BusMessage = {
          key: message.key?.toString() ?? '',
          value: message.value ?? new Uint8Array(),
          headers: headersOf(message.headers),
          timestamp: Number(message.timestamp),
        };
        // At-least-once, retried here rather than by crashing the consumer: a restarted consumer of a group
        // that never committed would resolve "latest" and skip the failed message.
        for (let pause = 100; ; pause = Math.min(pause * 2, 5_000)) {
          try {
            return await handler(delivered);
          } catch (err) {
            if (closing) throw err;
            await new Promise((resolve) => setTimeout(resolve, pause));
            await heartbeat();
          }
        }
      },
    });
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    stopListening();
    const subscription: Subscription = {
      close: async () => {
        closing = true;
        this.subscriptions.delete(subscription);
        await consumer.disconnect();
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    if (this.producer) await (await this.producer).disconnect().catch(() => undefined);
  }
}
