// The edge-state contract against Redis (REDIS_URL of the real engines), each handle its own
// connection, as two gateway replicas would be; keys under a prefix of their own.
import { randomBytes } from 'node:crypto';
import { RedisEdgeState } from '../../gateway/edge/adapters/redis-edge-state';
import { realEngineEnv } from '../support/real-engines';
import { edgeStateContract } from './edge-state.contract';

const keyPrefix = `inv_contract_${randomBytes(6).toString('hex')}:`;

describe('RedisEdgeState', () => {
  edgeStateContract({ open: () => RedisEdgeState.connect(realEngineEnv().REDIS_URL, { keyPrefix }), sharedCounters: true });
});
