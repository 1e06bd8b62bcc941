// The real-engine URLs of this test run (scripts/test-all.sh starts the engines once and exports them).
import { ServiceNeeds } from '../../services/shared/module';
import { SECRET_ENV } from '../../services/shared/secrets';

const ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT', 'MINIO_PORT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'MINIO_USE_SSL'];
/** Mailpit (SMTP_URL, and its HTTP API for the tests): required only by the suites that read delivered mail. */
const MAIL_VARS = ['SMTP_URL', 'MAILPIT_API'];

/** The environment of this process without engine URLs: what an embedded-mode child must see. */
export function withoutEngines(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !ENGINE_VARS.includes(name) && !MAIL_VARS.includes(name)));
}

const SIGNING_VARS = Object.values(SECRET_ENV);

/**
 * `env` without the credentials the chart does not give `workload` (docs/operations.md "Secrets per workload",
 * invoicing.needs in helm/invoicing/templates/_helpers.tpl): a service keeps MongoDB, Kafka and its module's
 * `needs` (signing secrets, MinIO when it uses blobs), rendering SMTP too; the gateway (`needs` undefined)
 * Redis and Kafka alone.
 */
export function onlyCredentialsOf<E extends NodeJS.ProcessEnv>(workload: string, needs: ServiceNeeds | undefined, env: E): E {
  const minio = ENGINE_VARS.filter((n) => n.startsWith('MINIO_'));
  const kept = needs
    ? ['MONGO_URL', 'KAFKA_BROKERS', ...needs.secrets.map((n) => SECRET_ENV[n]), ...(needs.blobs ? minio : []), ...(workload === 'rendering' ? MAIL_VARS : [])]
    : ['REDIS_URL', 'KAFKA_BROKERS'];
  const credential = (name: string) => ENGINE_VARS.includes(name) || MAIL_VARS.includes(name) || SIGNING_VARS.includes(name);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !credential(name) || kept.includes(name))) as E;
}

export function realEngineEnv(): Record<string, string> {
  const names = ENGINE_VARS;
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length) {
    throw new Error(`real engines are not configured (${missing.join(', ')} unset): run the suite with npm test, which starts them`);
  }
  const mail = MAIL_VARS.filter((n) => process.env[n]);
  return Object.fromEntries([...names, ...mail].map((n) => [n, process.env[n] as string]));
}

/** Mailpit's HTTP API of this test run; distributed mail suites fail (never skip) without it. */
export function mailpitApi(): string {
  const api = process.env.MAILPIT_API;
  if (!api || !process.env.SMTP_URL) {
    throw new Error('Mailpit is not configured (SMTP_URL / MAILPIT_API unset): start the engines with scripts/engines.sh (it runs Mailpit) and source engines.env');
  }
  return api;
}

/** The same server, a database of its own: suites on real engines never see each other's data. */
export function isolatedMongoUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}
