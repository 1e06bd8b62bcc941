// Idempotency at the service (services/shared/idempotency.ts), over every store adapter: a record
// created under a key exists once per (tenant, key) however attempts interleave, and an action
// recorded under a key is answered, not repeated, when retried.
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../services/shared/errors';
import { appliedUnder, CREATION_KEY_INDEX, createdUnder, createOnce, creationUniqueKeys, IdempotencyToken, RECENT_ACTION_KEYS, recordedUnder } from '../../services/shared/idempotency';
import { ActionsUnderKeys, CreatedUnderKey } from '../../services/shared/idempotency';
import { Collection, DocumentStore, mutate, StoredDoc } from '../../services/shared/store/port';
import { Tenant } from '../../services/shared/tenant';

interface Thing extends StoredDoc, CreatedUnderKey, ActionsUnderKeys {
  account_id: number;
  livemode: boolean;
  label: string;
  applied: number;
}

const tenant: Tenant = { account_id: 41, livemode: true };
const token = (fingerprint = 'fp-1'): IdempotencyToken => ({ key: randomBytes(16).toString('base64url'), fingerprint });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err.code;
    throw err;
  }
  throw new Error('expected a DomainError');
}

/** Two parties arriving at the barrier both pass; neither passes before the other arrived. */
function barrier(parties: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return async () => {
    arrived += 1;
    if (arrived === parties) open();
    await opened;
  };
}

export function describeIdempotencyContract(adapter: string, open: () => Promise<DocumentStore>): void {
  describe(`idempotency at the service: ${adapter}`, () => {
    let store: DocumentStore;
    let things: Collection<Thing>;
    let inserts = 0;

    beforeAll(async () => {
      store = await open();
      things = store.collection<Thing>({ name: `things_${randomBytes(4).toString('hex')}`, uniqueKeys: creationUniqueKeys, indexes: [CREATION_KEY_INDEX] });
    });
    afterAll(() => store?.close());

    const insertThing = async (t: Tenant, under: IdempotencyToken | undefined, before?: () => Promise<void>) => {
      await before?.();
      inserts += 1;
      return things.insert({ id: await store.nextId('things'), ...t, label: 'x', applied: 0, ...createdUnder(under) });
    };
    const countUnder = (t: Tenant, under: IdempotencyToken) => things.count({ ...t, idempotency_key: under.key });

    describe('createOnce', () => {
      it('answers a retry with the record the first attempt created, without creating again', async () => {
        const under = token();
        const first = await createOnce(things, tenant, under, () => insertThing(tenant, under));
        const before = inserts;
        const retry = await createOnce(things, tenant, under, () => insertThing(tenant, under));
        expect(retry).toEqual(first);
        expect(inserts).toBe(before);
        expect(await countUnder(tenant, under)).toBe(1);
      });

      it('two attempts that both found nothing: the second insert fails on the unique key and answers the first', async () => {
        const under = token();
        const bothLookedUp = barrier(2);
        const [a, b] = await Promise.all([
          createOnce(things, tenant, under, () => insertThing(tenant, under, bothLookedUp)),
          createOnce(things, tenant, under, () => insertThing(tenant, under, bothLookedUp)),
        ]);
        expect(a.id).toBe(b.id);
        expect(await countUnder(tenant, under)).toBe(1);
      });

      it('the same key with another request (fingerprint) is 409 idempotency_key_conflict', async () => {
        const under = token('fp-a');
        await createOnce(things, tenant, under, () => insertThing(tenant, under));
        const other = { ...under, fingerprint: 'fp-b' };
        expect(await codeOf(createOnce(things, tenant, other, () => insertThing(tenant, other)))).toBe('idempotency_key_conflict');
      });

      it('keys are per tenant (and mode), and requests without a key always create', async () => {
        const under = token();
        const live = await createOnce(things, tenant, under, () => insertThing(tenant, under));
        const sandbox = { ...tenant, livemode: false };
        const test = await createOnce(things, sandbox, under, () => insertThing(sandbox, under));
        expect(test.id).not.toBe(live.id);
        const a = await createOnce(things, tenant, undefined, () => insertThing(tenant, undefined));
        const b = await createOnce(things, tenant, undefined, () => insertThing(tenant, undefined));
        expect(a.id).not.toBe(b.id);
      });

      it('the key outlives later writes of the record', async () => {
        const under = token();
        const first = await createOnce(things, tenant, under, () => insertThing(tenant, under));
        await mutate(things, first.id, (t) => ({ ...t, label: 'renamed' }));
        const retry = await createOnce(things, tenant, under, () => insertThing(tenant, under));
        expect(retry).toMatchObject({ id: first.id, label: 'renamed' });
      });
    });

    describe('actions: appliedUnder / recordedUnder in the CAS that applies them', () => {
      const act = (id: number, under: IdempotencyToken | undefined) =>
        mutate(things, id, (t) => (appliedUnder(t, under) ? null : recordedUnder({ ...t, applied: t.applied + 1 }, under)));

      it('a retry after success answers the record as it is, without applying the action again', async () => {
        const thing = await insertThing(tenant, undefined);
        const under = token();
        await act(thing.id, under);
        const retried = await act(thing.id, under);
        expect(retried!.applied).toBe(1);
        expect((await act(thing.id, token()))!.applied).toBe(2); // another key is another action
      });

      it('two attempts under one key racing on the same version apply the action once', async () => {
        const thing = await insertThing(tenant, undefined);
        const under = token();
        await Promise.all([act(thing.id, under), act(thing.id, under)]);
        expect((await things.get(thing.id))!.applied).toBe(1);
      });

      it('the same key with another request is 409 idempotency_key_conflict', async () => {
        const thing = await insertThing(tenant, undefined);
        const under = token('fp-a');
        await act(thing.id, under);
        expect(await codeOf(act(thing.id, { ...under, fingerprint: 'fp-b' }))).toBe('idempotency_key_conflict');
      });

      it(`remembers the ${RECENT_ACTION_KEYS} most recent keys`, async () => {
        const thing = await insertThing(tenant, undefined);
        const keys = Array.from({ length: RECENT_ACTION_KEYS + 1 }, () => token());
        for (const under of keys) await act(thing.id, under);
        const stored = (await things.get(thing.id))!;
        expect(stored.idempotency_keys!.map((k) => k.key)).toEqual(keys.slice(1).map((k) => k.key));
        expect(appliedUnder(stored, keys[0])).toBe(false);
        expect(appliedUnder(stored, keys[RECENT_ACTION_KEYS])).toBe(true);
      });
    });
  });
}
