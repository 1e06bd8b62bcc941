import { runService } from '../shared/bootstrap';
import { expensesModule } from './module';

void runService(expensesModule);
