// Signing secrets. Distributed mode takes them from the environment (a Kubernetes Secret);
// embedded mode generates them once and keeps them in DATA_DIR so tokens and cursors survive restarts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readEnv } from './config';

export interface Secrets {
  jwtSecret: string;
  cursorSecret: string;
  /** Signs time-limited blob URLs (logos, files). */
  urlSecret: string;
}

export function loadSecrets(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env): Secrets {
  if (env.JWT_SECRET || !dataDir) {
    const { str } = readEnv(env);
    return { jwtSecret: str('JWT_SECRET'), cursorSecret: str('CURSOR_SECRET'), urlSecret: str('URL_SECRET') };
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
  return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
}
