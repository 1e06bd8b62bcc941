// The relay's settings from the environment (one set for every service's relay).
import { ConfigError, readEnv } from '../config';
import { DEFAULT_MAX_BATCH_BYTES, RelayOptions } from './relay';

export function outboxRelayOptions(env: NodeJS.ProcessEnv = process.env): RelayOptions {
  const { int } = readEnv(env);
  const maxBatchBytes = int('OUTBOX_BATCH_BYTES', DEFAULT_MAX_BATCH_BYTES);
  // Below this no ordinary event fits and everything would be set aside as too large.
  if (maxBatchBytes < 16 * 1024) throw new ConfigError(`OUTBOX_BATCH_BYTES must be at least 16384, got ${maxBatchBytes}`);
  return { intervalMs: int('OUTBOX_INTERVAL_MS', 1000), maxBatchBytes };
}
