// `invoicing` admin CLI: what the (absent) app does — users, workspaces, plans, keys. Finds the running
// system like `npm start` does: DATA_DIR/runtime.json in embedded mode; in distributed mode the admin
// ports IDENTITY_ADMIN_ADDR and DOCUMENTS_ADMIN_ADDR, and CONTACTS_ADDR. Under mTLS it presents the
// certificate in GRPC_TLS_DIR (identity `admin`). Prints one JSON object on stdout; exits non-zero with
// a message on failure.
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
import { parseLegalIdentity, parseNumberMap, parsePositiveId } from './parse';

interface Addresses {
  identityAdmin: string;
  documentsAdmin: string;
  contacts: string;
}

function addresses(): Addresses {
  if (process.env.IDENTITY_ADMIN_ADDR) {
    return { identityAdmin: process.env.IDENTITY_ADMIN_ADDR, documentsAdmin: process.env.DOCUMENTS_ADMIN_ADDR ?? '', contacts: process.env.CONTACTS_ADDR ?? '' };
  }
  // The embedded system listens on loopback without TLS, whatever GRPC_TLS_DIR this shell has.
  usePlaintextMesh();
  const dataDir = path.resolve(process.env.DATA_DIR || '.data');
  const runtime = path.join(dataDir, 'runtime.json');
  if (!existsSync(runtime)) {
    throw new Error(`no running system found: ${runtime} is missing (start it with npm start, or set IDENTITY_ADMIN_ADDR)`);
  }
  const { services, admin, pid } = JSON.parse(readFileSync(runtime, 'utf8')) as {
    services: Record<string, string>;
    admin: Record<string, string>;
    pid: number;
  };
  try {
    process.kill(pid, 0);
  } catch {
    throw new Error(`no running system found: the process recorded in ${runtime} (pid ${pid}) is not running; start it with npm start`);
  }
  return { identityAdmin: admin.identity, documentsAdmin: admin.documents ?? '', contacts: services.contacts ?? '' };
}

const admin = () => connectAdmin(addresses().identityAdmin);
const contactsClient = () => connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', addresses().contacts);
const bankingClient = () => connect(BankingServiceService, 'invoicing.contacts.v1.BankingService', addresses().contacts);
const documentsAdmin = () => connect(DocumentsAdminServiceService, 'invoicing.documents.v1.DocumentsAdminService', addresses().documentsAdmin);
const live = (accountId: number) => ({ account_id: accountId, livemode: true });

let output: unknown;
const print = (value: unknown) => {
  output = value;
};

const program = new Command('invoicing').description('Administer a running invoicing system').exitOverride();

const user = program.command('user');
user
  .command('create')
  .requiredOption('--email <email>')
  .requiredOption('--password <password>')
  .option('--name <name>', 'display name', '')
  .action(async (o) => {
    const { user: created } = await admin().createUser({ email: o.email, password: o.password, name: o.name });
    print({ id: created!.id, email: created!.email });
  });

const workspace = program.command('workspace');
workspace
  .command('create')
  .requiredOption('--owner <email>')
  .option('--name <name>', 'legal entity name; omit for a personal workspace', '')
  .action(async (o) => print({ id: (await admin().createWorkspace({ owner_email: o.owner, name: o.name })).account_id }));
workspace
  .command('add-member')
  .requiredOption('--workspace <id>')
  .requiredOption('--email <email>')
  .action(async (o) => print(await admin().addMember({ account_id: parsePositiveId(o.workspace, '--workspace'), email: o.email })));
for (const [name, suspended] of [['suspend', true], ['unsuspend', false]] as const) {
  workspace
    .command(name)
    .requiredOption('--workspace <id>')
    .action(async (o) => print(await admin().setWorkspaceSuspended({ account_id: parsePositiveId(o.workspace, '--workspace'), suspended })));
}
workspace
  .command('set-legal-identity')
  .requiredOption('--workspace <id>')
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
  .requiredOption('--workspace <id>')
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
  .requiredOption('--workspace <id>')
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

program
  .command('plan')
  .command('set')
  .requiredOption('--workspace <id>')
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

const token = program.command('token');
token
  .command('create')
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
  .requiredOption('--token <token>')
  .action(async (o) => print({ revoked: (await admin().revokeApiKey({ token: o.token })).key_id }));

program
  .command('contact')
  .command('suspend')
  .requiredOption('--workspace <id>')
  .requiredOption('--contact <id>')
  .option('--test', 'the contact lives in the sandbox (test mode)')
  .action(async (o) => {
    const { contact } = await contactsClient().setContactSuspended({
      tenant: { ...live(parsePositiveId(o.workspace, '--workspace')), livemode: !o.test },
      id: parsePositiveId(o.contact, '--contact'),
      suspended: true,
    });
    print({ id: contact!.id, suspended: contact!.suspended });
  });

program
  .command('cash-register')
  .command('create')
  .requiredOption('--workspace <id>')
  .requiredOption('--name <name>')
  .option('--currency <code>')
  .option('--test', 'create it in the sandbox (test mode)')
  .action(async (o) => {
    const { bank_account } = await bankingClient().createCashRegister({
      tenant: { ...live(parsePositiveId(o.workspace, '--workspace')), livemode: !o.test },
      name: o.name,
      currency: o.currency,
    });
    print({ id: bank_account!.id, name: bank_account!.name, account_type: 'cash' });
  });

export async function run(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv, { from: 'user' });
    process.stdout.write(JSON.stringify(output) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode || 2;
    const message = err instanceof RemoteCallError ? `${err.detail.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    process.stderr.write(`invoicing: ${message}\n`);
    return 1;
  }
}

if (require.main === module) {
  void run(process.argv.slice(2)).then((code) => process.exit(code));
}
