import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeStoreContract } from './store.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contract_${randomBytes(4).toString('hex')}`);
describeStoreContract('MongoDB wire protocol (FerretDB)', {
  open: () => MongoDocumentStore.connect(url),
  reopen: () => MongoDocumentStore.connect(url),
});

describe('startup atomicity probe against the serialised FerretDB', () => {
  it('passes on connect and leaves no scratch documents behind', async () => {
    const store = await MongoDocumentStore.connect(url);
    await store.close();
    const conn = await mongoose.createConnection(url).asPromise();
    try {
      expect(await conn.collection('atomicity_probe').countDocuments({})).toBe(0);
    } finally {
      await conn.close();
    }
  });
});
