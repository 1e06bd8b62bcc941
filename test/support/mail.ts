// Reading delivered mail back: the .eml outbox under DATA_DIR/outbox, and Mailpit's HTTP API; both parsed
// with mailparser, attachments included.
import { ParsedMail, simpleParser } from 'mailparser';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { mailpitApi } from './real-engines';
import { System } from './system';

export function outboxDir(system: System): string {
  return path.join(system.dataDir, 'outbox');
}

/** Every message in the system's .eml outbox, parsed. */
export async function outboxMessages(system: System): Promise<ParsedMail[]> {
  const dir = outboxDir(system);
  if (!existsSync(dir)) return [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  return Promise.all(files.map((f) => simpleParser(readFileSync(path.join(dir, f)))));
}

export const recipients = (m: ParsedMail, field: 'to' | 'cc' | 'bcc'): string[] => {
  const value = m[field];
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((a) => a.value.map((v) => v.address ?? ''));
};

interface MailpitSummary {
  ID: string;
  MessageID: string;
  To: Array<{ Address: string }>;
}

/** Messages in Mailpit sent to `address` (any of To, Cc, Bcc), parsed from their raw source. */
export async function mailpitMessagesTo(address: string, api = mailpitApi()): Promise<ParsedMail[]> {
  const res = await fetch(`${api}/api/v1/search?query=${encodeURIComponent(`addressed:"${address}"`)}&limit=200`);
  if (!res.ok) throw new Error(`Mailpit search failed: ${res.status} ${await res.text()}`);
  const { messages } = (await res.json()) as { messages: MailpitSummary[] };
  return Promise.all(
    messages.map(async (m) => {
      const raw = await fetch(`${api}/api/v1/message/${m.ID}/raw`);
      return simpleParser(Buffer.from(await raw.arrayBuffer()));
    }),
  );
}
