// Binds each port to its adapter: embedded engines when no engine URL is configured, real engines otherwise.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client as MinioClient } from 'minio';
import { BlobStore } from './blobs/port';
import { FsBlobStore } from './blobs/fs';
import { MinioBlobStore } from './blobs/minio';
import { EventBus } from './bus/port';
import { MemoryEventBus } from './bus/memory';
import { KafkaEventBus } from './bus/kafka';
import { EngineUrls } from './config';
import { DocumentStore } from './store/port';
import { SqliteDocumentStore } from './store/sqlite';
import { MongoDocumentStore } from './store/mongo';

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
  /** Signs embedded blob URLs. */
  urlSecret: string;
}): Promise<Adapters> {
  const { engines } = options;
  let store: DocumentStore;
  if (engines.mongoUrl) {
    store = await MongoDocumentStore.connect(engines.mongoUrl);
  } else {
    if (!options.dataDir) throw new Error('DATA_DIR is required without MONGO_URL');
    mkdirSync(options.dataDir, { recursive: true });
    store = new SqliteDocumentStore(path.join(options.dataDir, 'invoicing.db'));
  }
  const bus: EventBus = engines.kafkaBrokers?.length ? new KafkaEventBus(engines.kafkaBrokers, options.clientId) : new MemoryEventBus();
  const blobs: BlobStore = engines.minio
    ? new MinioBlobStore(new MinioClient(engines.minio), engines.minio.bucket)
    : new FsBlobStore(path.join(options.dataDir ?? '.', 'blobs'), options.urlSecret);
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
