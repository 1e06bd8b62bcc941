// The edge-state contract against the embedded adapter: SQLite records (one file, two handles) and
// in-memory counters.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEdgeState } from '../../gateway/edge/adapters/sqlite-edge-state';
import { edgeStateContract } from './edge-state.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'edge-state-')), 'edge.db');

describe('SqliteEdgeState', () => {
  edgeStateContract({ open: async () => new SqliteEdgeState(file), sharedCounters: false });
});
