// Every service module, in start order (a service's peers start before it).
import { contactsModule } from '../services/contacts/module';
import { documentsModule } from '../services/documents/module';
import { expensesModule } from '../services/expenses/module';
import { identityModule } from '../services/identity/module';
import { renderingModule } from '../services/rendering/module';
import { ServiceModule } from '../services/shared/module';

export const serviceModules: ServiceModule[] = [identityModule, contactsModule, documentsModule, renderingModule, expensesModule];

