// The sandbox contract against the process adapter (child Node processes with an RSS watchdog).
import { readdirSync, readFileSync } from 'node:fs';
import { ProcessSandbox } from '../../services/shared/sandbox/process-sandbox';
import type { TaskInput } from '../support/sandbox-tasks';
import { describeSandboxContract, SANDBOX_TASKS } from './sandbox.contract';

describeSandboxContract('child process', (init, limits) => new ProcessSandbox({ taskModule: SANDBOX_TASKS, init, limits }));

describe('process sandbox: every thread runs niced, so the serving processes win the CPU', () => {
  it('the main thread, V8’s platform threads and threads started later all have nice 10', async () => {
    const sandbox = new ProcessSandbox<TaskInput, any>({ taskModule: SANDBOX_TASKS, init: { greeting: 'nice' }, limits: { wallMs: 10_000, memoryMb: 256 } });
    try {
      const pid: number = await sandbox.run({ kind: 'pid' });
      const threads = readdirSync(`/proc/${pid}/task`);
      expect(threads.length).toBeGreaterThan(1);
      // Field 19 of /proc/<pid>/task/<tid>/stat (after the command's closing parenthesis) is the nice value.
      const nice = threads.map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]));
      expect(new Set(nice)).toEqual(new Set([10]));
    } finally {
      await sandbox.close();
    }
  });
});
