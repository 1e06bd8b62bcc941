// The Kafka adapter retries broker answers that say "try again" (a group coordinator that moved or is
// still loading) instead of failing the process that subscribes; other errors pass through at once.
import { retryRetriable } from '../../services/shared/bus/kafka';

const notCoordinator = () => Object.assign(new Error('This is not the correct coordinator for this group'), { type: 'NOT_COORDINATOR_FOR_GROUP', retriable: true });

describe('Kafka adapter: retriable broker errors', () => {
  it('runs the step again while the broker answers a retriable error, also when wrapped', async () => {
    let calls = 0;
    const result = await retryRetriable(async () => {
      calls++;
      if (calls === 1) throw notCoordinator();
      if (calls === 2) throw Object.assign(new Error('retries exceeded'), { retriable: false, originalError: notCoordinator() });
      return 'done';
    });
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('passes any other error through on the first attempt', async () => {
    let calls = 0;
    const refused = Object.assign(new Error('group has running members'), { retriable: false });
    await expect(
      retryRetriable(async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });

  it('gives up after its attempts', async () => {
    let calls = 0;
    await expect(
      retryRetriable(async () => {
        calls++;
        throw notCoordinator();
      }, 3),
    ).rejects.toThrow('coordinator');
    expect(calls).toBe(3);
  });
});
