// What a service is to the bootstraps: a name and a function from its dependencies to gRPC bindings.
// The distributed bootstrap (runService) runs one module per process; the embedded launcher runs all.
import { Adapters } from './adapters';
import { Logger } from './logger';
import { Secrets } from './secrets';
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

export interface ServiceModule {
  name: string;
  create(deps: ServiceDeps): Promise<{ bindings: ServiceBinding[]; stop?: () => Promise<void> }>;
}
