import { runService } from '../shared/bootstrap';
import { documentsModule } from './module';

void runService(documentsModule);
