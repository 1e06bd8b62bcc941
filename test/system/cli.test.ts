// The admin CLI `invoicing` (README "Admin CLI"): help for every command and the addresses it needs,
// --version, passwords from standard input or a prompt (never needed as an argument), failures as
// one line with a non-zero exit, --json for machine-readable errors.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Command } from 'commander';
import { program } from '../../deploy/cli/main';
import { uniqueEmail } from '../support/fixtures';
import { startSystem, System } from '../support/system';

const root = path.resolve(__dirname, '../..');
const cliPath = path.join(root, 'dist/deploy/cli/main.js');
let system: System;

function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const result = spawnSync(process.execPath, [cliPath, ...args], {
    env: { ...process.env, ...(system?.cliEnv ?? {}), ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const commands = (parent: Command, prefix: string[] = []): Array<[string[], Command]> =>
  parent.commands.flatMap((c) => [[[...prefix, c.name()], c] as [string[], Command], ...commands(c, [...prefix, c.name()])]);

/** A loopback port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  system = await startSystem({ mode: 'embedded' });
});
afterAll(async () => {
  await system?.stop();
});

describe('invoicing --help', () => {
  it('exits 0 and documents every address the CLI needs and how passwords are given', () => {
    const { code, stdout } = cli(['--help']);
    expect(code).toBe(0);
    for (const documented of ['DATA_DIR', 'IDENTITY_ADMIN_ADDR', 'DOCUMENTS_ADMIN_ADDR', 'CONTACTS_ADDR', 'GRPC_TLS_DIR', '--password-stdin', '--json']) expect(stdout).toContain(documented);
  });

  it.each(commands(program).map(([names, command]) => [names.join(' '), command]))('%s has a description', (_name, command) => {
    expect((command as Command).description()).toMatch(/\S{3}/);
  });

  it.each(commands(program).map(([names]) => [names.join(' '), names]))('%s --help exits 0', (_name, names) => {
    const { code, stdout } = cli([...(names as string[]), '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: invoicing ${(names as string[]).join(' ')}`);
  });
});

describe('invoicing --version', () => {
  const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;

  it('prints the version and exits 0', () => {
    expect(cli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('prints it as JSON with --json', () => {
    const { code, stdout } = cli(['--version', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ version });
  });
});

describe('invoicing user create: the password', () => {
  const signIn = (email: string, password: string) =>
    fetch(`${system.baseUrl}/api/v1/auth/sign_in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

  it('is read from standard input with --password-stdin (the trailing newline dropped)', async () => {
    const email = uniqueEmail('stdin');
    const { code, stdout } = cli(['user', 'create', '--email', email, '--password-stdin', '--name', 'Ana'], { input: 'a long secret, with spaces\n' });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ email });
    expect((await signIn(email, 'a long secret, with spaces')).status).toBe(200);
  });

  it('without a terminal or --password-stdin, is refused in one line and no user is created', async () => {
    const email = uniqueEmail('nopass');
    const { code, stdout, stderr } = cli(['user', 'create', '--email', email]);
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^invoicing: no password: give it with --password-stdin, or run in a terminal to be prompted\n$/);
    expect(cli(['user', 'create', '--email', email, '--password-stdin'], { input: 'a later secret' }).code).toBe(0);
  });

  it('--password-stdin with empty input is refused', () => {
    const { code, stderr } = cli(['user', 'create', '--email', uniqueEmail('empty'), '--password-stdin']);
    expect(code).toBe(1);
    expect(stderr).toBe('invoicing: --password-stdin: standard input is empty\n');
  });
});

describe('invoicing: failures', () => {
  const owner = uniqueEmail('owner');
  beforeAll(() => {
    expect(cli(['user', 'create', '--email', owner, '--password-stdin'], { input: 'the owner secret' }).code).toBe(0);
  });

  it.each([
    ['an unknown command', ['bill', 'everyone'], 2, 'unknown_command'],
    ['a group without its command', ['workspace'], 2, 'missing_command'],
    ['a missing required option', ['token', 'create', '--kind', 'pat'], 2, 'missing_mandatory_option_value'],
    ['an unknown option', ['workspace', 'suspend', '--workspace', '1', '--bogus'], 2, 'unknown_option'],
    ['an invalid id', ['workspace', 'suspend', '--workspace', 'abc'], 1, 'failed'],
    ['bad input (legal identity that is not JSON)', ['workspace', 'set-legal-identity', '--workspace', '1', '--data', '{bad'], 1, 'failed'],
    ['a refusal by the system', ['user', 'create', '--email', owner, '--password-stdin'], 1, 'email_taken'],
  ])('%s: one line on stderr, nothing on stdout, a non-zero exit; with --json that line is {"error":{code, message}}', (_name, args, exitCode, jsonCode) => {
    const input = 'another secret';
    const plain = cli(args as string[], { input });
    expect(plain.code).toBe(exitCode);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/^invoicing: [^\n]+\n$/);
    const json = cli([...(args as string[]), '--json'], { input });
    expect(json.code).toBe(exitCode);
    expect(json.stderr.split('\n')).toHaveLength(2);
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: jsonCode, message: expect.stringMatching(/\S/) } });
  });

  it('no running system: one line naming what to start or set', () => {
    const { code, stderr } = cli(['workspace', 'create', '--owner', owner], { env: { IDENTITY_ADMIN_ADDR: '', DATA_DIR: path.join(root, '.no-such-dir') } });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^invoicing: no running system found: .*runtime\.json is missing \(start it with npm start, or set IDENTITY_ADMIN_ADDR\)\n$/);
  });

  it('an address where nothing listens: one line naming the service, the address and where it came from', async () => {
    const closed = await closedPort();
    const env = { IDENTITY_ADMIN_ADDR: `127.0.0.1:${closed}` };
    const plain = cli(['workspace', 'suspend', '--workspace', '1'], { env });
    expect(plain).toMatchObject({ code: 1, stdout: '' });
    expect(plain.stderr).toBe(`invoicing: cannot reach identity's admin port at 127.0.0.1:${closed} (from IDENTITY_ADMIN_ADDR): connect ECONNREFUSED 127.0.0.1:${closed}\n`);
    const json = cli(['workspace', 'suspend', '--workspace', '1', '--json'], { env });
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'unreachable', message: expect.stringContaining(`127.0.0.1:${closed}`) } });
  });

  it.each([
    ['workspace document-settings', ['workspace', 'document-settings', '--workspace', '1', '--currency', 'EUR'], 'DOCUMENTS_ADMIN_ADDR'],
    ['cash-register create', ['cash-register', 'create', '--workspace', '1', '--name', 'Till'], 'CONTACTS_ADDR'],
  ])('distributed addressing without the address %s needs: one line naming the variable', (_name, args, variable) => {
    const { code, stderr } = cli([...(args as string[]), '--json'], { env: { IDENTITY_ADMIN_ADDR: '127.0.0.1:1', DOCUMENTS_ADMIN_ADDR: '', CONTACTS_ADDR: '' } });
    expect(code).toBe(1);
    expect(JSON.parse(stderr)).toEqual({ error: { code: 'address_not_set', message: expect.stringMatching(new RegExp(`^${variable} is not set`)) } });
  });
});

describe('invoicing: the addresses --help documents are all it needs', () => {
  it('with IDENTITY_ADMIN_ADDR, DOCUMENTS_ADMIN_ADDR and CONTACTS_ADDR (no DATA_DIR), every kind of command works', () => {
    const runtime = JSON.parse(readFileSync(path.join(system.dataDir, 'runtime.json'), 'utf8'));
    const env = {
      DATA_DIR: path.join(root, '.no-such-dir'),
      IDENTITY_ADMIN_ADDR: runtime.admin.identity,
      DOCUMENTS_ADMIN_ADDR: runtime.admin.documents,
      CONTACTS_ADDR: runtime.services.contacts,
    };
    const owner = uniqueEmail('addresses');
    expect(cli(['user', 'create', '--email', owner, '--password-stdin'], { input: 'the owner secret', env }).code).toBe(0);
    const created = cli(['workspace', 'create', '--owner', owner, '--name', 'Addressed s.r.o.'], { env });
    expect(created.code).toBe(0);
    const workspace = String(JSON.parse(created.stdout).id);
    expect(cli(['workspace', 'document-settings', '--workspace', workspace, '--currency', 'EUR'], { env })).toMatchObject({ code: 0, stderr: '' });
    expect(cli(['cash-register', 'create', '--workspace', workspace, '--name', 'Till'], { env })).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('the embedded admin services: only the local CLI reaches them (docs/architecture.md "Internal network")', () => {
  const runtime = () =>
    JSON.parse(readFileSync(path.join(system.dataDir, 'runtime.json'), 'utf8')) as { pid: number; services: Record<string, string>; admin: Record<string, string> };
  const signIn = (email: string) =>
    fetch(`${system.baseUrl}/api/v1/auth/sign_in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'an intruder secret' }) });
  /** A process that is not the CLI asks identity's admin service for a user, at `address`; prints the outcome. */
  const createUserFrom = (address: string, email: string, asUser?: number) =>
    spawnSync(
      process.execPath,
      [
        '-e',
        `const { connectAdmin } = require(${JSON.stringify(path.join(root, 'dist/gateway/clients.js'))});
         const admin = connectAdmin(process.argv[1]);
         admin.createUser({ email: process.argv[2], password: 'an intruder secret', name: '' }, { timeoutMs: 5000 })
           .then(() => console.log('created'), (err) => console.log('refused', err.status, err.message)).finally(() => admin.close());`,
        address,
        email,
      ],
      { encoding: 'utf8', uid: asUser, gid: asUser, cwd: '/' },
    );

  /** The TCP ports `pid` listens on, from /proc: its socket inodes matched against the kernel's listening sockets. */
  function listeningTcpPorts(pid: number): number[] {
    const inodes = new Set(
      readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]].filter((i): i is string => !!i);
        } catch {
          return [];
        }
      }),
    );
    return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
      readFileSync(table, 'utf8')
        .split('\n')
        .slice(1)
        .map((line) => line.trim().split(/\s+/))
        .filter((cols) => cols[3] === '0A' && inodes.has(cols[9]))
        .map((cols) => parseInt(cols[1].split(':')[1], 16)),
    );
  }

  it('every gRPC address in runtime.json is a Unix socket, 0600, in a directory only this user may enter (0700)', () => {
    const { services, admin } = runtime();
    expect(Object.keys(admin).sort()).toEqual(['documents', 'identity']);
    for (const address of [...Object.values(services), ...Object.values(admin)]) {
      expect(address).toMatch(/^unix:\//);
      const socket = address.slice('unix:'.length);
      expect(statSync(socket).isSocket()).toBe(true);
      expect(statSync(socket).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
    }
  });

  it('no TCP port of the process (the old admin port is gone) lets a local process create a user', async () => {
    const ports = listeningTcpPorts(runtime().pid);
    expect(ports).toContain(new URL(system.baseUrl).port ? Number(new URL(system.baseUrl).port) : 80);
    for (const port of ports) {
      const email = uniqueEmail('tcp-intruder');
      const { stdout } = createUserFrom(`127.0.0.1:${port}`, email);
      expect(stdout).toMatch(/^refused /);
      expect((await signIn(email)).status).toBe(401);
    }
  });

  // Switching to another account needs root (as on CI); the socket's mode is asserted above either way.
  (process.getuid?.() === 0 ? it : it.skip)('another local account cannot open the admin socket, so cannot create a user', async () => {
    const email = uniqueEmail('other-account');
    const nobody = 65534;
    const { stdout } = createUserFrom(runtime().admin.identity, email, nobody);
    expect(stdout).toMatch(/^refused 14 .*EACCES/);
    expect((await signIn(email)).status).toBe(401);
  });

  it('the CLI, as the user running the system, creates a user over the socket', async () => {
    const email = uniqueEmail('local-cli');
    expect(cli(['user', 'create', '--email', email, '--password-stdin'], { input: 'an intruder secret' }).code).toBe(0);
    expect((await signIn(email)).status).toBe(200);
  });
});
