// The event bus as every process uses it: any adapter wrapped with metrics and tracing. Publishing counts
// messages and, with tracing on, opens a producer span per message (child of the context the message
// carries — the request that wrote its outbox entry — or of the active one) and passes the span on in
// the message's headers; consuming measures the delay since publication (the consumer's lag) and the
// handler's time, and runs the handler in a consumer span, child of the producer's.
import { counter, gauge, histogram, PREFIX, secondsSince, SLOW_BUCKETS } from '../observability/metrics';
import { extractFrom, injectInto, inSpan, SpanKind, startSpan, tracingEnabled } from '../observability/tracing';
import { BusMessage, EventBus, Handler, SubscribeOptions, Subscription } from './port';

const metrics = () => ({
  published: counter(`${PREFIX}bus_published_messages_total`, 'Messages handed to the bus, by topic and outcome (ok, rejected, error).', ['topic', 'outcome']),
  consumed: counter(`${PREFIX}bus_consumed_messages_total`, 'Messages a consumer group handled, by topic, group and outcome (ok, error: retried).', ['topic', 'group', 'outcome']),
  lag: gauge(`${PREFIX}bus_consumer_lag_seconds`, 'Age of the newest message a group started handling, at the moment it did (publication → consumption).', ['topic', 'group']),
  delay: histogram(`${PREFIX}bus_delivery_delay_seconds`, 'Time from publication to the start of handling, by topic and group.', ['topic', 'group'], SLOW_BUCKETS),
  handling: histogram(`${PREFIX}bus_handler_duration_seconds`, 'Time a consumer took to handle one message, by topic and group.', ['topic', 'group']),
});

const UUID_SUFFIX = /-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A group label without a replica's random suffix (gateway broadcast groups), so series don't churn with restarts. */
export const groupLabel = (group: string): string => group.replace(UUID_SUFFIX, '');

export function observeBus(bus: EventBus): EventBus {
  const m = metrics();
  return {
    async publish(topic: string, messages: BusMessage[]): Promise<void> {
      if (!tracingEnabled()) return count(m, topic, messages.length, bus.publish(topic, messages));
      const spans = messages.map((message) => {
        const started = startSpan(`publish ${topic}`, {
          kind: SpanKind.PRODUCER,
          parent: message.headers?.traceparent ? extractFrom(message.headers) : undefined,
          attributes: { 'messaging.system': 'invoicing', 'messaging.destination.name': topic, 'messaging.operation.type': 'publish' },
        });
        const headers: Record<string, string> = { ...message.headers };
        if (started) injectInto(headers, undefined, started.context);
        return { started, message: { ...message, headers } };
      });
      try {
        await count(m, topic, messages.length, bus.publish(topic, spans.map((s) => s.message)));
      } finally {
        for (const { started } of spans) started?.span.end();
      }
    },
    async subscribe(topic: string, options: SubscribeOptions, handler: Handler): Promise<Subscription> {
      const labels = { topic, group: groupLabel(options.group) };
      const lag = m.lag.labels(labels);
      const delay = m.delay.labels(labels);
      const handling = m.handling.labels(labels);
      const observed: Handler = async (message) => {
        if (message.timestamp) {
          const age = Math.max(0, Date.now() - message.timestamp) / 1000;
          lag.set(age);
          delay.observe(age);
        }
        const started = process.hrtime.bigint();
        try {
          await inSpan(
            `consume ${topic}`,
            {
              kind: SpanKind.CONSUMER,
              parent: message.headers?.traceparent ? extractFrom(message.headers) : undefined,
              attributes: { 'messaging.system': 'invoicing', 'messaging.destination.name': topic, 'messaging.consumer.group.name': labels.group },
            },
            () => handler(message),
          );
          m.consumed.labels({ ...labels, outcome: 'ok' }).inc();
        } catch (err) {
          m.consumed.labels({ ...labels, outcome: 'error' }).inc();
          throw err;
        } finally {
          handling.observe(secondsSince(started));
        }
      };
      return bus.subscribe(topic, options, observed);
    },
    close: () => bus.close(),
  };
}

async function count(m: ReturnType<typeof metrics>, topic: string, n: number, publishing: Promise<void>): Promise<void> {
  try {
    await publishing;
    m.published.labels({ topic, outcome: 'ok' }).inc(n);
  } catch (err) {
    m.published.labels({ topic, outcome: (err as Error)?.name === 'MessagesRejected' ? 'rejected' : 'error' }).inc(n);
    throw err;
  }
}
