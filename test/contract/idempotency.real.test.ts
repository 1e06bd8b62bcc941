import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeIdempotencyContract } from './idempotency.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contract_idem_${randomBytes(4).toString('hex')}`);
describeIdempotencyContract('MongoDB wire protocol (FerretDB)', () => MongoDocumentStore.connect(url));
