// The real-engine URLs of this test run (scripts/test-all.sh starts the engines once and exports them).
const ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT', 'MINIO_PORT', 'MINIO_ACCESS_KEY', 'MINIO_SECRET_KEY', 'MINIO_USE_SSL'];

/** The environment of this process without engine URLs: what an embedded-mode child must see. */
export function withoutEngines(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !ENGINE_VARS.includes(name)));
}

export function realEngineEnv(): Record<string, string> {
  const names = ENGINE_VARS;
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length) {
    throw new Error(`real engines are not configured (${missing.join(', ')} unset): run the suite with npm test, which starts them`);
  }
  return Object.fromEntries(names.map((n) => [n, process.env[n] as string]));
}

/** The same server, a database of its own: suites on real engines never see each other's data. */
export function isolatedMongoUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}
