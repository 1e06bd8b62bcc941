// Embedded adapter of the event-bus port: an in-process log per topic. Each group keeps its own offset,
// members of a group take turns; handlers run asynchronously and in order per group.
import { BusMessage, EventBus, Handler, SubscribeOptions, Subscription } from './port';

interface Group {
  offset: number;
  handlers: Handler[];
  turn: number;
  draining: boolean;
}

export class MemoryEventBus implements EventBus {
  private readonly logs = new Map<string, BusMessage[]>();
  private readonly groups = new Map<string, Map<string, Group>>();

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    const log = this.logs.get(topic) ?? [];
    this.logs.set(topic, log);
    const now = Date.now();
    for (const message of messages) log.push({ ...message, timestamp: now });
    for (const group of this.groups.get(topic)?.values() ?? []) this.drain(topic, group);
  }

  async subscribe(topic: string, options: SubscribeOptions, handler: Handler): Promise<Subscription> {
    const groups = this.groups.get(topic) ?? new Map<string, Group>();
    this.groups.set(topic, groups);
    let group = groups.get(options.group);
    if (!group) {
      group = { offset: options.fromBeginning ? 0 : (this.logs.get(topic)?.length ?? 0), handlers: [], turn: 0, draining: false };
      groups.set(options.group, group);
    }
    group.handlers.push(handler);
    this.drain(topic, group);
    const joined = group;
    return {
      close: async () => {
        joined.handlers = joined.handlers.filter((h) => h !== handler);
      },
    };
  }

  private drain(topic: string, group: Group): void {
    if (group.draining) return;
    group.draining = true;
    setImmediate(async () => {
      const log = this.logs.get(topic) ?? [];
      while (group.offset < log.length && group.handlers.length > 0) {
        const handler = group.handlers[group.turn++ % group.handlers.length];
        try {
          await handler(log[group.offset]);
          group.offset++;
        } catch {
          // At-least-once: a failing handler sees the message again after a pause.
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      group.draining = false;
      if (group.offset < log.length && group.handlers.length > 0) this.drain(topic, group);
    });
  }

  async close(): Promise<void> {
    this.groups.clear();
  }
}
