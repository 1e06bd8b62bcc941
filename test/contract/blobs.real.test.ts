import { Client } from 'minio';
import { randomBytes } from 'node:crypto';
import { MinioBlobStore } from '../../services/shared/blobs/minio';
import { realEngineEnv } from '../support/real-engines';
import { describeBlobContract } from './blobs.contract';

describeBlobContract('MinIO', async () => {
  const env = realEngineEnv();
  const client = new Client({
    endPoint: env.MINIO_ENDPOINT,
    port: Number(env.MINIO_PORT),
    useSSL: env.MINIO_USE_SSL === 'true',
    accessKey: env.MINIO_ACCESS_KEY,
    secretKey: env.MINIO_SECRET_KEY,
  });
  return new MinioBlobStore(client, `contract-${randomBytes(4).toString('hex')}`);
});
