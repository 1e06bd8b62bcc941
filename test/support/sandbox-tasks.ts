// Jobs for the sandbox contract (test/contract/sandbox.contract.ts), loaded inside the sandbox by path:
// well-behaved ones, and ones that misbehave the ways a hostile file makes a parser misbehave.
export type TaskInput =
  | { kind: 'echo'; bytes: Uint8Array; note: string }
  | { kind: 'pid' }
  | { kind: 'env' }
  | { kind: 'fail'; reason: string }
  | { kind: 'loop' }
  | { kind: 'native_memory'; mbPerStep: number }
  | { kind: 'heap' }
  | { kind: 'crash' };

export function createTask(init: { greeting: string }) {
  return async (input: TaskInput): Promise<unknown> => {
    switch (input.kind) {
      case 'echo':
        return { greeting: init.greeting, note: input.note, bytes: input.bytes, length: input.bytes.byteLength };
      case 'pid':
        return process.pid;
      case 'env':
        return Object.keys(process.env);
      case 'fail':
        throw Object.assign(new Error('the file cannot be read'), { name: 'ExtractionFailure', reason: input.reason });
      case 'loop':
        // A parser that never yields: no timer on this loop can ever fire.
        for (;;);
      case 'native_memory': {
        // Memory outside the V8 heap (as libvips or WASM allocate it), touched so it is resident.
        const held: Buffer[] = [];
        for (;;) {
          held.push(Buffer.alloc(input.mbPerStep * 1024 * 1024, 1));
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
      case 'heap': {
        const held: number[][] = [];
        for (;;) held.push(Array.from({ length: 100_000 }, (_, i) => i * 1.5));
      }
      case 'crash':
        process.kill(process.pid, 'SIGSEGV');
        return new Promise(() => undefined);
    }
  };
}
