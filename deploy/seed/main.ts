// `npm run seed -- --contacts 1000000 --invoices 1000000 --expenses 200000 --workspaces 10000`:
// writes made-up but valid workspaces, contacts, invoices and expenses into an empty target, for the
// volume bench and for trying the system on a realistic history (docs/operations.md "Seeding").
//   embedded     (default without MONGO_URL) the SQLite store of --data-dir (default DATA_DIR or ./.data)
//   distributed  (default with MONGO_URL)    the database of MONGO_URL
// Progress on stderr; one JSON summary on stdout; exit 1 on a refused target or a failure, 2 on a usage error.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ScryptPasswordHasher } from '../../services/identity/adapters/scrypt-passwords';
import { bindAdapters } from '../../services/shared/adapters';
import { checkPlan, PlanError, SeedPlan } from './plan';
import { Progress } from './progress';
import { seed, TargetNotEmpty } from './seed';

const USAGE = `usage: npm run seed -- [--workspaces N] [--contacts N] [--invoices N] [--expenses N]
         [--largest-share 0.5] [--seed 1] [--batch 1000] [--mode embedded|distributed] [--data-dir DIR]`;

export function parseSeedArgs(argv: string[], env: NodeJS.ProcessEnv): { plan: SeedPlan; mode: 'embedded' | 'distributed'; dataDir: string; mongoUrl?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      workspaces: { type: 'string', default: '1' },
      contacts: { type: 'string', default: '0' },
      invoices: { type: 'string', default: '0' },
      expenses: { type: 'string', default: '0' },
      'largest-share': { type: 'string', default: '0.5' },
      seed: { type: 'string', default: '1' },
      batch: { type: 'string', default: '1000' },
      mode: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    strict: true,
  });
  const whole = (name: string, raw: string) => {
    if (!/^\d{1,16}$/.test(raw.replace(/_/g, ''))) throw new PlanError(`--${name} must be a whole number, got "${raw}"`);
    return Number(raw.replace(/_/g, ''));
  };
  const share = Number(values['largest-share']);
  const plan: SeedPlan = {
    workspaces: whole('workspaces', values.workspaces!),
    contacts: whole('contacts', values.contacts!),
    invoices: whole('invoices', values.invoices!),
    expenses: whole('expenses', values.expenses!),
    largestShare: Number.isFinite(share) ? share : NaN,
    seed: whole('seed', values.seed!),
    batch: whole('batch', values.batch!),
  };
  checkPlan(plan);
  const mode = values.mode ?? (env.MONGO_URL ? 'distributed' : 'embedded');
  if (mode !== 'embedded' && mode !== 'distributed') throw new PlanError('--mode is embedded or distributed');
  if (mode === 'distributed' && !env.MONGO_URL) throw new PlanError('--mode distributed needs MONGO_URL');
  return { plan, mode, dataDir: values['data-dir'] ?? env.DATA_DIR ?? './.data', mongoUrl: mode === 'distributed' ? env.MONGO_URL : undefined };
}

async function main(): Promise<number> {
  let args: ReturnType<typeof parseSeedArgs>;
  try {
    args = parseSeedArgs(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`seed: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { plan, mode, dataDir, mongoUrl } = args;
  const adapters = await bindAdapters({ dataDir, engines: { mongoUrl }, clientId: 'seed', blobs: false });
  try {
    // Seeded owners get a password nobody knows (one scrypt hash for all): they are reached with tokens
    // the admin CLI issues (`invoicing token create --kind live --workspace <id>`).
    const passwordHash = await new ScryptPasswordHasher().hash(randomBytes(24).toString('base64url'));
    const progress = new Progress(plan.workspaces + plan.contacts + plan.invoices + plan.expenses);
    const result = await seed(adapters.store, plan, { passwordHash, progress });
    const ids = result.accountIds;
    process.stdout.write(
      `${JSON.stringify({ mode, target: mode === 'embedded' ? dataDir : 'MONGO_URL', rows: result.rows, largest_workspace_id: ids[0], workspace_ids: { first: ids[0], last: ids[ids.length - 1] } })}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`seed: ${err instanceof TargetNotEmpty ? err.message : (err as Error).stack}\n`);
    return 1;
  } finally {
    await adapters.close();
  }
}

if (require.main === module) {
  main().then((code) => process.exit(code));
}
