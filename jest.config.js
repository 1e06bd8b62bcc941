// Projects: unit (pure domain), contract (each port against every adapter), and the black-box API
// suite twice — against the embedded mode and against the distributed mode on real engines.
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
  // ESM-only dependencies (Node 20 require()s them natively; jest's module system needs CommonJS).
  '/node_modules/(bysquare|lzma1|file-type|strtok3|token-types|@tokenizer/inflate|uint8array-extras|@borewit/text-codec)/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
};
const common = {
  transform,
  transformIgnorePatterns: ['/node_modules/(?!(bysquare|lzma1|file-type|strtok3|token-types|@tokenizer/inflate|uint8array-extras|@borewit/text-codec)/)'],
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  // Hooks share it: a distributed or cluster system (up to a dozen processes, atomicity probes, Kafka groups)
  // can take minutes to start on a busy 2-core CI machine. Only a failing test ever waits this long.
  testTimeout: 300_000,
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'contract-embedded', testMatch: ['<rootDir>/test/contract/**/*.embedded.test.ts'] },
    { ...common, displayName: 'contract-real', testMatch: ['<rootDir>/test/contract/**/*.real.test.ts'] },
    // Integration tests that run once, in the mode they are about (first start, Kafka outages, replicas).
    { ...common, displayName: 'system', testMatch: ['<rootDir>/test/system/**/*.test.ts'] },
    {
      ...common,
      displayName: 'api-embedded',
      testMatch: ['<rootDir>/test/api/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/mode-embedded.ts'],
    },
    {
      ...common,
      displayName: 'api-distributed',
      testMatch: ['<rootDir>/test/api/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/mode-distributed.ts'],
    },
    {
      ...common,
      // The suite against cluster mode (docs/cluster.md: replicas behind round_robin and a proxy). A third
      // run of every file costs minutes on a small machine: `npm test` runs the files whose rules replicas
      // touch (document numbering and lifecycle, idempotency and limits across gateways); `npm run
      // test:cluster` (CLUSTER_ALL=1) runs them all.
      displayName: 'api-cluster',
      testMatch:
        process.env.CLUSTER_ALL === '1'
          ? ['<rootDir>/test/api/**/*.test.ts']
          : ['documents-lifecycle', 'documents-integrity', 'edge-idempotency', 'edge-rate-limits'].map((name) => `<rootDir>/test/api/${name}.test.ts`),
      setupFiles: ['<rootDir>/test/support/mode-cluster.ts'],
    },
  ],
};
