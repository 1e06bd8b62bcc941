// Wires the identity service: binds its ports to adapters and its handlers to gRPC.
import { randomBytes, randomUUID } from 'node:crypto';
import { IdentityAdminServiceService, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { outboxRelayOptions } from '../shared/outbox/options';
import { OutboxRelay } from '../shared/outbox/relay';
import { CursorCodec } from '../shared/pagination';
import { blobLogos } from './adapters/blob-logos';
import { identityStore } from './adapters/identity-store';
import { identityOutboxes } from './adapters/outbox';
import { JoseSessionSigner } from './adapters/jose-sessions';
import { ScryptPasswordHasher } from './adapters/scrypt-passwords';
import { Identity } from './domain/identity';
import { identityAdminHandlers, identityHandlers } from './grpc/handlers';

export const identityModule: ServiceModule = {
  name: 'identity',
  // Signs sessions (JWT), paginates, stores logos.
  needs: { secrets: ['jwtSecret', 'cursorSecret'], blobs: true, peers: [] },
  async create({ adapters, secrets, log }) {
    const store = identityStore(adapters.store);
    // Revocations and workspace changes travel in the outbox of the record they change (same write).
    const relay = new OutboxRelay(identityOutboxes(store), adapters.bus, log, outboxRelayOptions());
    const identity = new Identity(
      store,
      new ScryptPasswordHasher(),
      new JoseSessionSigner(secrets.jwtSecret),
      { bytes: (n) => randomBytes(n) },
      { newId: () => randomUUID(), written: () => relay.notify() },
      blobLogos(adapters.blobs),
    );
    const cursors = new CursorCodec(secrets.cursorSecret);
    relay.start();
    return {
      bindings: [
        restrict(implement('invoicing.identity.v1.IdentityService', IdentityServiceService, identityHandlers(identity, cursors), log), {
          callers: ['gateway', 'documents', 'rendering', 'expenses'],
        }),
        // Users, workspaces, plans and keys: the admin CLI only, on the admin port.
        restrict(implement('invoicing.identity.v1.IdentityAdminService', IdentityAdminServiceService, identityAdminHandlers(identity), log), {
          callers: ['admin'],
          admin: true,
        }),
      ],
      stop: () => relay.stop(),
    };
  },
};
