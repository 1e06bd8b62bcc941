import { runService } from '../shared/bootstrap';
import { renderingModule } from './module';

void runService(renderingModule);
