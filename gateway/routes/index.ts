// The gateway's route table: every /api/v1 operation, one module per resource.
import { authRoutes } from './auth';
import { bankAccountRoutes, contactRoutes } from './contacts';
import { documentRoutes } from './documents';
import { eventRoutes } from './events';
import { expenseFileRoutes } from './expense-files';
import { expenseRoutes } from './expenses';
import { einvoiceRoutes } from './einvoices';
import { pdfRoutes } from './pdfs';
import { RouteSpec } from './route';
import { userRoutes } from './user';

export const allRoutes: RouteSpec[] = [...authRoutes, ...userRoutes, ...contactRoutes, ...bankAccountRoutes, ...documentRoutes, ...pdfRoutes, ...einvoiceRoutes, ...expenseFileRoutes, ...expenseRoutes, ...eventRoutes];
