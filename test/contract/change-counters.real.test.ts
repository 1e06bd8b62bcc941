import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeChangeCountersContract } from './change-counters.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contract_counters_${randomBytes(4).toString('hex')}`);
describeChangeCountersContract('MongoDB wire protocol (FerretDB)', () => MongoDocumentStore.connect(url));
