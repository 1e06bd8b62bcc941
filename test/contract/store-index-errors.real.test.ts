// Index creation on the real store (issue 11): an index the database refuses is logged at error and
// counted — never swallowed — while the queries it would have served still answer correctly.
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import pino from 'pino';
import { Writable } from 'node:stream';
import { registry } from '../../services/shared/observability/metrics';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';

describe('Mongo store index creation', () => {
  it('a refused index is logged at error with its collection and fields, and counted; queries still work', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `idx_${randomBytes(4).toString('hex')}`);
    const name = `broken_${randomBytes(3).toString('hex')}`;
    // The index's default name already taken by another index: the database refuses to create it.
    const raw = await mongoose.createConnection(url).asPromise();
    await raw.collection(name).createIndex({ other: 1 }, { name: 'kind_1__id_-1' });
    await raw.close();
    const store = await MongoDocumentStore.connect(url, pino(sink));
    try {
      const things = store.collection<{ id: number; version: number; kind: string }>({ name, indexes: [['kind']] });
      await things.insert({ id: 1, kind: 'a' });
      expect((await things.list({ where: { kind: 'a' }, limit: 10 })).map((t) => t.id)).toEqual([1]);
      expect(lines).toContainEqual(expect.objectContaining({ level: 50, collection: name, fields: ['kind'], msg: expect.stringContaining('index creation failed') }));
      expect(await registry.metrics()).toMatch(new RegExp(`invoicing_store_index_errors_total\\{collection="${name}"\\} 1`));
    } finally {
      await store.close();
    }
  });
});
