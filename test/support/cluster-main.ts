// `bash scripts/cluster.sh up`: starts cluster mode (docs/cluster.md) on the engines of the environment
// and keeps it running until Ctrl-C — the same topology the api-cluster suite and the fault tests use.
import { clusterDefaults, startSystem } from './system';

async function main(): Promise<void> {
  const system = await startSystem(clusterDefaults({}));
  const services = Object.fromEntries(Object.keys(system.grpcAddresses().services).map((name) => [name, system.replicaPorts(name)]));
  process.stdout.write(
    JSON.stringify({ base_url: system.baseUrl, gateways: system.baseUrls, service_ports: services, cli_env: system.cliEnv }, null, 2) + '\n',
  );
  const stop = () => void system.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
