// Binds each port to its adapter: embedded engines when no engine URL is configured, real engines otherwise.
// Adapters are loaded only when bound, so an embedded process never loads mongoose, kafkajs or minio
// (nor a distributed one better-sqlite3).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { noBlobStore } from './blobs/none';
import { BlobStore } from './blobs/port';
import { observeBus } from './bus/observed';
import { EventBus } from './bus/port';
import { ConfigError, EngineUrls } from './config';
import { Logger } from './logger';
import { DocumentStore } from './store/port';

export interface Adapters {
  store: DocumentStore;
  bus: EventBus;
  blobs: BlobStore;
  close(): Promise<void>;
}

export async function bindAdapters(options: {
  dataDir?: string;
  engines: EngineUrls;
  clientId: string;
  /** Signs the file-system store's blob URLs (not needed with MinIO, which signs its own). */
  urlSecret?: string;
  /** false: the process uses no blobs (ServiceModule.needs) and is given no blob store at all. Default true. */
  blobs?: boolean;
  /** Where the engines' own failures (index creation, the Kafka client) are logged; default a logger named clientId. */
  log?: Logger;
}): Promise<Adapters> {
  const { engines } = options;
  let store: DocumentStore;
  if (engines.mongoUrl) {
    const { MongoDocumentStore } = await import('./store/mongo');
    store = await MongoDocumentStore.connect(engines.mongoUrl, options.log);
  } else {
    if (!options.dataDir) throw new Error('DATA_DIR is required without MONGO_URL');
    mkdirSync(options.dataDir, { recursive: true });
    const { SqliteDocumentStore } = await import('./store/sqlite');
    store = new SqliteDocumentStore(path.join(options.dataDir, 'invoicing.db'));
  }
  let bus: EventBus;
  if (engines.kafkaBrokers?.length) {
    const { KafkaEventBus } = await import('./bus/kafka');
    bus = new KafkaEventBus(engines.kafkaBrokers, options.clientId, 3, engines.kafkaTopicPrefix, options.log);
  } else {
    const { MemoryEventBus } = await import('./bus/memory');
    bus = new MemoryEventBus();
  }
  bus = observeBus(bus);
  let blobs: BlobStore;
  if (options.blobs === false) {
    blobs = noBlobStore(options.clientId);
  } else if (engines.minio) {
    const [{ Client: MinioClient }, { MinioBlobStore }] = await Promise.all([import('minio'), import('./blobs/minio')]);
    blobs = new MinioBlobStore(new MinioClient(engines.minio), engines.minio.bucket);
  } else {
    if (!options.urlSecret) throw new ConfigError('URL_SECRET is required for the file-system blob store (or set MINIO_ENDPOINT)');
    const { FsBlobStore } = await import('./blobs/fs');
    blobs = new FsBlobStore(path.join(options.dataDir ?? '.', 'blobs'), options.urlSecret);
  }
  return {
    store,
    bus,
    blobs,
    close: async () => {
      await bus.close();
      await store.close();
    },
  };
}
