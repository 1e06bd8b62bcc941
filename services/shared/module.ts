// What a service is to the bootstraps: a name and a function from its dependencies to gRPC bindings.
// The distributed bootstrap (runService) runs one module per process; the embedded launcher runs all.
import { Adapters } from './adapters';
import { Logger } from './logger';
import { SecretName, Secrets } from './secrets';
import { ServiceBinding } from './grpc/typed';

export interface Peers {
  identity?: string;
  contacts?: string;
  documents?: string;
  rendering?: string;
  expenses?: string;
}

export interface ServiceDeps {
  adapters: Adapters;
  secrets: Secrets;
  log: Logger;
  /** gRPC addresses of the services this one calls. */
  peers: Peers;
}

/**
 * What a service process is given beyond its store and bus. The distributed bootstrap reads only these, and
 * the chart gives each Deployment only these (docs/operations.md "Secrets per workload";
 * test/unit/helm-chart.test.ts compares the two).
 */
export interface ServiceNeeds {
  /** The signing secrets it signs or verifies with. */
  secrets: readonly SecretName[];
  /** Whether it stores or reads blobs (the MinIO keys). */
  blobs: boolean;
  /** The services it calls (their *_ADDR): a process can start once these have (test/support/system.ts starts in waves). */
  peers: readonly (keyof Peers)[];
}

export interface ServiceModule {
  name: string;
  needs: ServiceNeeds;
  create(deps: ServiceDeps): Promise<{ bindings: ServiceBinding[]; stop?: () => Promise<void> }>;
}
