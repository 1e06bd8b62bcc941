import { KafkaEventBus } from '../../services/shared/bus/kafka';
import { MessagesRejected } from '../../services/shared/bus/port';
import { realEngineEnv } from '../support/real-engines';
import { describeBusContract } from './bus.contract';

describeBusContract('Kafka', async () => new KafkaEventBus(realEngineEnv().KAFKA_BROKERS.split(','), 'contract-test'));

describe('event bus: Kafka refusals', () => {
  it('a batch over the broker’s message.max.bytes (default 1 MiB) is a permanent refusal, MessagesRejected, not a retryable error', async () => {
    const bus = new KafkaEventBus(realEngineEnv().KAFKA_BROKERS.split(','), 'contract-test-refusal');
    try {
      const big = { key: '1', value: new Uint8Array(300 * 1024).fill(120) };
      const sent = bus.publish(`contract.refusal.${Date.now()}`, [big, big, big, big, big]);
      await expect(sent).rejects.toBeInstanceOf(MessagesRejected);
      await expect(sent).rejects.toMatchObject({ reason: expect.stringMatching(/^(MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE)$/) });
    } finally {
      await bus.close();
    }
  });
});

describe('event bus: Kafka namespace (KAFKA_TOPIC_PREFIX)', () => {
  it('deployments with different namespaces share a cluster without seeing each other’s events, even in groups of the same name', async () => {
    const brokers = realEngineEnv().KAFKA_BROKERS.split(',');
    const run = Date.now();
    const a = new KafkaEventBus(brokers, 'contract-ns-a', 3, `ns-a-${run}.`);
    const b = new KafkaEventBus(brokers, 'contract-ns-b', 3, `ns-b-${run}.`);
    try {
      const seenByA: string[] = [];
      const seenByB: string[] = [];
      const decode = (m: { value: Uint8Array }) => Buffer.from(m.value).toString();
      await a.subscribe('contract.namespaced', { group: 'workers', fromBeginning: true }, async (m) => void seenByA.push(decode(m)));
      await b.subscribe('contract.namespaced', { group: 'workers', fromBeginning: true }, async (m) => void seenByB.push(decode(m)));
      await a.publish('contract.namespaced', [{ key: '1', value: Buffer.from('from-a') }]);
      await b.publish('contract.namespaced', [{ key: '1', value: Buffer.from('from-b') }]);
      for (let i = 0; i < 200 && (seenByA.length === 0 || seenByB.length === 0); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(seenByA).toEqual(['from-a']);
      expect(seenByB).toEqual(['from-b']);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
