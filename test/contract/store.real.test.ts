import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeStoreContract } from './store.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contract_${randomBytes(4).toString('hex')}`);
describeStoreContract('MongoDB wire protocol (FerretDB)', {
  open: () => MongoDocumentStore.connect(url),
  reopen: () => MongoDocumentStore.connect(url),
});
