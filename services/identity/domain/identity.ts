// Identity use cases: users, workspaces, memberships, subscriptions, API keys and sessions.
import { ALL_SCOPES, hashToken, sameHash, isKnownScope, looksLikeJwt, mintToken, parseApiToken, TokenKind } from '../../shared/credentials';
import { fail } from '../../shared/errors';
import { appendToOutbox } from '../../shared/outbox/entries';
import { mutate } from '../../shared/store/port';
import { IdentityEvents } from '../ports/events';
import {
  AccountRecord,
  ApiKeyRecord,
  IdentityStore,
  LegalIdentityData,
  MembershipRecord,
  SubscriptionData,
  UserRecord,
} from '../ports/identity-store';
import { LogoStore } from '../ports/logos';
import { ExpiredSession, PasswordHasher, RandomSource, SessionSigner } from '../ports/security';
import { accountView, AccountView, DEFAULT_SUBSCRIPTION } from './accounts';
import { normalizeEmail } from '../../shared/validation';
import { IdentityEventFactory } from './events';
import { logoType } from './logo';

export type CredentialType = 'personal_access_token' | 'workspace_token' | 'session';

export interface Principal {
  credential_type: CredentialType;
  user_id: number;
  account_id: number;
  livemode: boolean;
  scopes: string[];
  credential_id: string;
  expires_at: string;
}

export interface AccountAccess {
  account_id: number;
  suspended: boolean;
  subscription: SubscriptionData;
}

const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** last_used_at is written at most this often per key (the gateway caches principals anyway). */
const LAST_USED_RESOLUTION_MS = 60_000;
const MIN_PASSWORD_LENGTH = 8;

const now = () => new Date().toISOString();

export class Identity {
  private readonly eventOf: IdentityEventFactory;

  constructor(
    private readonly store: IdentityStore,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionSigner,
    private readonly random: RandomSource,
    private readonly events: IdentityEvents,
    private readonly logos: LogoStore,
  ) {
    this.eventOf = new IdentityEventFactory(events);
  }

  // ---- credentials -------------------------------------------------------------------------

  async authenticate(credential: string): Promise<Principal> {
    if (!credential) throw fail.unauthenticated('missing_credentials', 'an Authorization: Bearer credential is required');
    if (parseApiToken(credential)) return this.authenticateApiKey(credential);
    if (looksLikeJwt(credential)) return this.authenticateSession(credential);
    throw fail.unauthenticated('invalid_credentials', 'the credential is malformed');
  }

  private async authenticateApiKey(token: string): Promise<Principal> {
    const hash = hashToken(token);
    const key = await this.store.apiKeys.findOne({ token_hash: hash });
    // The index finds the row; the comparison that decides is constant-time.
    if (!key || !sameHash(key.token_hash, hash)) throw fail.unauthenticated('invalid_credentials', 'the credential is not valid');
    if (key.revoked_at) throw fail.unauthenticated('revoked_credentials', 'the credential has been revoked');
    if (!key.last_used_at || Date.now() - Date.parse(key.last_used_at) > LAST_USED_RESOLUTION_MS) {
      await mutate(this.store.apiKeys, key.id, (k) => ({ ...k, last_used_at: now() })).catch(() => undefined);
    }
    return {
      credential_type: key.kind === 'pat' ? 'personal_access_token' : 'workspace_token',
      user_id: key.user_id ?? 0,
      account_id: key.account_id ?? 0,
      livemode: key.kind !== 'test',
      scopes: key.scopes,
      credential_id: `key_${key.id}`,
      expires_at: '',
    };
  }

  private async authenticateSession(token: string): Promise<Principal> {
    let claims;
    try {
      claims = await this.sessions.verify(token);
    } catch (err) {
      if (err instanceof ExpiredSession) throw fail.unauthenticated('expired_credentials', 'the session has expired');
      throw fail.unauthenticated('invalid_credentials', 'the credential is not valid');
    }
    const session = await this.store.sessions.get(claims.sessionId);
    if (!session || session.user_id !== claims.userId) throw fail.unauthenticated('invalid_credentials', 'the credential is not valid');
    if (session.revoked_at) throw fail.unauthenticated('revoked_credentials', 'the session has been signed out');
    return {
      credential_type: 'session',
      user_id: session.user_id,
      account_id: 0,
      livemode: true,
      scopes: ALL_SCOPES,
      credential_id: `session_${session.id}`,
      expires_at: session.expires_at,
    };
  }

