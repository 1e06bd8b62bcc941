// Stops the run's shared systems (global-setup.ts): their processes must not outlive the run.
import type { SharedSystems } from './shared-systems';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { sharedSystems?: SharedSystems }).sharedSystems?.stop();
}
