// Credential formats and scopes (spec §5), shared by the identity service (which issues and verifies)
// and the gateway (which rejects malformed tokens before any lookup).
import { createHash, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'inv';
export type TokenKind = 'pat' | 'live' | 'test';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32; // ~190 bits
const CHECKSUM_LENGTH = 6;
const TOKEN_RE = new RegExp(`^${TOKEN_PREFIX}_(pat|live|test)_([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

function crc32(text: string): number {
  let crc = ~0;
  for (const byte of Buffer.from(text)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function base62(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function checksum(kind: TokenKind, random: string): string {
  return base62(crc32(`${TOKEN_PREFIX}_${kind}_${random}`), CHECKSUM_LENGTH);
}

/** Mints a token from random bytes (the caller supplies them so the function stays pure). */
export function mintToken(kind: TokenKind, randomBytes: Uint8Array): string {
  if (randomBytes.length < RANDOM_LENGTH) throw new Error('need at least 32 random bytes');
  const random = Array.from(randomBytes.slice(0, RANDOM_LENGTH), (b) => ALPHABET[b % 62]).join('');
  return `${TOKEN_PREFIX}_${kind}_${random}${checksum(kind, random)}`;
}

/** The kind of a well-formed API token with a valid checksum, else undefined. */
export function parseApiToken(token: string): TokenKind | undefined {
  const match = TOKEN_RE.exec(token);
  if (!match) return undefined;
  const kind = match[1] as TokenKind;
  return checksum(kind, match[2]) === match[3] ? kind : undefined;
}

const BEARER_RE = /^Bearer\s+(\S+)\s*$/i;

/** The credential of an `Authorization: Bearer <credential>` header, else undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization ? BEARER_RE.exec(authorization)?.[1] : undefined;
}

const JWT_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function looksLikeJwt(token: string): boolean {
  return token.length < 4096 && JWT_RE.test(token);
}

/** Tokens are high-entropy, so a plain SHA-256 is enough to store them (no KDF needed). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export const RESOURCES = [
  'invoices',
  'credit_notes',
  'proformas',
  'quotes',
  'expenses',
  'contacts',
  'bank_accounts',
  'accounts',
  // Issue #19: webhook endpoints (read/write/manage) and the events log (read only: events are written
  // by the changes themselves, never through the API).
  'webhooks',
  'events',
] as const;
export type Resource = (typeof RESOURCES)[number];
export type Access = 'read' | 'write' | 'manage';
const LEVEL: Record<Access, number> = { read: 1, write: 2, manage: 3 };

/** The levels a resource has; every one not listed has all three. */
const LEVELS_OF: Partial<Record<Resource, readonly Access[]>> = { events: ['read'] };

export const ALL_SCOPES: string[] = RESOURCES.flatMap((r) => (LEVELS_OF[r] ?? (['read', 'write', 'manage'] as const)).map((a) => `${a}:${r}`));

export function isKnownScope(scope: string): boolean {
  return ALL_SCOPES.includes(scope);
}

/** The highest level granted per resource, computed once per scope list (principals are cached). */
const grantedLevels = new WeakMap<readonly string[], Map<string, number>>();

function levelsOf(granted: readonly string[]): Map<string, number> {
  let levels = grantedLevels.get(granted);
  if (!levels) {
    levels = new Map();
    for (const scope of granted) {
      const [a, r] = scope.split(':');
      if (a in LEVEL) levels.set(r, Math.max(levels.get(r) ?? 0, LEVEL[a as Access]));
    }
    grantedLevels.set(granted, levels);
  }
  return levels;
}

/** `manage` implies `write` implies `read`, per resource. */
export function hasScope(granted: readonly string[], access: Access, resource: Resource): boolean {
  return (levelsOf(granted).get(resource) ?? 0) >= LEVEL[access];
}
