// Client-side load balancing (docs/architecture.md "Internal network"): one channel to two replicas of
// the contacts service (two processes on the same database) through an `ipv4:a:p1,a:p2` target —
// what a headless Service's `dns:///` target resolves to. Requests spread round-robin over both; when
// one is SIGKILLed under load, every read and every keyed create still succeeds (the ones in flight
// on the dead replica are retried on the other) and no keyed create is applied twice.
//
// Each replica sits behind a small TCP relay that counts the HTTP/2 HEADERS frames the client opens
// streams with: the number of requests that reached that replica, observed from outside.
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { connect } from '../../services/shared/grpc/typed';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { dist, Proc, startProcess } from '../support/system';

type Replica = Pick<Proc, 'child' | 'port'>;

interface CountingRelay {
  port: number;
  /** Requests (client-opened HTTP/2 streams) relayed so far. */
  requests: number;
  close(): void;
}

const engines = realEngineEnv();
const env = {
  ...engines,
  MONGO_URL: isolatedMongoUrl(engines.MONGO_URL, `inv_lb_${randomBytes(6).toString('hex')}`),
  SERVICE: 'contacts',
  GRPC_PORT: '0',
  // Any free admin port: the default (50052) may be held by another system of the run.
  ADMIN_GRPC_PORT: '0',
  JWT_SECRET: randomBytes(32).toString('base64url'),
  CURSOR_SECRET: randomBytes(32).toString('base64url'),
  URL_SECRET: randomBytes(32).toString('base64url'),
};

const startReplica = (): Promise<Replica> => startProcess(dist('deploy/distributed/main.js'), env, 'contacts replica');

const PREFACE_BYTES = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
const HEADERS_FRAME = 0x1;

/** Relays a port to a replica, counting the client's HEADERS frames; stops listening when the replica dies. */
function countingRelay(replica: Replica): Promise<CountingRelay> {
  const sockets = new Set<net.Socket>();
  const relay: CountingRelay = { port: 0, requests: 0, close: () => undefined };
  const server = net.createServer((client) => {
    const upstream = net.connect(replica.port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let skip = PREFACE_BYTES;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (skip > 0) {
          const n = Math.min(skip, pending.length);
          pending = pending.subarray(n);
          skip -= n;
          if (skip > 0) return;
        }
        if (pending.length < 9) return;
        const length = pending.readUIntBE(0, 3);
        if (pending[3] === HEADERS_FRAME) relay.requests += 1;
        skip = 9 + length;
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  relay.close = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  // A dead process refuses connections: so does its relay.
  replica.child.once('exit', () => relay.close());
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      relay.port = (server.address() as net.AddressInfo).port;
      resolve(relay);
    }),
  );
}

let replicas: Replica[] = [];
let relays: CountingRelay[] = [];

beforeAll(async () => {
  replicas = [await startReplica(), await startReplica()];
  relays = await Promise.all(replicas.map(countingRelay));
}, 300_000);

afterAll(() => {
  for (const relay of relays) relay.close();
  for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
});

const tenant = { account_id: 424242, livemode: false };
const target = () => `ipv4:${relays.map((r) => `127.0.0.1:${r.port}`).join(',')}`;

describe('a channel to two replicas (round_robin)', () => {
  it('spreads requests over both', async () => {
    const client = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', target(), null);
    try {
      const before = relays.map((r) => r.requests);
      for (let i = 0; i < 40; i++) await client.listContacts({ tenant, query: '' });
      const served = relays.map((r, i) => r.requests - before[i]);
      expect(served[0] + served[1]).toBe(40);
      expect(Math.min(...served)).toBeGreaterThanOrEqual(15);
    } finally {
      client.close();
    }
  });

  it('survives a replica SIGKILLed under load: reads and keyed creates all succeed, each create applied once', async () => {
    const client = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', target(), null);
    const TOTAL = 120;
    const KILL_AFTER = 40;
    const keys: string[] = [];
    const failures: string[] = [];
    let started = 0;
    let completed = 0;
    let killed: Promise<void> | undefined;
    let servedByVictimAtDeath = 0;
    const kill = () => {
      const victim = replicas[0];
      servedByVictimAtDeath = relays[0].requests;
      killed = new Promise((resolve) => victim.child.once('exit', () => resolve()));
      victim.child.kill('SIGKILL');
    };
    const worker = async () => {
      while (started < TOTAL) {
        const n = started++;
        try {
          if (n % 2 === 0) {
            await client.listContacts({ tenant, query: '' });
          } else {
            const key = randomUUID().replace(/-/g, '');
            keys.push(key);
            const create = () =>
              client.createContact({ tenant, name: `Replica ${n}`, invoice_account_id: 0, invoice_account: { name: `Replica ${n} s.r.o.` } }, {
                idempotency: { key, fingerprint: key },
              });
            // As a client must (spec: idempotency_in_progress means retry later): a create whose first attempt
            // died with the replica after claiming its key is answered in_progress until the dead writer's
            // claim lapses (CLAIM_GRACE_MS, 30 s); retried with the same key it is then applied once.
            for (let attempt = 0; ; attempt++) {
              try {
                await create();
                break;
              } catch (err) {
                if (attempt >= 120 || (err as RemoteCallError).detail?.code !== 'idempotency_in_progress') throw err;
                await new Promise((resolve) => setTimeout(resolve, 500));
              }
            }
          }
        } catch (err) {
          failures.push(`${n}: ${(err as Error).message}`);
        }
        completed += 1;
        if (completed === KILL_AFTER) kill();
      }
    };
    try {
      await Promise.all(Array.from({ length: 6 }, worker));
      await killed;
      expect(failures).toEqual([]);
      expect(servedByVictimAtDeath).toBeGreaterThan(0);
      // Every create exactly once, whichever replica applied it and however often it was retried.
      const names: string[] = [];
      let page_token = '';
      do {
        const res = await client.listContacts({ tenant, query: 'Replica', page: { page_size: 100, page_token } });
        names.push(...res.contacts.map((c) => c.name));
        page_token = res.page_info?.next_page_token ?? '';
      } while (page_token);
      expect(names.length).toBe(keys.length);
      expect(new Set(names).size).toBe(keys.length);
    } finally {
      client.close();
    }
  }, 300_000);
});
