// Binds the edge-state port: Redis when REDIS_URL is configured (required for a distributed gateway,
// whose replicas must share it), else the embedded adapter on DATA_DIR.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { EdgeConfig } from './config';
import { EdgeState } from './ports/edge-state';

export async function bindEdgeState(options: { redisUrl?: string; dataDir?: string; config: EdgeConfig }): Promise<EdgeState> {
  if (options.redisUrl) {
    // Loaded only when bound: an embedded gateway never loads ioredis.
    const { RedisEdgeState } = await import('./adapters/redis-edge-state');
    return RedisEdgeState.connect(options.redisUrl, { keyPrefix: options.config.redisKeyPrefix });
  }
  if (!options.dataDir) throw new Error('DATA_DIR is required for the embedded edge state (or set REDIS_URL)');
  mkdirSync(options.dataDir, { recursive: true });
  const { SqliteEdgeState } = await import('./adapters/sqlite-edge-state');
  return new SqliteEdgeState(path.join(options.dataDir, 'edge.db'));
}
