// Import rules of the hexagonal layout, enforced by `npm run lint:deps`.
const SERVICES = '(identity|contacts|documents|rendering|expenses)';
const DRIVERS = '^node_modules/(@grpc|express|mongoose|mongodb|kafkajs|ioredis|better-sqlite3|minio|pino|jose|handlebars|playwright-core|nodemailer|mailparser)';

module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'Domain code imports no framework or driver, and no adapter or transport code.',
      severity: 'error',
      from: { path: `^services/${SERVICES}/domain/` },
      to: { path: [DRIVERS, `^services/${SERVICES}/(adapters|grpc)/`, '^gateway/', '^gen/', '^services/shared/(grpc|store/(sqlite|mongo)|bus/(memory|kafka)|adapters|bootstrap|logger)'] },
    },
    {
      name: 'ports-are-interfaces',
      comment: 'Ports describe what a domain needs; they never depend on an implementation.',
      severity: 'error',
      from: { path: `^services/${SERVICES}/ports/` },
      to: { path: [DRIVERS, `^services/${SERVICES}/(adapters|grpc|domain)/`] },
    },
    {
      name: 'services-are-separate',
      comment: 'A service never imports another service; it talks to it through generated clients.',
      severity: 'error',
      from: { path: `^services/${SERVICES}/` },
      to: { path: `^services/${SERVICES}/`, pathNot: '^services/$1/' },
    },
    {
      name: 'shared-kernel-knows-no-service',
      severity: 'error',
      from: { path: '^services/shared/' },
      to: { path: [`^services/${SERVICES}/`, '^gateway/', '^deploy/'] },
    },
    {
      name: 'gateway-uses-contracts-not-services',
      comment: 'The gateway reaches services over gRPC only.',
      severity: 'error',
      from: { path: '^gateway/' },
      to: { path: `^services/${SERVICES}/` },
    },
    {
      name: 'client-is-standalone',
      comment: 'The API client ships on its own: it knows the HTTP contract (its generated types), not the server.',
      severity: 'error',
      from: { path: '^client/' },
      to: { path: '^(services|gateway|deploy|gen|test)/' },
    },
    {
      name: 'server-knows-no-client',
      comment: 'The server never depends on its client library.',
      severity: 'error',
      from: { path: '^(services|gateway|deploy)/' },
      to: { path: '^client/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^(dist|gen/google)' },
  },
};
