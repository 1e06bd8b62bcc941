// Wires the documents service: store and peers behind its ports, the outbox relay onto the bus, and
// its handlers to gRPC.
import { randomUUID } from 'node:crypto';
import { DocumentSettingsServiceService, DocumentsAdminServiceService, DocumentsServiceService } from '../../gen/invoicing/documents/v1/documents';
import { readEnv } from '../shared/config';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { outboxRelayOptions } from '../shared/outbox/options';
import { OutboxRelay } from '../shared/outbox/relay';
import { CursorCodec } from '../shared/pagination';
import { documentsStore } from './adapters/documents-store';
import { GrpcDirectory } from './adapters/grpc-directory';
import { consumeMailOutcomes } from './adapters/mail-outcomes';
import { documentsOutbox } from './adapters/outbox-relay';
import { ADMISSION_DEFAULTS } from './domain/admission';
import { DocumentsContext, DocumentView } from './domain/context';
import { Documents } from './domain/documents';
import { Lifecycle } from './domain/lifecycle';
import { DEFAULT_MAIL_RECIPIENTS_PER_DAY } from './domain/mail-allowance';
import { documentSettingsHandlers, documentsAdminHandlers, documentsHandlers } from './grpc/handlers';

export const documentsModule: ServiceModule = {
  name: 'documents',
  needs: { secrets: ['cursorSecret'], blobs: false, peers: ['identity', 'contacts'] },
  async create({ adapters, secrets, log, peers }) {
    const store = documentsStore(adapters.store);
    // The relay maps each event's document snapshot as GetDocument does (ctx is set before the relay starts).
    const relay: OutboxRelay = new OutboxRelay([documentsOutbox(store.documents, (doc): Promise<DocumentView> => ctx.view(doc))], adapters.bus, log, outboxRelayOptions());
    const directory = new GrpcDirectory({ identity: peers.identity, contacts: peers.contacts });
    const ctx = new DocumentsContext({
      store,
      directory,
      clock: { now: () => new Date() },
      ids: { eventId: () => randomUUID() },
      signal: relay,
      mailRecipientsPerDayDefault: readEnv().int('MAIL_RECIPIENTS_PER_DAY_DEFAULT', DEFAULT_MAIL_RECIPIENTS_PER_DAY),
      // Issuing at volume (docs/documents.md "Issuing at volume"): drafts numbered per batch, and how
      // many may wait per sequence (or per invoice, for credit reservations) before 503 issuing_overloaded.
      hooks: { maxBatch: Math.max(1, readEnv().int('ISSUE_BATCH_MAX', 100)), maxWaiting: Math.max(1, readEnv().int('ISSUE_QUEUE_MAX', 500)) },
      // Which issues start at all: refused at once (503) unless those admitted ahead leave them time (admission.ts).
      admission: {
        maxInFlight: Math.max(1, readEnv().int('ISSUE_ADMIT_MAX', ADMISSION_DEFAULTS.maxInFlight)),
        initialInFlight: Math.max(1, readEnv().int('ISSUE_ADMIT_INITIAL', ADMISSION_DEFAULTS.initialInFlight)),
        marginMs: Math.max(0, readEnv().int('ISSUE_ADMIT_MARGIN_MS', ADMISSION_DEFAULTS.marginMs)),
      },
    });
    const cursors = new CursorCodec(secrets.cursorSecret);
    relay.start();
    const mailOutcomes = await consumeMailOutcomes(adapters.bus, store.documents, ctx.events, relay);
    return {
      bindings: [
        restrict(
          implement('invoicing.documents.v1.DocumentsService', DocumentsServiceService, documentsHandlers(new Documents(ctx), new Lifecycle(ctx), cursors), log),
          { callers: ['gateway', 'rendering'] },
        ),
        // The workspace's effective settings: expenses defaults an expense's currency to them.
        restrict(implement('invoicing.documents.v1.DocumentSettingsService', DocumentSettingsServiceService, documentSettingsHandlers(ctx.settings, directory), log), {
          callers: ['expenses'],
        }),
        // Document settings: the admin CLI only, on the admin port.
        restrict(implement('invoicing.documents.v1.DocumentsAdminService', DocumentsAdminServiceService, documentsAdminHandlers(ctx.settings), log), {
          callers: ['admin'],
          admin: true,
        }),
      ],
      stop: async () => {
        await mailOutcomes.close();
        await relay.stop();
        directory.close();
      },
    };
  },
};
