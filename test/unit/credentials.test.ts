import { randomBytes } from 'node:crypto';
import { ALL_SCOPES, hasScope, hashToken, looksLikeJwt, mintToken, parseApiToken } from '../../services/shared/credentials';

describe('API token format (§5)', () => {
  it.each(['pat', 'live', 'test'] as const)('mints inv_%s_ tokens whose checksum verifies', (kind) => {
    const token = mintToken(kind, randomBytes(32));
    expect(token).toMatch(new RegExp(`^inv_${kind}_[0-9A-Za-z]{38}$`));
    expect(parseApiToken(token)).toBe(kind);
  });

  it('rejects a mistyped character, a swapped prefix and other shapes before any lookup', () => {
    const token = mintToken('live', randomBytes(32));
    const typo = token.slice(0, 12) + (token[12] === 'a' ? 'b' : 'a') + token.slice(13);
    expect(parseApiToken(typo)).toBeUndefined();
    expect(parseApiToken(token.replace('inv_live_', 'inv_test_'))).toBeUndefined();
    expect(parseApiToken('inv_pat_short')).toBeUndefined();
    expect(parseApiToken('')).toBeUndefined();
  });

  it('stores only a hash', () => {
    const token = mintToken('pat', randomBytes(32));
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token.slice(8));
  });

  it('recognises JWT-shaped credentials', () => {
    expect(looksLikeJwt('aaa.bbb.ccc')).toBe(true);
    expect(looksLikeJwt('inv_pat_x')).toBe(false);
  });
});

describe('scopes (§5)', () => {
  it('manage implies write implies read, per resource', () => {
    expect(hasScope(['manage:invoices'], 'read', 'invoices')).toBe(true);
    expect(hasScope(['manage:invoices'], 'write', 'invoices')).toBe(true);
    expect(hasScope(['write:invoices'], 'manage', 'invoices')).toBe(false);
    expect(hasScope(['read:invoices'], 'write', 'invoices')).toBe(false);
    expect(hasScope(['manage:invoices'], 'read', 'expenses')).toBe(false);
  });

  it('names read, write and manage for every resource of the spec', () => {
    for (const resource of ['invoices', 'credit_notes', 'proformas', 'quotes', 'expenses', 'contacts', 'bank_accounts', 'accounts']) {
      for (const access of ['read', 'write', 'manage']) expect(ALL_SCOPES).toContain(`${access}:${resource}`);
    }
  });

  it('names the scopes of issue #19: read, write and manage of webhooks, and read:events only', () => {
    expect(ALL_SCOPES).toEqual(expect.arrayContaining(['read:webhooks', 'write:webhooks', 'manage:webhooks', 'read:events']));
    expect(ALL_SCOPES).not.toContain('write:events');
    expect(ALL_SCOPES).not.toContain('manage:events');
  });
});
