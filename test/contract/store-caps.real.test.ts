import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeCapContract } from './store-caps.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `caps_${randomBytes(4).toString('hex')}`);
describeCapContract('MongoDB wire protocol (FerretDB)', () => MongoDocumentStore.connect(url));
