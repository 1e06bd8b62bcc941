import { runService } from '../shared/bootstrap';
import { contactsModule } from './module';

void runService(contactsModule);
