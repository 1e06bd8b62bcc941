// The one way a bench waits for a server it spawned: the `{"ready":…}` line every process prints
// (services/shared/bootstrap.ts, gateway/runtime.ts), with a start-up bound and its output for errors.
import { ChildProcess } from 'node:child_process';

export interface Proc {
  child: ChildProcess;
  pid: number;
  port: number;
  stderr: () => string;
}

/** Resolves once `child` says it is ready; a child that exits or stays silent for 60 s is killed and rejects. */
export function readyProcess(child: ChildProcess, label: string): Promise<Proc> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start in 60 s\n${err.slice(-2000)}`));
    }, 60_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, pid: child.pid!, port: JSON.parse(line).port as number, stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}\n${err.slice(-1500)}\n${out.slice(-1500)}`));
    });
  });
}
