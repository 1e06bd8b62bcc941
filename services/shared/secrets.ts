// Signing secrets. Distributed mode takes them from the environment (a Kubernetes Secret);
// embedded mode generates them once (32 random bytes each) and keeps them in DATA_DIR so tokens and
// cursors survive restarts. Either way every secret must be at least 32 bytes (checkSecret): a short
// HMAC key is guessable offline from a single token.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSecret, ConfigError, readEnv } from './config';

export interface Secrets {
  jwtSecret: string;
  cursorSecret: string;
  /** Signs time-limited blob URLs (logos, files). */
  urlSecret: string;
}

export type SecretName = keyof Secrets;

/** The environment variable of each signing secret. */
export const SECRET_ENV: Record<SecretName, string> = { jwtSecret: 'JWT_SECRET', cursorSecret: 'CURSOR_SECRET', urlSecret: 'URL_SECRET' };

/**
 * A service process (distributed mode) reads only the secrets its module declares (`ServiceModule.needs`):
 * those are required and checked now; reading any other fails loudly, as it was never given to this process
 * (least privilege: the chart hands each workload only its own, docs/operations.md "Secrets per workload").
 */
export function secretsFromEnv(names: readonly SecretName[], env: NodeJS.ProcessEnv = process.env): Secrets {
  const { secret } = readEnv(env);
  const secrets = {} as Secrets;
  for (const name of Object.keys(SECRET_ENV) as SecretName[]) {
    if (names.includes(name)) {
      Object.defineProperty(secrets, name, { value: secret(SECRET_ENV[name]), enumerable: true });
    } else {
      Object.defineProperty(secrets, name, {
        get: () => {
          throw new ConfigError(`${SECRET_ENV[name]} is not given to this process: add ${name} to its module's needs.secrets (and to the chart's invoicing.needs)`);
        },
      });
    }
  }
  return secrets;
}

export function loadSecrets(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Secrets {
  if (env.JWT_SECRET || !dataDir) return secretsFromEnv(Object.keys(SECRET_ENV) as SecretName[], env);
  const file = path.join(dataDir, 'secrets.json');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const fresh: Secrets = {
      jwtSecret: randomBytes(32).toString('base64url'),
      cursorSecret: randomBytes(32).toString('base64url'),
      urlSecret: randomBytes(32).toString('base64url'),
    };
    writeFileSync(file, JSON.stringify(fresh, null, 2), { mode: 0o600 });
  }
  const kept = JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  return {
    jwtSecret: checkSecret(`jwtSecret of ${file}`, kept.jwtSecret ?? ''),
    cursorSecret: checkSecret(`cursorSecret of ${file}`, kept.cursorSecret ?? ''),
    urlSecret: checkSecret(`urlSecret of ${file}`, kept.urlSecret ?? ''),
  };
}
