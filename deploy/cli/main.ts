// `invoicing` admin CLI: what the (absent) app does — users, workspaces, plans, keys. Finds the running
// system like `npm start` does: DATA_DIR/runtime.json in embedded mode; in distributed mode the admin
// ports IDENTITY_ADMIN_ADDR and DOCUMENTS_ADMIN_ADDR, and CONTACTS_ADDR. Under mTLS it presents the
// certificate in GRPC_TLS_DIR (identity `admin`). Prints one JSON object on stdout; exits non-zero with a
// one-line message on failure (JSON with --json). `invoicing --help` documents every command and the
// environment (help.ts).
import { status } from '@grpc/grpc-js';
import { Command, CommanderError } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CredentialType } from '../../gen/invoicing/identity/v1/identity';
import { BankingServiceService, ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { DocumentsAdminServiceService } from '../../gen/invoicing/documents/v1/documents';
import { connect } from '../../services/shared/grpc/typed';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { usePlaintextMesh } from '../../services/shared/grpc/mesh';
import { connectAdmin } from '../../gateway/clients';
import { repoRoot } from '../../services/shared/paths';
import { BackupRefused } from './backup/refused';
import { ENVIRONMENT_HELP } from './help';
import { parseLegalIdentity, parseNumberMap, parsePositiveId } from './parse';
import { readNewPassword } from './password';

type Peer = 'identityAdmin' | 'documentsAdmin' | 'contacts';

interface Addresses {
  identityAdmin: string;
  documentsAdmin: string;
  contacts: string;
  /** Where they were read: 'environment', or the runtime.json path. */
  source: string;
}

const PEERS: Record<Peer, { env: string; what: string; needs: string }> = {
  identityAdmin: { env: 'IDENTITY_ADMIN_ADDR', what: "identity's admin port", needs: 'users, workspaces, plans, tokens' },
  documentsAdmin: { env: 'DOCUMENTS_ADMIN_ADDR', what: "documents' admin port", needs: 'workspace document-settings' },
  contacts: { env: 'CONTACTS_ADDR', what: 'the contacts service', needs: 'contact suspend, cash-register create' },
};

function addresses(): Addresses {
  if (process.env.IDENTITY_ADMIN_ADDR) {
    return {
      identityAdmin: process.env.IDENTITY_ADMIN_ADDR,
      documentsAdmin: process.env.DOCUMENTS_ADMIN_ADDR ?? '',
      contacts: process.env.CONTACTS_ADDR ?? '',
      source: 'environment',
    };
  }
  // The embedded system listens on loopback without TLS, whatever GRPC_TLS_DIR this shell has.
  usePlaintextMesh();
  const dataDir = path.resolve(process.env.DATA_DIR || '.data');
  const runtime = path.join(dataDir, 'runtime.json');
  if (!existsSync(runtime)) {
    throw new SetupError('no_running_system', `no running system found: ${runtime} is missing (start it with npm start, or set IDENTITY_ADMIN_ADDR)`);
  }
  const { services, admin, pid } = JSON.parse(readFileSync(runtime, 'utf8')) as {
    services: Record<string, string>;
    admin: Record<string, string>;
    pid: number;
  };
  try {
    process.kill(pid, 0);
  } catch {
    throw new SetupError('no_running_system', `no running system found: the process recorded in ${runtime} (pid ${pid}) is not running; start it with npm start`);
  }
  return { identityAdmin: admin.identity, documentsAdmin: admin.documents ?? '', contacts: services.contacts ?? '', source: runtime };
}

/** The peer a command called, so that "cannot reach it" names it, its address and where that came from. */
let called: { peer: Peer; address: string; source: string } | undefined;

function addressOf(peer: Peer): string {
  const found = addresses();
  const { env, what, needs } = PEERS[peer];
  const address = found[peer];
  if (!address) {
    throw new SetupError(
      'address_not_set',
      found.source === 'environment'
        ? `${env} is not set: ${what} is needed for ${needs} (IDENTITY_ADMIN_ADDR is set, so every address comes from the environment)`
        : `${found.source} names no address for ${what}; restart the system with npm start`,
    );
  }
  called = { peer, address, source: found.source === 'environment' ? env : found.source };
  return address;
}

const admin = () => connectAdmin(addressOf('identityAdmin'));
const contactsClient = () => connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', addressOf('contacts'));
const bankingClient = () => connect(BankingServiceService, 'invoicing.contacts.v1.BankingService', addressOf('contacts'));
const documentsAdmin = () => connect(DocumentsAdminServiceService, 'invoicing.documents.v1.DocumentsAdminService', addressOf('documentsAdmin'));
const live = (accountId: number) => ({ account_id: accountId, livemode: true });

let output: unknown;
const print = (value: unknown) => {
  output = value;
};

/** The CLI cannot find the system: nothing recorded, or an address not configured (exit 1). */
class SetupError extends Error {
  constructor(
    readonly code: 'no_running_system' | 'address_not_set',
    message: string,
  ) {
    super(message);
  }
}

/** A mistake in how the CLI was called (exit 2), as opposed to a refusal by the system (exit 1). */
class UsageError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const program = new Command('invoicing')
  .description('Administer a running invoicing system: users, workspaces, plans, tokens, contacts, cash registers; back up and restore an embedded DATA_DIR')
  .option('-V, --version', 'print the version')
  .option('--json', 'print errors (and --version) as JSON too')
  .addHelpText('after', ENVIRONMENT_HELP)
  .configureOutput({ outputError: () => undefined }) // run() prints every error, as one line
  .exitOverride();

/** A group of commands; called without one of them it is a usage error, not a page of help on stderr. */
function group(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .usage('<command> [options]')
    .argument('[command]')
    .allowExcessArguments()
    .action((given: string | undefined, _options: unknown, self: Command) => {
      const known = self.commands.map((c) => c.name()).join(', ');
      if (given) throw new UsageError('unknown_command', `unknown command '${name} ${given}' (one of: ${known})`);
      throw new UsageError('missing_command', `'${name}' needs a command (one of: ${known}); see invoicing ${name} --help`);
    });
}

const user = group(program, 'user', 'people who sign in');
user
  .command('create')
  .description('create a user; the password comes from a prompt or --password-stdin')
  .requiredOption('--email <email>', 'sign-in e-mail address')
  .option('--password-stdin', 'read the password from standard input (for scripts)')
  .option('--password <password>', 'the password itself (discouraged: visible in process lists and shell history)')
  .option('--name <name>', 'display name', '')
  .action(async (o) => {
    const password = o.password ?? (await readNewPassword({ passwordStdin: o.passwordStdin }));
    const { user: created } = await admin().createUser({ email: o.email, password, name: o.name });
    print({ id: created!.id, email: created!.email });
  });

const workspace = group(program, 'workspace', 'workspaces (accounts): members, legal identity, logo, document settings');
workspace
  .command('create')
  .description('create a workspace owned by a user, with a live subscription')
  .requiredOption('--owner <email>', 'e-mail address of the owning user')
  .option('--name <name>', 'legal entity name; omit for a personal workspace', '')
  .action(async (o) => print({ id: (await admin().createWorkspace({ owner_email: o.owner, name: o.name })).account_id }));
workspace
  .command('add-member')
  .description('add a user to a workspace')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--email <email>', 'e-mail address of the user')
  .action(async (o) => print(await admin().addMember({ account_id: parsePositiveId(o.workspace, '--workspace'), email: o.email })));
for (const [name, suspended] of [['suspend', true], ['unsuspend', false]] as const) {
  workspace
    .command(name)
    .description(suspended ? 'make a workspace read-only (mutations answer 403 workspace_suspended)' : 'lift a suspension')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (o) => print(await admin().setWorkspaceSuspended({ account_id: parsePositiveId(o.workspace, '--workspace'), suspended })));
}
workspace
  .command('set-legal-identity')
  .description("set the workspace's legal entity, the supplier printed on its documents")
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--data <json>', 'the legal_identity fields as JSON')
  .action(async (o) => {
    const { account } = await admin().setLegalIdentity({
      account_id: parsePositiveId(o.workspace, '--workspace'),
      legal_identity: parseLegalIdentity(o.data),
    });
    print({ id: account!.id, name: account!.name });
  });

