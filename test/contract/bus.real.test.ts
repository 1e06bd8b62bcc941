import { KafkaEventBus } from '../../services/shared/bus/kafka';
import { realEngineEnv } from '../support/real-engines';
import { describeBusContract } from './bus.contract';

describeBusContract('Kafka', async () => new KafkaEventBus(realEngineEnv().KAFKA_BROKERS.split(','), 'contract-test'));
