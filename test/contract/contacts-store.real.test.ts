import { randomBytes } from 'node:crypto';
import { MongoDocumentStore } from '../../services/shared/store/mongo';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { describeContactsStoreContract } from './contacts-store.contract';

const url = isolatedMongoUrl(realEngineEnv().MONGO_URL, `contacts_${randomBytes(4).toString('hex')}`);
describeContactsStoreContract('MongoDB wire protocol (FerretDB)', () => MongoDocumentStore.connect(url));
