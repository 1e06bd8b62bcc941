// Compiles once per run (the black-box suites start the compiled system as child processes), and serves
// the run's shared systems (shared-systems.ts): started on a file's first request, stopped by globalTeardown.
import { execSync } from 'node:child_process';
import path from 'node:path';
import { serveSharedSystems, SharedSystems } from './shared-systems';

export default async function globalSetup(): Promise<void> {
  if (process.env.SKIP_BUILD !== '1') execSync('npm run build --silent', { cwd: path.resolve(__dirname, '../..'), stdio: 'inherit' });
  // SHARED_SYSTEMS=0: every file starts its own, as before (to tell whether a failure comes from sharing).
  if (process.env.SHARED_SYSTEMS === '0') {
    delete process.env.SHARED_SYSTEMS_URL;
    return;
  }
  const shared = await serveSharedSystems();
  // Read by globalTeardown (jest runs both in its parent process); the workers inherit the environment.
  (globalThis as { sharedSystems?: SharedSystems }).sharedSystems = shared;
  process.env.SHARED_SYSTEMS_URL = shared.url;
}
