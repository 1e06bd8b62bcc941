// The README's five-minute start is run as written (its code blocks are extracted), so the examples
// people copy keep working: the embedded system started on an empty data directory, as `npm start`
// does, and the curl walk in bash and the TypeScript client walk run with the workspace id and token it
// prints — not with a workspace a fixture prepared.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fiveMinuteStart } from '../../client/examples/five-minute-start';
import { withoutEngines } from '../support/real-engines';
import { Proc, startProcess } from '../support/system';

const root = path.resolve(__dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

/** The fenced blocks of one language under a heading, up to the next heading of the same or a higher level. */
function blocks(heading: string, language: string): string[] {
  const level = heading.split(' ')[0].length;
  const found: string[] = [];
  let inSection = false;
  let fence: string[] | undefined;
  let fenceLanguage = '';
  for (const line of readme.split('\n')) {
    if (fence) {
      if (line.startsWith('```')) {
        if (inSection && fenceLanguage === language) found.push(fence.join('\n') + '\n');
        fence = undefined;
      } else fence.push(line);
      continue;
    }
    if (line.startsWith('```')) {
      fence = [];
      fenceLanguage = line.slice(3).trim();
      continue;
    }
    const headingLevel = /^(#+) /.exec(line)?.[1].length;
    if (line === heading) inSection = true;
    else if (headingLevel && headingLevel <= level) inSection = false;
  }
  if (!found.length) throw new Error(`README has no ${language} block under "${heading}"`);
  return found;
}

/** The first start's notice on stderr, whole (it is written just before the ready line on stdout,
 * which may be read first: the two pipes are not ordered). */
async function firstStartNotice(proc: Proc): Promise<string> {
  const complete = () => /Bearer inv_pat_\w+'/.test(proc.errorOutput());
  if (!complete()) {
    await new Promise<void>((resolve) => {
      const check = () => {
        if (!complete()) return;
        proc.child.stderr!.off('data', check);
        resolve();
      };
      proc.child.stderr!.on('data', check);
    });
  }
  return proc.errorOutput();
}

let system: Proc;
/** What the README's start block exports: API, and TOKEN and ACCOUNT as the first start prints them. */
let started: { api: string; token: string; account: number };
beforeAll(async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'readme-start-'));
  system = await startProcess(path.join(root, 'dist/deploy/embedded/main.js'), { DATA_DIR: dataDir, PORT: '0' }, 'embedded system (npm start)', withoutEngines());
  const notice = await firstStartNotice(system);
  const account = /workspace (\d+) and an all-scopes token/.exec(notice)?.[1];
  const token = /Bearer (inv_pat_\w+)/.exec(notice)?.[1];
  if (!account || !token) throw new Error(`the first start printed no workspace id and token:\n${notice}`);
  started = { api: `http://127.0.0.1:${system.port}/api/v1`, token, account: Number(account) };
});
afterAll(async () => {
  if (!system || system.child.exitCode !== null) return;
  const exited = new Promise((resolve) => system.child.once('exit', resolve));
  system.child.kill('SIGTERM');
  await exited;
});

describe('README: five-minute start', () => {
  it('starts with npm start and names the variables the walks use', () => {
    const [start] = blocks('## Five-minute start', 'sh');
    expect(start).toContain('npm start');
    expect(start).toMatch(/export API=http:\/\/127\.0\.0\.1:8080\/api\/v1 TOKEN=\S+ ACCOUNT=\d+/);
  });

  it('the curl walk creates a contact and an invoice, issues it, downloads its PDF and sends it', async () => {
    const [walk] = blocks('### With curl', 'sh');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'readme-curl-'));
    const env = { ...process.env, API: started.api, TOKEN: started.token, ACCOUNT: String(started.account) };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile('bash', ['-euo', 'pipefail', '-c', walk], { cwd: dir, env }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))),
    );
    const [number, emailStatus] = stdout.trim().split('\n');
    expect(number).toMatch(/^\d{10}$/);
    expect(emailStatus).toBe('queued');
    expect(readFileSync(path.join(dir, 'invoice.pdf')).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('the client walk in the README is client/examples/five-minute-start.ts, word for word', () => {
    const [code] = blocks('### With the TypeScript client', 'ts');
    expect(code).toBe(readFileSync(path.join(root, 'client/examples/five-minute-start.ts'), 'utf8'));
  });

  it('the client walk does the same and writes the PDF', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'readme-client-'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const sent = await fiveMinuteStart(started.api, started.token, started.account);
      expect(sent).toMatchObject({ status: 'exposed', email_status: 'queued', total: '1815.00' });
      const [pdf] = readdirSync(dir);
      expect(pdf).toBe(`invoice-${sent.number}.pdf`);
      expect(readFileSync(path.join(dir, pdf)).subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      process.chdir(cwd);
    }
  });
});