  async signIn(emailInput: string, password: string): Promise<{ token: string; expires_at: string }> {
    const email = emailInput.trim().toLowerCase();
    const user = email ? await this.store.users.findOne({ email }) : null;
    // Hash even for unknown e-mails so response time does not reveal which addresses exist.
    const ok = await this.passwords.verify(password, user?.password_hash ?? (await this.dummyHash()));
    if (!user || !ok) throw fail.unauthenticated('invalid_credentials', 'e-mail or password is incorrect');
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    const session = await this.store.sessions.insert({
      id: await this.store.nextId('session'),
      user_id: user.id,
      expires_at: expiresAt.toISOString(),
      revoked_at: null,
      created_at: now(),
    });
    const token = await this.sessions.sign({ userId: user.id, sessionId: session.id, expiresAt });
    return { token, expires_at: session.expires_at };
  }

  private dummy?: Promise<string>;
  private dummyHash(): Promise<string> {
    this.dummy ??= this.passwords.hash('not-a-password-of-anyone');
    return this.dummy;
  }

  async signOut(token: string): Promise<string> {
    const principal = await this.authenticate(token);
    if (principal.credential_type !== 'session') {
      throw fail.invalid('not_a_session', 'sign_out ends session tokens; revoke API keys in the app instead');
    }
    const sessionId = Number(principal.credential_id.replace('session_', ''));
    // The deny-list entry and its event are one write: a bus outage delays the event, never loses it.
    await mutate(this.store.sessions, sessionId, (s) =>
      s.revoked_at ? null : appendToOutbox({ ...s, revoked_at: now() }, [this.eventOf.credentialRevoked(principal.credential_id)]),
    );
    this.events.written();
    return principal.credential_id;
  }

  // ---- users and workspaces ----------------------------------------------------------------

  async getUser(userId: number): Promise<UserRecord> {
    const user = await this.store.users.get(userId);
    if (!user) throw fail.notFound('user');
    return user;
  }

  async accountAccess(userId: number, accountId: number): Promise<AccountAccess> {
    const account = await this.store.accounts.get(accountId);
    if (!account) throw fail.notFound('account');
    if (userId > 0 && !(await this.isMember(userId, accountId))) throw fail.notFound('account');
    return { account_id: account.id, suspended: account.suspended, subscription: account.subscription };
  }

  private async isMember(userId: number, accountId: number): Promise<boolean> {
    return (await this.store.memberships.findOne({ user_id: userId, account_id: accountId })) !== null;
  }

  private async view(account: AccountRecord, viewer: UserRecord | null): Promise<AccountView> {
    const owner = viewer?.id === account.owner_user_id ? viewer : await this.store.users.get(account.owner_user_id);
    const isDefault = viewer ? viewer.default_account_id === account.id : true;
    return accountView(account, owner, isDefault);
  }

  /** The user's workspaces in membership order (newest first); `position` is the keyset of a row. */
  async listUserAccounts(userId: number, limit: number, after?: number): Promise<Array<{ position: number; account: AccountView }>> {
    const user = await this.getUser(userId);
    const memberships = await this.store.memberships.list({
      where: { user_id: userId },
      limit,
      after: after === undefined ? undefined : [after],
    });
    const rows: Array<{ position: number; account: AccountView }> = [];
    for (const membership of memberships) {
      const account = await this.store.accounts.get(membership.account_id);
      if (account) rows.push({ position: membership.id, account: await this.view(account, user) });
    }
    return rows;
  }

  async getUserAccount(userId: number, accountId: number): Promise<AccountView> {
    const user = await this.getUser(userId);
    const account = await this.store.accounts.get(accountId);
    if (!account || !(await this.isMember(userId, accountId))) throw fail.notFound('account');
    return this.view(account, user);
  }

  async setDefaultAccount(userId: number, accountId: number): Promise<AccountView> {
    const account = await this.store.accounts.get(accountId);
    if (!account || !(await this.isMember(userId, accountId))) throw fail.notFound('account');
    // The default lives on the user record: one field, so exactly one default by construction.
    const user = await mutate(this.store.users, userId, (u) =>
      u.default_account_id === accountId ? null : { ...u, default_account_id: accountId, updated_at: now() },
    );
    if (!user) throw fail.notFound('user');
    return this.view(account, user);
  }

