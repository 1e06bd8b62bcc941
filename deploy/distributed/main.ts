// Distributed mode: one service per process, chosen by SERVICE (identity, contacts, gateway, …).
import { runService } from '../../services/shared/bootstrap';
import { serviceModules } from '../modules';

const name = process.env.SERVICE;
if (name === 'gateway') {
  require('../../gateway/main');
} else {
  const module = serviceModules.find((m) => m.name === name);
  if (!module) {
    process.stderr.write(`SERVICE must be gateway or one of: ${serviceModules.map((m) => m.name).join(', ')}\n`);
    process.exit(1);
  }
  void runService(module);
}
