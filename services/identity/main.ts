import { runService } from '../shared/bootstrap';
import { identityModule } from './module';

void runService(identityModule);
