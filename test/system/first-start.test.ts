// `npm start` on an empty data directory: demo user, workspace and token, and a curl line that works.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withoutEngines } from '../support/real-engines';

const root = path.resolve(__dirname, '../..');

function startEmbedded(dataDir: string): Promise<{ stop: () => Promise<void>; stderr: () => string; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'dist/deploy/embedded/main.js')], {
      env: { ...withoutEngines(), DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      const line = c.toString().split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        resolve({
          port: JSON.parse(line).port,
          stderr: () => err,
          stop: () => new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

describe('first start of the embedded system', () => {
  it('creates a demo user, workspace and token, prints a curl line that works, and does so only once', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'first-start-'));
    const first = await startEmbedded(dataDir);
    const curl = /curl -H 'Authorization: Bearer (inv_pat_\w+)' (http:\/\/\S+)/.exec(first.stderr());
    expect(curl).not.toBeNull();
    const res = await fetch(curl![2], { headers: { authorization: `Bearer ${curl![1]}` } });
    expect(res.status).toBe(200);
    const accounts = (await res.json()) as Array<{ name: string; default: boolean }>;
    expect(accounts).toEqual([expect.objectContaining({ name: 'Demo Workspace', default: true })]);
    const runtime = JSON.parse(readFileSync(path.join(dataDir, 'runtime.json'), 'utf8'));
    expect(runtime.port).toBe(first.port);
    await first.stop();

    const second = await startEmbedded(dataDir);
    expect(second.stderr()).not.toContain('Created demo user');
    const again = await fetch(`http://127.0.0.1:${second.port}/api/v1/user`, { headers: { authorization: `Bearer ${curl![1]}` } });
    expect(again.status).toBe(200);
    await second.stop();
  });
});
