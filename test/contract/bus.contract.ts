// The event-bus port's contract, run against every adapter (in-process embedded, Kafka real).
import { randomBytes } from 'node:crypto';
import { BusMessage, EventBus } from '../../services/shared/bus/port';

export function describeBusContract(adapter: string, open: () => Promise<EventBus>): void {
  describe(`event bus contract: ${adapter}`, () => {
    let bus: EventBus;
    const topic = () => `contract.${randomBytes(4).toString('hex')}`;
    const msg = (key: string, text: string): BusMessage => ({ key, value: new TextEncoder().encode(text) });
    const text = (m: BusMessage) => new TextDecoder().decode(m.value);
    const until = async (check: () => boolean, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!check()) {
        if (Date.now() > deadline) throw new Error('timed out waiting for messages');
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    beforeAll(async () => {
      bus = await open();
    });
    afterAll(() => bus?.close());

    it('delivers every message to each group, in order per key', async () => {
      const t = topic();
      const a: string[] = [];
      const b: string[] = [];
      const subA = await bus.subscribe(t, { group: `a-${t}` }, async (m) => void a.push(`${m.key}:${text(m)}`));
      const subB = await bus.subscribe(t, { group: `b-${t}` }, async (m) => void b.push(`${m.key}:${text(m)}`));
      await bus.publish(t, [msg('1', 'one'), msg('2', 'x'), msg('1', 'two')]);
      await bus.publish(t, [msg('1', 'three')]);
      await until(() => a.length === 4 && b.length === 4);
      for (const seen of [a, b]) expect(seen.filter((s) => s.startsWith('1:'))).toEqual(['1:one', '1:two', '1:three']);
      await subA.close();
      await subB.close();
    });

    it('members of a durable group share the messages: each is handled once', async () => {
      const t = topic();
      const handled: string[] = [];
      const subs = await Promise.all(
        [0, 1].map(() => bus.subscribe(t, { group: `shared-${t}`, fromBeginning: true }, async (m) => void handled.push(text(m)))),
      );
      await bus.publish(t, Array.from({ length: 6 }, (_, i) => msg(String(i), `m${i}`)));
      await until(() => handled.length >= 6);
      await new Promise((r) => setTimeout(r, 300));
      expect([...handled].sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
      await Promise.all(subs.map((s) => s.close()));
    });

    it('redelivers a message whose handler failed (at-least-once), before the messages after it', async () => {
      const t = topic();
      const attempts: string[] = [];
      const sub = await bus.subscribe(t, { group: `retry-${t}` }, async (m) => {
        attempts.push(text(m));
        if (attempts.length === 1) throw new Error('transient');
      });
      await bus.publish(t, [msg('1', 'once'), msg('1', 'after')]);
      await until(() => attempts.length >= 3);
      expect(attempts).toEqual(['once', 'once', 'after']);
      await sub.close();
    });

    it('a group subscribing from the beginning replays what the topic holds', async () => {
      const t = topic();
      await bus.publish(t, [msg('1', 'early')]);
      const seen: string[] = [];
      const sub = await bus.subscribe(t, { group: `late-${t}`, fromBeginning: true }, async (m) => void seen.push(text(m)));
      await until(() => seen.includes('early'));
      await sub.close();
    });

    it('carries transport headers (trace context) with a message, and stamps when the bus took it', async () => {
      const t = topic();
      const got: BusMessage[] = [];
      const sub = await bus.subscribe(t, { group: `headers-${t}`, fromBeginning: true }, async (m) => void got.push(m));
      const before = Date.now();
      const traceparent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`;
      await bus.publish(t, [{ ...msg('1', 'traced'), headers: { traceparent } }, msg('1', 'plain')]);
      await until(() => got.length >= 2);
      expect(got.map((m) => [text(m), m.headers?.traceparent])).toEqual([
        ['traced', traceparent],
        ['plain', undefined],
      ]);
      for (const m of got) expect(m.timestamp).toBeGreaterThanOrEqual(before - 1000);
      await sub.close();
    });
  });
}
