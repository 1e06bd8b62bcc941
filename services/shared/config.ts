// The one config loader: every process reads its settings here, from the environment, and fails fast.
export type RunMode = 'embedded' | 'distributed';

export class ConfigError extends Error {}

export function readEnv(env: NodeJS.ProcessEnv = process.env) {
  const str = (name: string, fallback?: string): string => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`missing required environment variable ${name}`);
  };
  const optional = (name: string): string | undefined => (env[name] ? env[name] : undefined);
  const int = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
    return Number(raw);
  };
  /** A signing secret: required, at least MIN_SECRET_BYTES bytes (UTF-8), so HMACs cannot be brute-forced. */
  const secret = (name: string): string => checkSecret(name, str(name));
  return { str, optional, int, secret };
}

/** HS256 and the HMACs of cursors and URLs need a key of at least the hash's 256 bits. */
export const MIN_SECRET_BYTES = 32;

export function checkSecret(name: string, value: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `${name} must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes}); generate one with: openssl rand -base64 32`,
    );
  }
  return value;
}

export interface EngineUrls {
  mongoUrl?: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  minio?: { endPoint: string; port: number; accessKey: string; secretKey: string; useSSL: boolean; bucket: string };
}

export function readEngineUrls(env: NodeJS.ProcessEnv = process.env): EngineUrls {
  const { optional, int } = readEnv(env);
  const minioEndpoint = optional('MINIO_ENDPOINT');
  return {
    mongoUrl: optional('MONGO_URL'),
    redisUrl: optional('REDIS_URL'),
    kafkaBrokers: optional('KAFKA_BROKERS')?.split(',').map((b) => b.trim()).filter(Boolean),
    minio: minioEndpoint
      ? {
          endPoint: minioEndpoint,
          port: int('MINIO_PORT', 9000),
          accessKey: readEnv(env).str('MINIO_ACCESS_KEY'),
          secretKey: readEnv(env).str('MINIO_SECRET_KEY'),
          useSSL: env.MINIO_USE_SSL === 'true',
          bucket: optional('MINIO_BUCKET') ?? 'invoicing',
        }
      : undefined,
  };
}