workspace
  .command('set-logo')
  .description('set or remove the logo printed on documents')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--file <path>', 'a PNG, JPEG, GIF or WebP image of at most 1 MiB')
  .option('--remove', 'remove the logo')
  .action(async (o) => {
    if (!o.file === !o.remove) throw new Error('give either --file or --remove');
    const data = o.file ? readFileSync(o.file) : Buffer.alloc(0);
    const { account } = await admin().setLogo({ account_id: parsePositiveId(o.workspace, '--workspace'), data });
    print({ id: account!.id, logo_url: account!.logo_url ?? null });
  });

workspace
  .command('document-settings')
  .description('number format (YYYY, YY and a run of N), default currency and locale of documents')
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--number-format <format>', 'e.g. YYYYNNNNNN (the default) or FV-YY-NNNN')
  .option('--currency <code>', 'ISO 4217')
  .option('--locale <code>', 'e.g. cs, en')
  .action(async (o) => {
    const { settings } = await documentsAdmin().setDocumentSettings({
      account_id: parsePositiveId(o.workspace, '--workspace'),
      number_format: o.numberFormat,
      currency: o.currency,
      locale: o.locale,
    });
    print(settings);
  });

group(program, 'plan', "a workspace's subscription: active, features, caps, quotas")
  .command('set')
  .description("change a workspace's plan; options not given stay as they are")
  .requiredOption('--workspace <id>', 'workspace id')
  .option('--active <bool>', 'true or false')
  .option('--features <list>', 'comma-separated feature names (replaces the list)')
  .option('--cap <name=N...>', 'per-workspace cap, repeatable')
  .option('--quota <name=N...>', 'metered quota, repeatable')
  .action(async (o) => {
    if (o.active !== undefined && o.active !== 'true' && o.active !== 'false') throw new Error('--active must be true or false');
    const res = await admin().setPlan({
      account_id: parsePositiveId(o.workspace, '--workspace'),
      active: o.active === undefined ? undefined : o.active === 'true',
      set_features: o.features !== undefined,
      features: o.features ? String(o.features).split(',').map((f) => f.trim()).filter(Boolean) : [],
      caps: parseNumberMap(o.cap, '--cap'),
      quotas: parseNumberMap(o.quota, '--quota'),
    });
    print(res);
  });

