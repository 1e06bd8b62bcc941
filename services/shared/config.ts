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
  return { str, optional, int };
}

export interface EngineUrls {
  mongoUrl?: string;
  redisUrl?: string;
  kafkaBrokers?: string[];
  /** Prefix of every Kafka topic and consumer group (KAFKA_TOPIC_PREFIX): deployments sharing a cluster stay apart. */
  kafkaTopicPrefix?: string;
  minio?: { endPoint: string; port: number; accessKey: string; secretKey: string; useSSL: boolean; bucket: string };
}

export function readEngineUrls(env: NodeJS.ProcessEnv = process.env): EngineUrls {
  const { optional, int } = readEnv(env);
  const minioEndpoint = optional('MINIO_ENDPOINT');
  return {
    mongoUrl: optional('MONGO_URL'),
    redisUrl: optional('REDIS_URL'),
    kafkaBrokers: optional('KAFKA_BROKERS')?.split(',').map((b) => b.trim()).filter(Boolean),
    kafkaTopicPrefix: optional('KAFKA_TOPIC_PREFIX'),
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
