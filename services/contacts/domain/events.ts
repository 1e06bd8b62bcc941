// The events of contacts and bank accounts (docs/events.md): appended to the changed record's outbox by
// the very write that changes it, each carrying the record as that write leaves it. Published on
// invoicing.contacts.v1 (contacts.contact.*, contacts.bank_account.*); the events log turns them into
// the tenant's contact.* and bank_account.* events.
import { randomUUID } from 'node:crypto';
import { appendWithSnapshot, OutboxEntry, OutboxFields } from '../../shared/outbox/entries';

export type ContactsEventKind = 'contact' | 'bank_account';
export type ContactsEventAction = 'created' | 'updated' | 'deleted';

export function withEvent<T extends object>(record: T, kind: ContactsEventKind, action: ContactsEventAction): T & Partial<OutboxFields> {
  const entry: Omit<OutboxEntry, 'seq'> = { id: randomUUID(), type: `contacts.${kind}.${action}`, occurred_at: new Date().toISOString(), payload: {} };
  return appendWithSnapshot<Partial<OutboxFields>>(record, [entry]) as T & Partial<OutboxFields>;
}
