// Wires the identity service: binds its ports to adapters and its handlers to gRPC.
import { randomBytes } from 'node:crypto';
import { IdentityAdminServiceService, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { implement } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { CursorCodec } from '../shared/pagination';
import { blobLogos } from './adapters/blob-logos';
import { busIdentityEvents } from './adapters/bus-events';
import { identityStore } from './adapters/identity-store';
import { JoseSessionSigner } from './adapters/jose-sessions';
import { ScryptPasswordHasher } from './adapters/scrypt-passwords';
import { Identity } from './domain/identity';
import { identityAdminHandlers, identityHandlers } from './grpc/handlers';

export const identityModule: ServiceModule = {
  name: 'identity',
  async create({ adapters, secrets, log }) {
    const identity = new Identity(
      identityStore(adapters.store),
      new ScryptPasswordHasher(),
      new JoseSessionSigner(secrets.jwtSecret),
      { bytes: (n) => randomBytes(n) },
      busIdentityEvents(adapters.bus),
      blobLogos(adapters.blobs),
    );
    const cursors = new CursorCodec(secrets.cursorSecret);
    return {
      bindings: [
        implement('invoicing.identity.v1.IdentityService', IdentityServiceService, identityHandlers(identity, cursors), log),
        implement('invoicing.identity.v1.IdentityAdminService', IdentityAdminServiceService, identityAdminHandlers(identity), log),
      ],
    };
  },
};
