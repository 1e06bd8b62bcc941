// The chart's install/upgrade Job (helm hook): creates what the services would otherwise create lazily,
// with production settings and loud failures. Kafka topics with the partitions and replication factor of
// the values (the services' lazy createTopics would make 3 partitions at the broker's default replication),
// the Mongo indexes every service declares (the services' own lazy creation swallows errors: an index is an
// optimisation to a query, but a deployment missing one should not go unnoticed), and the MinIO bucket.
// Idempotent: every step leaves existing topics, indexes and buckets as they are. Exits 1 naming the failed step.
import { Client as MinioClient } from 'minio';
import mongoose from 'mongoose';
import { Kafka, logLevel } from 'kafkajs';
import { retryRetriable } from '../../services/shared/bus/kafka';
import { TOPICS } from '../../services/shared/bus/port';
import { ConfigError, EngineUrls, readEngineUrls, readEnv } from '../../services/shared/config';
import { createLogger, Logger } from '../../services/shared/logger';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { declaredCollections } from './collections';
import { indexKeys } from './indexes';

export interface InitOptions {
  engines: EngineUrls;
  partitions: number;
  /** -1: the broker's default.replication.factor. */
  replicationFactor: number;
  log: Logger;
}

export function readInitOptions(env: NodeJS.ProcessEnv = process.env, log = createLogger('init')): InitOptions {
  const { int } = readEnv(env);
  const engines = readEngineUrls(env);
  if (!engines.mongoUrl || !engines.kafkaBrokers?.length || !engines.minio) {
    throw new ConfigError('MONGO_URL, KAFKA_BROKERS and MINIO_ENDPOINT are required for the init job');
  }
  const partitions = int('INIT_KAFKA_PARTITIONS', 3);
  if (partitions < 1) throw new ConfigError('INIT_KAFKA_PARTITIONS must be at least 1');
  const rawReplication = env.INIT_KAFKA_REPLICATION_FACTOR;
  const replicationFactor = rawReplication ? int('INIT_KAFKA_REPLICATION_FACTOR', 1) : -1;
  if (rawReplication && replicationFactor < 1) throw new ConfigError('INIT_KAFKA_REPLICATION_FACTOR must be at least 1');
  return { engines, partitions, replicationFactor, log };
}

/** Creates the missing topics; an existing topic keeps its partitions (a change would reorder a workspace's events). */
export async function ensureTopics(options: InitOptions): Promise<void> {
  const { engines, log } = options;
  const kafka = new Kafka({ brokers: engines.kafkaBrokers!, clientId: 'init', logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 200 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const wanted = Object.values(TOPICS).map((topic) => (engines.kafkaTopicPrefix ?? '') + topic);
    const existing = new Set(await retryRetriable(() => admin.listTopics()));
    const missing = wanted.filter((topic) => !existing.has(topic));
    if (missing.length) {
      await retryRetriable(() =>
        admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({ topic, numPartitions: options.partitions, replicationFactor: options.replicationFactor })),
        }),
      );
    }
    const { topics } = await retryRetriable(() => admin.fetchTopicMetadata({ topics: wanted }));
    for (const { name, partitions } of topics) {
      const fields = { topic: name, partitions: partitions.length, replicas: partitions[0]?.replicas.length ?? 0 };
      if (!missing.includes(name) && partitions.length !== options.partitions) {
        log.warn({ ...fields, configured: options.partitions }, 'topic exists with another partition count; left as it is (see docs/operations.md)');
      } else {
        log.info(fields, missing.includes(name) ? 'topic created' : 'topic present');
      }
    }
  } finally {
    await admin.disconnect();
  }
}

/** Creates every declared index (the shape the Mongo adapter queries by); any failure throws. */
export async function ensureIndexes(options: InitOptions): Promise<void> {
  const { log } = options;
  // The same refusal of a non-atomic database the services apply, before anything is written.
  await (await MongoDocumentStore.connect(options.engines.mongoUrl!)).close();
  const conn = await mongoose.createConnection(options.engines.mongoUrl!, { serverSelectionTimeoutMS: 10_000, autoIndex: false }).asPromise();
  try {
    for (const { name, indexes } of declaredCollections()) {
      for (const fields of indexes) {
        const index = await conn.collection(name).createIndex(indexKeys(fields));
        log.info({ collection: name, index }, 'index present');
      }
    }
  } finally {
    await conn.close();
  }
}

export async function ensureBucket(options: InitOptions): Promise<void> {
  const { minio } = options.engines;
  const client = new MinioClient(minio!);
  if (await client.bucketExists(minio!.bucket)) {
    options.log.info({ bucket: minio!.bucket }, 'bucket present');
    return;
  }
  await client.makeBucket(minio!.bucket);
  options.log.info({ bucket: minio!.bucket }, 'bucket created');
}

export const STEPS = { topics: ensureTopics, indexes: ensureIndexes, bucket: ensureBucket } as const;

export async function runInit(options: InitOptions): Promise<void> {
  for (const [step, run] of Object.entries(STEPS)) {
    try {
      await run(options);
    } catch (err) {
      throw new Error(`init step "${step}" failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

if (require.main === module) {
  const log = createLogger('init');
  void (async () => {
    try {
      await runInit(readInitOptions(process.env, log));
      log.info('init done');
      process.exit(0);
    } catch (err) {
      log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'init failed');
      process.exit(1);
    }
  })();
}
