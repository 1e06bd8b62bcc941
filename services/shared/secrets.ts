// Signing secrets. Distributed mode takes them from the environment (a Kubernetes Secret);
// embedded mode generates them once (32 random bytes each) and keeps them in DATA_DIR so tokens and
// cursors survive restarts. Either way every secret must be at least 32 bytes (checkSecret): a short
// HMAC key is guessable offline from a single token.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSecret, readEnv } from './config';

export interface Secrets {
  jwtSecret: string;
  cursorSecret: string;
  /** Signs time-limited blob URLs (logos, files). */
  urlSecret: string;
}

export function loadSecrets(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Secrets {
  if (env.JWT_SECRET || !dataDir) {
    const { secret } = readEnv(env);
    return { jwtSecret: secret('JWT_SECRET'), cursorSecret: secret('CURSOR_SECRET'), urlSecret: secret('URL_SECRET') };
  }
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