const token = group(program, 'token', 'API credentials: personal access tokens and workspace tokens');
token
  .command('create')
  .description('create a token; prints it once (only its hash is kept)')
  .requiredOption('--kind <kind>', 'pat, live or test')
  .requiredOption('--scopes <list>', 'comma-separated scopes, or "all"')
  .option('--user <email>', 'owner of a personal access token')
  .option('--workspace <id>', 'workspace of a live or test token')
  .action(async (o) => {
    if (!['pat', 'live', 'test'].includes(o.kind)) throw new Error('--kind must be pat, live or test');
    if (o.kind === 'pat' && !o.user) throw new Error('--user is required for --kind pat');
    if (o.kind !== 'pat' && !o.workspace) throw new Error('--workspace is required for --kind live|test');
    const res = await admin().createApiKey({
      credential_type: o.kind === 'pat' ? CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN : CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN,
      user_email: o.user ?? '',
      account_id: o.workspace ? parsePositiveId(o.workspace, '--workspace') : 0,
      livemode: o.kind !== 'test',
      scopes: String(o.scopes).split(',').map((s) => s.trim()).filter(Boolean),
    });
    print({ token: res.token, id: res.key_id });
  });
token
  .command('revoke')
  .description('revoke a token; gateways stop accepting it at once')
  .requiredOption('--token <token>', 'the token to revoke')
  .action(async (o) => print({ revoked: (await admin().revokeApiKey({ token: o.token })).key_id }));

group(program, 'contact', "contacts of a workspace")
  .command('suspend')
  .description('suspend a contact (its updates answer 403)')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--contact <id>', 'contact id')
  .option('--test', 'the contact lives in the sandbox (test mode)')
  .action(async (o) => {
    const { contact } = await contactsClient().setContactSuspended({
      tenant: { ...live(parsePositiveId(o.workspace, '--workspace')), livemode: !o.test },
      id: parsePositiveId(o.contact, '--contact'),
      suspended: true,
    });
    print({ id: contact!.id, suspended: contact!.suspended });
  });

group(program, 'cash-register', 'cash registers (the API creates bank accounts only)')
  .command('create')
  .description('create a cash register in a workspace')
  .requiredOption('--workspace <id>', 'workspace id')
  .requiredOption('--name <name>', 'its name')
  .option('--currency <code>', 'ISO 4217 currency')
  .option('--test', 'create it in the sandbox (test mode)')
  .action(async (o) => {
    const { bank_account } = await bankingClient().createCashRegister({
      tenant: { ...live(parsePositiveId(o.workspace, '--workspace')), livemode: !o.test },
      name: o.name,
      currency: o.currency,
    });
    print({ id: bank_account!.id, name: bank_account!.name, account_type: 'cash' });
  });

/** Progress of backup and restore: stderr, so that stdout stays the one JSON object. */
const progressOn = (command: string) => (line: string) => process.stderr.write(`invoicing ${command}: ${line}\n`);

