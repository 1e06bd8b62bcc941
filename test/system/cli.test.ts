// The admin CLI `invoicing` (README "Admin CLI"): help for every command and the addresses it needs,
// --version, passwords from standard input or a prompt (never needed as an argument), failures as
// one line with a non-zero exit, --json for machine-readable errors.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
    ['an invalid id', ['workspace', 'suspend', '--workspace', 'abc'], 1, 'failed'],
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
});
