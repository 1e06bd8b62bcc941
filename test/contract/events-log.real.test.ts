import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeEventsLogContract } from './events-log.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contract_events_${randomBytes(4).toString('hex')}`);
describeEventsLogContract('MongoDB wire protocol (FerretDB)', () => MongoDocumentStore.connect(url));
