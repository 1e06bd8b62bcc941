// A test system's processes end with the test process that started them (test/support/die-with-parent.ts),
// even when that process is SIGKILLed — as jest does to a worker that does not exit in time — and runs no
// handler of its own. Seen on CI before: a killed worker's services ran on for the rest of the run.
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a test system outliving its starter', () => {
  it('its processes stop by themselves once the process that started them was SIGKILLed', async () => {
    // The starter: starts an embedded system, prints its processes' pids, then waits to be killed.
    const script = `
      const { startSystem } = require(${JSON.stringify(path.join(root, 'dist/test/support/system.js'))});
      startSystem({ mode: 'embedded', private: true }).then((s) => {
        console.log(JSON.stringify(s.processes().map((p) => p.pid)));
        setInterval(() => {}, 1000);
      }, (err) => { console.error(err); process.exit(1); });`;
    const starter = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      starter.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('['));
        if (line) resolve(JSON.parse(line));
      });
      starter.once('exit', (code) => reject(new Error(`the starter exited with ${code} before its system was up`)));
    });
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.every(alive)).toBe(true);
    starter.kill('SIGKILL');
    // They notice within a second and stop gracefully; bounded.
    const deadline = Date.now() + 30_000;
    while (pids.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pids.filter(alive)).toEqual([]);
  });
});
