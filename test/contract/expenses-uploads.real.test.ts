import { Client } from 'minio';
import { randomBytes } from 'node:crypto';
import { MinioBlobStore } from '../../services/shared/blobs/minio';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeUploadSweepContract } from './expenses-uploads.contract';

describeUploadSweepContract('FerretDB and MinIO', async () => {
  const env = realEngineEnv();
  const suffix = randomBytes(4).toString('hex');
  const client = new Client({
    endPoint: env.MINIO_ENDPOINT,
    port: Number(env.MINIO_PORT),
    useSSL: env.MINIO_USE_SSL === 'true',
    accessKey: env.MINIO_ACCESS_KEY,
    secretKey: env.MINIO_SECRET_KEY,
  });
  return {
    documents: await MongoDocumentStore.connect(isolatedMongoUrl(env.MONGO_URL, `expenses_uploads_${suffix}`)),
    blobs: new MinioBlobStore(client, `expenses-uploads-${suffix}`),
  };
});
