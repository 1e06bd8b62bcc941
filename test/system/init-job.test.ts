// The chart's install/upgrade Job (deploy/init) against the real engines: topics with the configured
// partitions, every declared index in the shape the Mongo adapter uses, the bucket; idempotent; loud on failure.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Client as MinioClient } from 'minio';
import mongoose from 'mongoose';
import pino from 'pino';
import { Writable } from 'node:stream';
import { declaredCollections } from '../../deploy/init/collections';
import { InitOptions, readInitOptions, runInit } from '../../deploy/init/main';
import { TOPICS } from '../../services/shared/bus/port';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';

const root = path.resolve(__dirname, '../..');
const run = randomBytes(4).toString('hex');

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

function options(overrides: Record<string, string> = {}, log = recordingLogger().log): InitOptions {
  const engines = realEngineEnv();
  return readInitOptions(
    {
      ...engines,
      MONGO_URL: isolatedMongoUrl(engines.MONGO_URL, `init_${run}`),
      KAFKA_TOPIC_PREFIX: `init-${run}.`,
      MINIO_BUCKET: `init-${run}`,
      INIT_KAFKA_PARTITIONS: '4',
      INIT_KAFKA_REPLICATION_FACTOR: '1',
      ...overrides,
    },
    log,
  );
}

async function withMongo<T>(url: string, use: (conn: mongoose.Connection) => Promise<T>): Promise<T> {
  const conn = await mongoose.createConnection(url).asPromise();
  try {
    return await use(conn);
  } finally {
    await conn.close();
  }
}

const indexKeysOf = (conn: mongoose.Connection, name: string) =>
  conn
    .collection(name)
    .listIndexes()
    .toArray()
    .then((indexes) => indexes.map((i) => JSON.stringify(i.key)).sort());

describe('init Job (deploy/init)', () => {
  it('creates every topic with the configured partitions, every declared index and the bucket; a second run changes nothing', async () => {
    const first = recordingLogger();
    const opts = options({}, first.log);
    await runInit(opts);

    const kafka = new Kafka({ brokers: opts.engines.kafkaBrokers!, clientId: 'init-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const wanted = Object.values(TOPICS).map((t) => `init-${run}.${t}`);
      const { topics } = await admin.fetchTopicMetadata({ topics: wanted });
      expect(topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual(wanted.map((t) => [t, 4]).sort());
    } finally {
      await admin.disconnect();
    }

    // Collections without indexes exist only once a service writes to them.
    const declared = declaredCollections().filter((c) => c.indexes.length > 0);
    expect(declared.map((c) => c.name)).toEqual(expect.arrayContaining(['users', 'contacts', 'documents', 'mail_deliveries']));
    const before = await withMongo(opts.engines.mongoUrl!, async (conn) => {
      const found: Record<string, string[]> = {};
      for (const { name, indexes } of declared) {
        found[name] = await indexKeysOf(conn, name);
        for (const fields of indexes) expect(found[name]).toContain(JSON.stringify(Object.fromEntries([...fields.map((f) => [f, 1]), ['_id', -1]])));
      }
      return found;
    });

    // The adapter's own lazy index creation finds nothing left to create: the Job made the same indexes.
    const store = await MongoDocumentStore.connect(opts.engines.mongoUrl!);
    try {
      for (const { name, indexes } of declared) await store.collection({ name, indexes }).list({ where: {}, limit: 1 });
    } finally {
      await store.close();
    }
    const after = await withMongo(opts.engines.mongoUrl!, async (conn) => {
      const found: Record<string, string[]> = {};
      for (const { name } of declared) found[name] = await indexKeysOf(conn, name);
      return found;
    });
    expect(after).toEqual(before);

    const minio = new MinioClient(opts.engines.minio!);
    expect(await minio.bucketExists(`init-${run}`)).toBe(true);

    const second = recordingLogger();
    await runInit({ ...opts, log: second.log });
    expect(second.lines.filter((l) => l.msg === 'topic present')).toHaveLength(Object.values(TOPICS).length);
    expect(second.lines.some((l) => l.msg === 'bucket present')).toBe(true);
  });

  it('leaves an existing topic with another partition count as it is, and says so', async () => {
    await runInit(options()); // the topics exist with 4 partitions (created here or by the test above)
    const recorded = recordingLogger();
    await runInit({ ...options({ INIT_KAFKA_PARTITIONS: '6' }), log: recorded.log });
    const warnings = recorded.lines.filter((l) => l.msg?.toString().startsWith('topic exists with another partition count'));
    expect(warnings.map((w) => [w.partitions, w.configured])).toEqual(Object.values(TOPICS).map(() => [4, 6]));
  });

  it('fails loudly, naming the step, when the database cannot be reached; the process exits 1', async () => {
    const unreachable = 'mongodb://127.0.0.1:9/init?serverSelectionTimeoutMS=500';
    await expect(runInit(options({ MONGO_URL: unreachable }))).rejects.toThrow(/init step "indexes" failed/);
    const child = spawnSync(process.execPath, [path.join(root, 'dist/deploy/init/main.js')], {
      env: { ...process.env, ...realEngineEnv(), MONGO_URL: unreachable, KAFKA_TOPIC_PREFIX: `init-${run}.`, MINIO_BUCKET: `init-${run}` },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.status).toBe(1);
    expect(child.stdout).toMatch(/"msg":"init failed"/);
    expect(child.stdout).toMatch(/init step \\"indexes\\" failed/);
  });

  it('refuses to start without the engines it prepares', () => {
    expect(() => readInitOptions({ MONGO_URL: 'mongodb://x/y' })).toThrow(/MONGO_URL, KAFKA_BROKERS and MINIO_ENDPOINT are required/);
    expect(() => options({ INIT_KAFKA_PARTITIONS: '0' })).toThrow(/INIT_KAFKA_PARTITIONS must be at least 1/);
  });
});
