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
