// The seeding run: workspaces (owner, workspace, membership), then contacts (each with its legal entity),
// invoices (with the numbering sequences that continue after them) and expenses, written through the
// services' store ports in bulk (insertMany, ids taken in blocks with reserveIds). It refuses a target
// that already holds a workspace: seeded ids, numbers and e-mails are laid out for an empty one.
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { documentsStore } from '../../services/documents/adapters/documents-store';
import { DocumentRecord, PartyData } from '../../services/documents/ports/documents-store';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { identityStore } from '../../services/identity/adapters/identity-store';
import { Collection, DocumentStore, StoredDoc } from '../../services/shared/store/port';
import { random } from './fake';
import { perWorkspace, SeedPlan } from './plan';
import { Progress } from './progress';
import { contact, expense, invoice, legalEntity, numbered, sequence, Workspace, workspace } from './records';

export class TargetNotEmpty extends Error {}

/** What a run wrote: the workspaces by id, largest first (the bench measures the first). */
export interface SeedResult {
  accountIds: number[];
  rows: { workspaces: number; contacts: number; invoices: number; expenses: number };
}

/** Buffers documents of one collection and writes them `size` at a time. */
class BulkWriter<T extends StoredDoc> {
  private pending: Array<Omit<T, 'version'>> = [];
  constructor(private readonly collection: Collection<T>, private readonly size: number, private readonly written: (n: number) => void = () => undefined) {}

  async add(doc: Omit<T, 'version'>): Promise<void> {
    this.pending.push(doc);
    if (this.pending.length >= this.size) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.pending.length) return;
    const docs = this.pending;
    this.pending = [];
    await this.collection.insertMany(docs);
    this.written(docs.length);
  }
}

function prefixSums(counts: number[]): number[] {
  const starts = [0];
  for (const n of counts) starts.push(starts[starts.length - 1] + n);
  return starts;
}

export async function seed(store: DocumentStore, plan: SeedPlan, options: { passwordHash: string; progress?: Progress; today?: string }): Promise<SeedResult> {
  const identity = identityStore(store);
  const contacts = contactsStore(store);
  const documents = documentsStore(store);
  const expenses = expensesStore(store);
  if (await identity.accounts.findOne({})) throw new TargetNotEmpty('the target already holds workspaces: seed an empty DATA_DIR or database');

  const at = new Date().toISOString();
  const today = options.today ?? at.slice(0, 10);
  const counts = perWorkspace(plan);
  const progress = options.progress ?? new Progress(plan.workspaces + plan.contacts + plan.invoices + plan.expenses, () => undefined);
  const W = plan.workspaces;

  // Workspaces, with their owners and memberships.
  progress.phase('workspaces', W);
  const [account0, user0, membership0] = [await store.reserveIds('identity.account', W), await store.reserveIds('identity.user', W), await store.reserveIds('identity.membership', W)];
  const workspaces: Workspace[] = [];
  const accounts = new BulkWriter(identity.accounts, plan.batch, (n) => progress.advance(n));
  const users = new BulkWriter(identity.users, plan.batch);
  const memberships = new BulkWriter(identity.memberships, plan.batch);
  for (let w = 0; w < W; w++) {
    const ws = workspace(plan.seed, w, { account: account0 + w, user: user0 + w, membership: membership0 + w }, options.passwordHash, at);
    workspaces.push(ws);
    await users.add(ws.owner);
    await memberships.add(ws.membership);
    await accounts.add(ws.account);
  }
  await users.flush();
  await memberships.flush();
  await accounts.flush();

  // Contacts: one legal entity each; entity and contact `ordinal` of the run share it.
  progress.phase('contacts', plan.contacts);
  const contactStarts = prefixSums(counts.contacts);
  const entity0 = plan.contacts ? await store.reserveIds('contacts.legal_entity', plan.contacts) : 0;
  const contact0 = plan.contacts ? await store.reserveIds('contacts.contact', plan.contacts) : 0;
  const entities = new BulkWriter(contacts.legalEntities, plan.batch);
  const contactRows = new BulkWriter(contacts.contacts, plan.batch, (n) => progress.advance(n));
  for (let w = 0; w < W; w++) {
    for (let ordinal = contactStarts[w]; ordinal < contactStarts[w + 1]; ordinal++) {
      const entity = legalEntity(plan.seed, ordinal, entity0 + ordinal, workspaces[w].account.id, at);
      await entities.add(entity);
      await contactRows.add(contact(entity, contact0 + ordinal, ordinal));
    }
  }
  await entities.flush();
  await contactRows.flush();

  /** A contact of workspace w drawn at random, with its entity as documents snapshot it. */
  const contactOf = (w: number, rnd: () => number) => {
    const ordinal = contactStarts[w] + Math.floor(rnd() * counts.contacts[w]);
    const entity = legalEntity(plan.seed, ordinal, entity0 + ordinal, workspaces[w].account.id, at);
    const party: PartyData = {
      id: entity.id, name: entity.name, registration_id: entity.registration_id, tax_id: entity.tax_id, vat_id: entity.vat_id,
      email: entity.email, phone: entity.phone, address: entity.address, postal_address: entity.postal_address,
    };
    return { contactId: contact0 + ordinal, contactName: contact(entity, contact0 + ordinal, ordinal).name, entity: party };
  };

  // Invoices, oldest first; issued ones numbered per (workspace, year), the sequences left where they stand.
  progress.phase('invoices', plan.invoices);
  const pick = random(plan.seed ^ 0x1f2e3d4c);
  const document0 = plan.invoices ? await store.reserveIds('documents.document', plan.invoices) : 0;
  const invoiceRows = new BulkWriter<DocumentRecord>(documents.documents, plan.batch, (n) => progress.advance(n));
  const sequences = new BulkWriter(documents.sequences, plan.batch);
  let nextDocument = document0;
  for (let w = 0; w < W; w++) {
    const ws = workspaces[w];
    const last = new Map<number, number>();
    for (let index = 0; index < counts.invoices[w]; index++) {
      const doc = invoice(plan.seed, ws, { id: nextDocument++, index, count: counts.invoices[w], purchaser: contactOf(w, pick).entity, today });
      if (doc.status === 'draft') {
        await invoiceRows.add(doc);
        continue;
      }
      const year = Number(doc.issue_date.slice(0, 4));
      const counter = (last.get(year) ?? 0) + 1;
      last.set(year, counter);
      await invoiceRows.add(numbered(doc, counter));
    }
    if (last.size) {
      const first = await store.reserveIds('documents.sequence', last.size);
      let i = 0;
      for (const [year, counter] of last) await sequences.add(sequence(first + i++, ws.account.id, year, counter, at));
    }
  }
  await invoiceRows.flush();
  await sequences.flush();

  // Expenses, each from a supplier among the workspace's contacts.
  progress.phase('expenses', plan.expenses);
  const expense0 = plan.expenses ? await store.reserveIds('expenses.expense', plan.expenses) : 0;
  const expenseRows = new BulkWriter(expenses.expenses, plan.batch, (n) => progress.advance(n));
  let nextExpense = expense0;
  for (let w = 0; w < W; w++) {
    for (let index = 0; index < counts.expenses[w]; index++) {
      await expenseRows.add(expense(plan.seed, workspaces[w], { id: nextExpense++, index, count: counts.expenses[w], supplier: contactOf(w, pick), today }));
    }
  }
  await expenseRows.flush();
  progress.done();

  return {
    accountIds: workspaces.map((ws) => ws.account.id),
    rows: { workspaces: W, contacts: plan.contacts, invoices: plan.invoices, expenses: plan.expenses },
  };
}