  async getAccount(accountId: number): Promise<AccountView> {
    const account = await this.store.accounts.get(accountId);
    if (!account) throw fail.notFound('account');
    return this.view(account, null);
  }

  // ---- administration (the admin CLI) ------------------------------------------------------

  async createUser(emailInput: string, password: string, name: string): Promise<UserRecord> {
    const email = normalizeEmail(emailInput);
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw fail.invalid('weak_password', `password must have at least ${MIN_PASSWORD_LENGTH} characters`, 'password');
    }
    if (await this.store.users.findOne({ email })) throw fail.invalid('email_taken', `a user with e-mail ${email} exists`, 'email');
    const at = now();
    return this.store.users
      .insert({
        id: await this.store.nextId('user'),
        email,
        name: name.trim(),
        password_hash: await this.passwords.hash(password),
        default_account_id: null,
        created_at: at,
        updated_at: at,
      })
      .catch((err) => {
        if ((err as Error).name === 'UniqueViolation') throw fail.invalid('email_taken', `a user with e-mail ${email} exists`, 'email');
        throw err;
      });
  }

  private async userByEmail(emailInput: string): Promise<UserRecord> {
    const user = await this.store.users.findOne({ email: emailInput.trim().toLowerCase() });
    if (!user) throw fail.notFound('user');
    return user;
  }

  async createWorkspace(ownerEmail: string, name: string): Promise<AccountRecord> {
    const owner = await this.userByEmail(ownerEmail);
    const at = now();
    const personal = name.trim() === '';
    const account = await this.store.accounts.insert({
      id: await this.store.nextId('account'),
      owner_user_id: owner.id,
      personal,
      suspended: false,
      subscription: structuredClone(DEFAULT_SUBSCRIPTION),
      legal_identity: personal ? null : emptyLegalIdentity(name.trim()),
      accounting_type: null,
      onboarding_step: 'legal_identity',
      vat_registration_alert: null,
      logo_key: null,
      created_at: at,
      updated_at: at,
    });
    await this.addMembership(owner, account.id);
    return account;
  }

  private async addMembership(user: UserRecord, accountId: number): Promise<void> {
    if (!(await this.isMember(user.id, accountId))) {
      const membership: Omit<MembershipRecord, 'version'> = { id: await this.store.nextId('membership'), user_id: user.id, account_id: accountId, created_at: now() };
      await this.store.memberships.insert(appendToOutbox(membership, [this.eventOf.workspaceChanged(accountId, user.id)]));
      this.events.written();
    }
    // A user's first workspace becomes the default, so every member has exactly one.
    await mutate(this.store.users, user.id, (u) => (u.default_account_id ? null : { ...u, default_account_id: accountId, updated_at: now() }));
  }

  async addMember(accountId: number, email: string): Promise<{ account_id: number; user_id: number }> {
    const account = await this.store.accounts.get(accountId);
    if (!account) throw fail.notFound('account');
    const user = await this.userByEmail(email);
    await this.addMembership(user, accountId);
    return { account_id: accountId, user_id: user.id };
  }

  private async changeAccount(accountId: number, change: (a: AccountRecord) => AccountRecord): Promise<AccountRecord> {
    const account = await mutate(this.store.accounts, accountId, (a) =>
      appendToOutbox({ ...change(a), updated_at: now() }, [this.eventOf.workspaceChanged(accountId)]),
    );
    if (!account) throw fail.notFound('account');
    this.events.written();
    return account;
  }

  setSuspended(accountId: number, suspended: boolean): Promise<AccountRecord> {
    return this.changeAccount(accountId, (a) => ({ ...a, suspended }));
  }

  async setLegalIdentity(accountId: number, data: LegalIdentityData): Promise<AccountView> {
    const account = await this.changeAccount(accountId, (a) => ({
      ...a,
      legal_identity: data,
      // Setting the legal identity is the last onboarding step here.
      onboarding_step: null,
      accounting_type: a.accounting_type ?? 'simple',
      vat_registration_alert: a.vat_registration_alert ?? false,
    }));
    return this.view(account, null);
  }

  /** Stores a new logo under a content-addressed key; empty data removes the logo. */
  async setLogo(accountId: number, data: Uint8Array): Promise<AccountView> {
    if (!(await this.store.accounts.get(accountId))) throw fail.notFound('account');
    let key: string | null = null;
    if (data.length > 0) {
      const { type, ext } = logoType(data);
      key = `logos/${accountId}/${hashToken(Buffer.from(data).toString('base64')).slice(0, 24)}.${ext}`;
      await this.logos.put(key, data, type);
    }
    const account = await this.changeAccount(accountId, (a) => ({ ...a, logo_key: key }));
    return this.view(account, null);
  }

  /** A fresh time-limited link to the logo, or null. */
  logoUrl(view: AccountView): Promise<string> | null {
    return view.logo_key ? this.logos.signedUrl(view.logo_key) : null;
  }

  setPlan(
    accountId: number,
    change: { active?: boolean; features?: string[]; caps: Record<string, number>; quotas: Record<string, number> },
  ): Promise<AccountRecord> {
    return this.changeAccount(accountId, (a) => ({
      ...a,
      subscription: {
        active: change.active ?? a.subscription.active,
        features: change.features ?? a.subscription.features,
        caps: { ...a.subscription.caps, ...change.caps },
        quotas: { ...a.subscription.quotas, ...change.quotas },
      },
    }));
  }

  async createApiKey(input: {
    kind: TokenKind;
    userEmail?: string;
    accountId?: number;
    scopes: string[];
  }): Promise<{ token: string; key: ApiKeyRecord }> {
    const scopes = [...new Set(input.scopes.includes('all') ? ALL_SCOPES : input.scopes)];
    const unknown = scopes.filter((s) => !isKnownScope(s));
    if (unknown.length) throw fail.invalid('invalid_scope', `unknown scopes: ${unknown.join(', ')}`, 'scopes');
    if (scopes.length === 0) throw fail.invalid('invalid_scope', 'at least one scope is required', 'scopes');
    let userId: number | null = null;
    let accountId: number | null = null;
    if (input.kind === 'pat') {
      userId = (await this.userByEmail(input.userEmail ?? '')).id;
    } else {
      const account = await this.store.accounts.get(input.accountId ?? 0);
      if (!account) throw fail.notFound('account');
      accountId = account.id;
    }
    const token = mintToken(input.kind, this.random.bytes(32));
    const key = await this.store.apiKeys.insert({
      id: await this.store.nextId('api_key'),
      kind: input.kind,
      token_hash: hashToken(token),
      user_id: userId,
      account_id: accountId,
      scopes,
      revoked_at: null,
      last_used_at: null,
      created_at: now(),
    });
    return { token, key };
  }

  async revokeApiKey(token: string): Promise<string> {
    if (!parseApiToken(token)) throw fail.invalid('invalid_token', 'not a well-formed API token', 'token');
    const key = await this.store.apiKeys.findOne({ token_hash: hashToken(token) });
    if (!key) throw fail.notFound('api key');
    await mutate(this.store.apiKeys, key.id, (k) =>
      k.revoked_at ? null : appendToOutbox({ ...k, revoked_at: now() }, [this.eventOf.credentialRevoked(`key_${key.id}`)]),
    );
    this.events.written();
    return `key_${key.id}`;
  }

  /** First start with an empty store: a demo user, workspace and all-scopes token. */
  async bootstrap(email: string, password: string): Promise<{ created: boolean; accountId?: number; token?: string }> {
    if ((await this.store.users.count({})) > 0) return { created: false };
    await this.createUser(email, password, 'Demo User');
    const account = await this.createWorkspace(email, 'Demo Workspace');
    const { token } = await this.createApiKey({ kind: 'pat', userEmail: email, scopes: ['all'] });
    return { created: true, accountId: account.id, token };
  }
}

export function emptyLegalIdentity(name: string): LegalIdentityData {
  return {
    name,
    registration_id: '',
    tax_id: '',
    vat_id: '',
    vat_payer_type: '',
    vat_period: '',
    email: '',
    phone_number: '',
    web: '',
    legal_form: '',
    legal_form_id: null,
    address: null,
    postal_address: null,
  };
}