// backup and restore load their modules when run: they need better-sqlite3, which only the embedded
// install has (the service images run this CLI too, for users, workspaces and tokens).
program
  .command('backup')
  .description('copy an embedded DATA_DIR consistently while the system runs (SQLite online backup, then files)')
  .requiredOption('--data-dir <dir>', "the embedded system's DATA_DIR")
  .requiredOption('--to <path>', 'a new (or empty) directory for the backup')
  .option('--pages-per-step <n>', 'database pages copied per step (progress is reported per step)', '1000')
  .action(async (o) => {
    const [{ takeBackup }, { holdsFromEnv }] = await Promise.all([import('./backup/take'), import('./backup/holds')]);
    print(
      await takeBackup({
        dataDir: o.dataDir,
        to: o.to,
        pagesPerStep: parsePositiveId(o.pagesPerStep, '--pages-per-step'),
        appVersion: version(),
        progress: progressOn('backup'),
        hold: holdsFromEnv(),
      }),
    );
  });

program
  .command('restore')
  .description('restore a backup into a DATA_DIR on which no system runs; verifies the whole backup first')
  .requiredOption('--from <path>', 'a directory written by invoicing backup')
  .requiredOption('--data-dir <dir>', 'the DATA_DIR to restore into (empty, or give --force)')
  .option('--force', 'replace what the DATA_DIR holds')
  .action(async (o) => {
    const { restoreBackup } = await import('./backup/restore');
    print(await restoreBackup({ from: o.from, dataDir: o.dataDir, force: Boolean(o.force), progress: progressOn('restore') }));
  });

program
  .usage('[options] <command>')
  .argument('[command]')
  .allowExcessArguments()
  .action((given: string | undefined) => {
    if (program.opts().version) return print({ version: version() });
    const known = program.commands.map((c) => c.name()).join(', ');
    if (given) throw new UsageError('unknown_command', `unknown command '${given}' (one of: ${known})`);
    throw new UsageError('missing_command', `a command is needed (one of: ${known}); see invoicing --help`);
  });

function version(): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

const snakeCase = (name: string) => name.replace(/^commander\./, '').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** No answer at all (nothing listening, no route, no handshake), as opposed to a service that answered. */
const unreachable = (err: RemoteCallError) =>
  err.status === status.DEADLINE_EXCEEDED || (err.status === status.UNAVAILABLE && /No connection established|ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|handshake|Name resolution/.test(err.message));

/** grpc-js's long "No connection established. Last error: …" reduced to its cause. */
function transportReason(err: RemoteCallError): string {
  if (err.status === status.DEADLINE_EXCEEDED) return 'no answer in time';
  if (/Name resolution failed/.test(err.message)) return 'its host name does not resolve';
  return /\b(?:connect |getaddrinfo )?E[A-Z]{4,}\b(?: [^\s,;]+)?/.exec(err.message)?.[0].replace(/\.$/, '') ?? 'no connection';
}

/** Any failure as one line: the code to branch on (JSON) or the message to read. */
function describeFailure(err: unknown): { code: string; message: string; exitCode: number } {
  if (err instanceof CommanderError) return { code: snakeCase(err.code), message: err.message.replace(/^error: /, ''), exitCode: 2 };
  if (err instanceof UsageError) return { code: err.code, message: err.message, exitCode: 2 };
  if (err instanceof SetupError || err instanceof BackupRefused) return { code: err.code, message: err.message, exitCode: 1 };
  if (err instanceof RemoteCallError && called && unreachable(err)) {
    const { peer, address, source } = called;
    return { code: 'unreachable', message: `cannot reach ${PEERS[peer].what} at ${address} (from ${source}): ${transportReason(err)}`, exitCode: 1 };
  }
  if (err instanceof RemoteCallError) return { code: err.detail.code, message: `${err.detail.code}: ${err.message}`, exitCode: 1 };
  return { code: 'failed', message: err instanceof Error ? err.message : String(err), exitCode: 1 };
}

export async function run(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    const plainVersion = program.opts().version && !json;
    process.stdout.write((plainVersion ? (output as { version: string }).version : JSON.stringify(output)) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof CommanderError && (err.code === 'commander.helpDisplayed' || err.code === 'commander.version')) return 0;
    const failure = describeFailure(err);
    const line = json ? JSON.stringify({ error: { code: failure.code, message: failure.message } }) : `invoicing: ${failure.message.replace(/\s*\n\s*/g, ' ')}`;
    process.stderr.write(line + '\n');
    return failure.exitCode;
  }
}

if (require.main === module) {
  void run(process.argv.slice(2)).then((code) => process.exit(code));
}
