// The inside of a process sandbox (process-sandbox.ts forks it): loads the task module named by its
// argument, builds the task from the parent's `init` message and runs one job per `run` message. It
// answers over IPC (structured clone). Whatever the task does to this process — a loop that never
// yields, memory growing without end, a native crash — the parent sees it and kills or replaces it.
import type { TaskFactory } from './port';

type Inbound = { type: 'init'; init: unknown } | { type: 'run'; id: number; input: unknown };

const send = (message: unknown) => process.send?.(message);

function encodeError(error: unknown): { name: string; message: string; code?: string } {
  const e = error as { name?: string; message?: string; reason?: unknown; code?: unknown };
  const code = typeof e?.reason === 'string' ? e.reason : typeof e?.code === 'string' ? e.code : undefined;
  return { name: typeof e?.name === 'string' ? e.name : 'Error', message: typeof e?.message === 'string' ? e.message : String(error), code };
}

async function main(): Promise<void> {
  const modulePath = process.argv[2];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const factory = (require(modulePath) as { createTask?: TaskFactory<unknown, unknown> }).createTask;
  if (typeof factory !== 'function') throw new Error(`${modulePath} exports no createTask`);
  let task: ((input: unknown) => Promise<unknown>) | undefined;
  process.on('message', (message: Inbound) => {
    if (message.type === 'init') {
      Promise.resolve(factory(message.init)).then(
        (t) => {
          task = t;
          send({ type: 'ready' });
        },
        (error) => send({ type: 'init_failed', error: encodeError(error) }),
      );
      return;
    }
    if (message.type === 'run' && task) {
      task(message.input).then(
        (value) => send({ type: 'result', id: message.id, ok: true, value }),
        (error) => send({ type: 'result', id: message.id, ok: false, error: encodeError(error) }),
      );
    }
  });
  // The parent's end of the channel closed (it died or let go): nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
}

main().catch((error) => {
  process.stderr.write(`sandbox: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(70);
});
