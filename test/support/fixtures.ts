// Builds users, workspaces and tokens through the admin CLI, as an operator would.
import { randomBytes } from 'node:crypto';
import { System } from './system';

export interface Workspace {
  id: number;
  ownerEmail: string;
  /** All-scopes personal access token of the owner. */
  pat: string;
}

export const uniqueEmail = (label = 'user') => `${label}-${randomBytes(4).toString('hex')}@example.com`;

export async function createUser(system: System, email = uniqueEmail(), name = 'Test User'): Promise<{ id: number; email: string }> {
  return system.cli('user', 'create', '--email', email, '--password', 'correct-horse', '--name', name);
}

export async function createWorkspace(system: System, name = 'ACME s.r.o.'): Promise<Workspace> {
  const owner = await createUser(system);
  // A personal token belongs to the user, not the workspace: both CLI calls (a process each) run at once.
  const [{ id }, { token }] = await Promise.all([
    system.cli('workspace', 'create', '--owner', owner.email, '--name', name),
    system.cli('token', 'create', '--kind', 'pat', '--user', owner.email, '--scopes', 'all'),
  ]);
  return { id, ownerEmail: owner.email, pat: token };
}

export async function tokenFor(system: System, kind: 'pat' | 'live' | 'test', subject: string | number, scopes: string): Promise<string> {
  const who = kind === 'pat' ? ['--user', String(subject)] : ['--workspace', String(subject)];
  const { token } = await system.cli('token', 'create', '--kind', kind, ...who, '--scopes', scopes);
  return token;
}
