// Signing secrets (JWT_SECRET, CURSOR_SECRET, URL_SECRET) are at least 32 bytes, from the environment
// or generated into DATA_DIR; session JWTs carry and require aud "invoicing-api".
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { JoseSessionSigner } from '../../services/identity/adapters/jose-sessions';
import { InvalidSession } from '../../services/identity/ports/security';
import { ConfigError } from '../../services/shared/config';
import { loadSecrets, secretsFromEnv } from '../../services/shared/secrets';
import { serviceModules } from '../../deploy/modules';

const strong = () => randomBytes(32).toString('base64url');
const env = (overrides: Record<string, string> = {}) => ({ JWT_SECRET: strong(), CURSOR_SECRET: strong(), URL_SECRET: strong(), ...overrides });

describe('signing secrets from the environment', () => {
  it.each(['JWT_SECRET', 'CURSOR_SECRET', 'URL_SECRET'])('refuses a %s shorter than 32 bytes with a clear ConfigError', (name) => {
    const load = () => loadSecrets(undefined, env({ [name]: 'x'.repeat(31) }));
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`${name} must be at least 32 bytes (got 31)`);
  });

  it('counts bytes, not characters', () => {
    expect(() => loadSecrets(undefined, env({ JWT_SECRET: 'é'.repeat(15) }))).toThrow('JWT_SECRET must be at least 32 bytes (got 30)');
    expect(loadSecrets(undefined, env({ JWT_SECRET: 'é'.repeat(16) })).jwtSecret).toBe('é'.repeat(16));
  });

  it('accepts 32 bytes and more', () => {
    const given = env({ URL_SECRET: 'y'.repeat(32) });
    expect(loadSecrets(undefined, given)).toEqual({ jwtSecret: given.JWT_SECRET, cursorSecret: given.CURSOR_SECRET, urlSecret: 'y'.repeat(32) });
  });

  it('still requires every one of them', () => {
    const { URL_SECRET: _, ...rest } = env();
    expect(() => loadSecrets(undefined, rest)).toThrow('missing required environment variable URL_SECRET');
  });
});

describe('signing secrets generated for embedded mode', () => {
  it('generates 32 random bytes per secret once, and keeps them', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
    const first = loadSecrets(dir, {});
    for (const value of Object.values(first)) expect(Buffer.from(value, 'base64url')).toHaveLength(32);
    expect(loadSecrets(dir, {})).toEqual(first);
  });

  it('refuses a kept secret that is too short (an edited secrets.json)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
    const kept = loadSecrets(dir, {});
    const file = path.join(dir, 'secrets.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), urlSecret: 'short' }));
    expect(() => loadSecrets(dir, {})).toThrow(/urlSecret of .*secrets\.json must be at least 32 bytes/);
    expect(kept.urlSecret).not.toBe('short');
  });
});

describe('session JWTs: aud', () => {
  const secret = strong();
  const key = new TextEncoder().encode(secret);
  const signer = new JoseSessionSigner(secret);
  const expiresAt = new Date(Date.now() + 3_600_000);
  const forge = (audience?: string) => {
    const jwt = new SignJWT({ sid: 3 }).setProtectedHeader({ alg: 'HS256' }).setSubject('2').setIssuer('invoicing')
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000));
    return (audience ? jwt.setAudience(audience) : jwt).sign(key);
  };

  it('signs aud "invoicing-api" and verifies its own tokens', async () => {
    const token = await signer.sign({ userId: 2, sessionId: 3, expiresAt });
    expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).aud).toBe('invoicing-api');
    await expect(signer.verify(token)).resolves.toMatchObject({ userId: 2, sessionId: 3 });
    await expect(signer.verify(await forge('invoicing-api'))).resolves.toMatchObject({ userId: 2, sessionId: 3 });
  });

  it('refuses a token without aud or for another audience', async () => {
    await expect(signer.verify(await forge())).rejects.toBeInstanceOf(InvalidSession);
    await expect(signer.verify(await forge('another-api'))).rejects.toBeInstanceOf(InvalidSession);
  });

  it('refuses to be built with a key shorter than 32 bytes', () => {
    expect(() => new JoseSessionSigner('x'.repeat(31))).toThrow('at least 32 bytes');
  });
});

describe('a service process reads only the secrets its module declares (least privilege)', () => {
  it('reads and checks the declared ones; reading another fails naming it, even when the environment has it', () => {
    const given = env();
    const secrets = secretsFromEnv(['cursorSecret'], given);
    expect(secrets.cursorSecret).toBe(given.CURSOR_SECRET);
    expect(() => secrets.jwtSecret).toThrow(ConfigError);
    expect(() => secrets.jwtSecret).toThrow('JWT_SECRET is not given to this process');
    expect(() => secrets.urlSecret).toThrow('URL_SECRET is not given to this process');
  });

  it('starts without the secrets it does not declare, and refuses a missing or short declared one', () => {
    expect(secretsFromEnv(['cursorSecret'], { CURSOR_SECRET: strong() }).cursorSecret).toHaveLength(43);
    expect(() => secretsFromEnv(['jwtSecret', 'cursorSecret'], { CURSOR_SECRET: strong() })).toThrow('missing required environment variable JWT_SECRET');
    expect(() => secretsFromEnv(['cursorSecret'], { CURSOR_SECRET: 'x'.repeat(31) })).toThrow('CURSOR_SECRET must be at least 32 bytes');
  });

  // The declaration is what the chart hands out (test/unit/helm-chart.test.ts): it must be what the code reads.
  it.each(serviceModules.map((m) => [m.name, m] as const))('%s declares exactly the secrets and the blob store its code reads', (name, module) => {
    const sources = tsFiles(path.join(__dirname, '../../services', name)).map((file) => readFileSync(file, 'utf8'));
    const read = new Set(sources.flatMap((src) => [...src.matchAll(/secrets\.(jwtSecret|cursorSecret|urlSecret)\b/g)].map((m) => m[1])));
    expect([...read].sort()).toEqual([...module.needs.secrets].sort());
    expect(sources.some((src) => /adapters\.blobs\b/.test(src))).toBe(module.needs.blobs);
  });
});

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}
