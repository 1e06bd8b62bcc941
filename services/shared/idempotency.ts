// Idempotency at the service, in the service's own store. The gateway's record of an Idempotency-Key
// and the service's write commit separately: a crash (or a 5xx) between them used to make a retry
// execute again — a second invoice, a false 422 not_draft. So the gateway passes the key (scoped per
// credential) and the request fingerprint in gRPC metadata (grpc/idempotency.ts), and the service
// records them in the very single-document write that makes the change:
//
// - creates store the key on the created record, under a unique key per tenant: a retry finds the
//   record and answers it; a racing duplicate insert fails on the unique key and answers the first;
// - actions (issue, mark_paid, send, …) add the key to a short list of recent keys on the document in
//   the same compare-and-set that applies the action: a retry sees its key and answers the document
//   as it is now instead of refusing (not_draft) or repeating the action (a second e-mail).
//
// The same key with a different fingerprint is 409 idempotency_key_conflict, as at the edge.
// Framework-free: domain code uses it directly (it needs the store port and the error model only).
import { createHash } from 'node:crypto';
import { fail } from './errors';
import { Collection, StoredDoc, UniqueViolation } from './store/port';
import { Tenant, tenantKey } from './tenant';

/** A request's key as the gateway scopes it (sha256 of credential id and key) and its fingerprint. */
export interface IdempotencyToken {
  key: string;
  fingerprint: string;
}

/** Fields of a record created by a request that carried a key (absent otherwise). */
export interface CreatedUnderKey {
  idempotency_key?: string;
  idempotency_fingerprint?: string;
}

/** The keys of the most recent keyed actions applied to a record, oldest first. */
export interface ActionsUnderKeys {
  idempotency_keys?: IdempotencyToken[];
}

/** How many action keys a record remembers: retries come within minutes, not after 16 more actions. */
export const RECENT_ACTION_KEYS = 16;

/** The index that makes finding a record by its creation key a point read (add to the collection's indexes). */
export const CREATION_KEY_INDEX = ['account_id', 'livemode', 'idempotency_key'];

/** Looks for a concurrent winner's record, ~0.5 s in all, before answering idempotency_in_progress. */
const WINNER_LOOKS = 10;

type TenantRecord = StoredDoc & { account_id: number; livemode: boolean } & CreatedUnderKey;

const uniqueKeyOf = (tenant: Tenant, key: string) => `idem:${tenantKey(tenant)}:${key}`;

/** The unique key of a record created under a key (add to the collection's uniqueKeys); kept for the record's life. */
export function creationUniqueKeys(record: TenantRecord): string[] {
  return record.idempotency_key ? [uniqueKeyOf(record, record.idempotency_key)] : [];
}

/** What gRPC metadata carries as a key or fingerprint (grpc/idempotency.ts); anything else arrives unkeyed. */
export const TOKEN_CHARS = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The token of a write a change makes in another service (e.g. the contact an expense creates inline),
 * derived from what identifies the change (`base`: the request's key, an expense and its revision, a job),
 * so that repeating the change repeats the same keyed write. `<base>-<purpose>` when metadata can carry it,
 * else its sha256 (base64url). The fingerprint defaults to the key: a derived write has one meaning.
 */
export function derivedToken(base: string, purpose: string, fingerprint?: string): IdempotencyToken {
  const readable = `${base}-${purpose}`;
  const key = TOKEN_CHARS.test(readable) ? readable : createHash('sha256').update(readable).digest('base64url');
  const print = fingerprint && TOKEN_CHARS.test(fingerprint) ? fingerprint : key;
  return { key, fingerprint: print };
}

/** The fields to spread into a record created under `token`. */
export const createdUnder = (token: IdempotencyToken | undefined): CreatedUnderKey =>
  token ? { idempotency_key: token.key, idempotency_fingerprint: token.fingerprint } : {};

const keyConflict = () =>
  fail.conflict('idempotency_key_conflict', 'this Idempotency-Key was already used with a different request (method, path or body)');

async function createdBy<T extends TenantRecord>(collection: Collection<T>, tenant: Tenant, token: IdempotencyToken): Promise<T | null> {
  // Through the key's unique-key record (a point read on every engine), not a filter on idempotency_key.
  const found = await collection.findByUniqueKey(uniqueKeyOf(tenant, token.key));
  if (found && found.idempotency_fingerprint !== token.fingerprint) throw keyConflict();
  return found;
}

/**
 * Creates at most one record per (tenant, key): the record an earlier attempt created under `token`
 * when there is one, else `create()` — which must insert a record carrying createdUnder(token) into
 * `collection`. Without a token it simply creates.
 */
export async function createOnce<T extends TenantRecord>(
  collection: Collection<T>,
  tenant: Tenant,
  token: IdempotencyToken | undefined,
  create: () => Promise<T>,
): Promise<T> {
  if (!token) return create();
  const earlier = await createdBy(collection, tenant, token);
  if (earlier) return earlier;
  try {
    return await create();
  } catch (err) {
    if (!(err instanceof UniqueViolation) || err.key !== uniqueKeyOf(tenant, token.key)) throw err;
    // A concurrent attempt under the same key inserted first: answer its record. Where unique keys are
    // claimed before the record is written (the Mongo adapter), give the winner a moment to write it.
    for (let look = 0; look < WINNER_LOOKS; look++) {
      const winner = await createdBy(collection, tenant, token);
      if (winner) return winner;
      await new Promise((resolve) => setTimeout(resolve, 10 * (look + 1)));
    }
    // Claimed but still not written (or its writer died: the adapter reclaims the key later).
    throw fail.conflict('idempotency_in_progress', 'a request with this Idempotency-Key is still being processed; retry later');
  }
}

/**
 * Whether the action keyed by `token` was already applied to `record` (a retry: answer the record as
 * it is). 409 idempotency_key_conflict when the key was used for a different request on it.
 */
export function appliedUnder(record: ActionsUnderKeys, token: IdempotencyToken | undefined): boolean {
  const found = token ? record.idempotency_keys?.find((k) => k.key === token.key) : undefined;
  if (!found) return false;
  if (found.fingerprint !== token!.fingerprint) throw keyConflict();
  return true;
}

/** `record` with `token` added to its recent action keys: write it in the same CAS as the action. */
export function recordedUnder<T extends ActionsUnderKeys>(record: T, token: IdempotencyToken | undefined): T {
  if (!token) return record;
  const earlier = (record.idempotency_keys ?? []).filter((k) => k.key !== token.key);
  return { ...record, idempotency_keys: [...earlier, { key: token.key, fingerprint: token.fingerprint }].slice(-RECENT_ACTION_KEYS) };
}
