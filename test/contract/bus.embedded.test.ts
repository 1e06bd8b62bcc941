import { MemoryEventBus } from '../../services/shared/bus/memory';
import { describeBusContract } from './bus.contract';

describeBusContract('in-process (embedded)', async () => new MemoryEventBus());
