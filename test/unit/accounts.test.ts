import { accountName } from '../../services/identity/domain/accounts';
import { AccountRecord, UserRecord } from '../../services/identity/ports/identity-store';
import { emptyLegalIdentity } from '../../services/identity/domain/identity';

const owner = { id: 1, version: 1, email: 'jana@example.com', name: 'Jana Nováková' } as UserRecord;
const account = (over: Partial<AccountRecord>) => ({ id: 5, personal: false, legal_identity: null, ...over }) as AccountRecord;

describe('Account.name (§2)', () => {
  it('is the legal entity name for a company workspace', () => {
    expect(accountName(account({ legal_identity: emptyLegalIdentity('ACME a.s.') }), owner)).toBe('ACME a.s.');
  });

  it("is the owner's name for a personal workspace, even with a legal identity", () => {
    expect(accountName(account({ personal: true, legal_identity: emptyLegalIdentity('Jana N. OSVČ') }), owner)).toBe('Jana Nováková');
    expect(accountName(account({ personal: true }), { ...owner, name: '' })).toBe('jana@example.com');
  });
});
