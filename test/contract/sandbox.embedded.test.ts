// The sandbox contract against the process adapter (child Node processes with an RSS watchdog).
import { ProcessSandbox } from '../../services/shared/sandbox/process-sandbox';
import { describeSandboxContract, SANDBOX_TASKS } from './sandbox.contract';

describeSandboxContract('child process', (init, limits) => new ProcessSandbox({ taskModule: SANDBOX_TASKS, init, limits }));
