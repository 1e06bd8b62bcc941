// The manifest of a backup (BACKUP/manifest.json): what the backup holds, file by file, with sizes and
// SHA-256 checksums, and a checksum of the manifest itself. `restore` verifies all of it before it
// touches the target, so a damaged or altered backup is refused, never half-restored.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BackupRefused } from './data-dir';

export const MANIFEST = 'manifest.json';
/** The copied files, under BACKUP/data, laid out as in DATA_DIR. */
export const DATA = 'data';
export const FORMAT = 'invoicing-backup/1';

export interface ManifestFile {
  /** Relative to DATA_DIR, `/`-separated. */
  path: string;
  /** sqlite: copied with the online backup (a consistent snapshot); file: copied as it was. */
  kind: 'sqlite' | 'file';
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  /** The version of the invoicing package that wrote it. */
  app_version: string;
  created_at: string;
  source: string;
  /** When the databases' snapshots were complete; files written after it may be present, unreferenced. */
  databases_at: string;
  files: ManifestFile[];
  left_out: Array<{ path: string; why: string }>;
  /** SHA-256 of this object's JSON without `checksum`: an edited manifest is refused. */
  checksum: string;
}

export const manifestChecksum = (manifest: Omit<Manifest, 'checksum'>) => {
  const { checksum: _ignored, ...body } = manifest as Manifest;
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
};

/** A relative path that stays inside the directory it is joined to (a hostile manifest cannot escape). */
const SAFE_PATH = /^(?!.*(?:^|\/)\.\.?(?:\/|$))[^/\0\\][^\0\\]*$/;

export function sha256OfFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

function damaged(what: string): BackupRefused {
  return new BackupRefused('backup_damaged', `the backup is damaged or was altered: ${what}; it is not restored`);
}

/** Reads BACKUP/manifest.json and checks its shape and its own checksum. */
export function readManifest(backupDir: string): Manifest {
  const file = path.join(backupDir, MANIFEST);
  if (!existsSync(file)) throw new BackupRefused('not_a_backup', `${backupDir} is not a backup: it has no ${MANIFEST}`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch {
    throw damaged(`${MANIFEST} is not valid JSON`);
  }
  if (typeof manifest !== 'object' || manifest === null) throw damaged(`${MANIFEST} is not an object`);
  if (manifest.format !== FORMAT) {
    throw new BackupRefused('backup_format_unknown', `${backupDir} is in format ${JSON.stringify(manifest.format)}; this version restores ${FORMAT}`);
  }
  if (manifest.checksum !== manifestChecksum(manifest)) throw damaged(`${MANIFEST} does not match its checksum`);
  if (!Array.isArray(manifest.files)) throw damaged(`${MANIFEST} lists no files`);
  const seen = new Set<string>();
  for (const entry of manifest.files) {
    const valid =
      typeof entry?.path === 'string' &&
      SAFE_PATH.test(entry.path) &&
      (entry.kind === 'sqlite' || entry.kind === 'file') &&
      Number.isSafeInteger(entry.size) &&
      entry.size >= 0 &&
      /^[0-9a-f]{64}$/.test(entry.sha256);
    if (!valid) throw damaged(`${MANIFEST} has an invalid entry ${JSON.stringify(entry)}`);
    if (seen.has(entry.path)) throw damaged(`${MANIFEST} lists ${entry.path} twice`);
    seen.add(entry.path);
  }
  return manifest;
}

function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? listFiles(path.join(dir, entry.name), relative) : [relative];
  });
}

/** SQLite's integrity check of a database file: 'ok', or what is wrong (a file too broken to open included). */
function integrityOf(file: string): string {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((row) => row.integrity_check).join('; ');
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    db?.close();
  }
}

/**
 * The whole backup against its manifest: every listed file present with its size and checksum, nothing
 * else under BACKUP/data, every database intact (SQLite's integrity check). Resolves with the manifest.
 */
export async function verifyBackup(backupDir: string): Promise<Manifest> {
  const manifest = readManifest(backupDir);
  const data = path.join(backupDir, DATA);
  const listed = new Set(manifest.files.map((f) => f.path));
  const extra = listFiles(data).filter((file) => !listed.has(file));
  if (extra.length) throw damaged(`${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ` and ${extra.length - 3} more` : ''} not in ${MANIFEST}`);
  for (const entry of manifest.files) {
    const file = path.join(data, ...entry.path.split('/'));
    if (!existsSync(file)) throw damaged(`${entry.path} is missing`);
    if ((await sha256OfFile(file)) !== entry.sha256) throw damaged(`${entry.path} does not match its checksum`);
    if (entry.kind === 'sqlite') {
      const verdict = integrityOf(file);
      if (verdict !== 'ok') throw damaged(`${entry.path} fails SQLite's integrity check (${verdict})`);
    }
  }
  return manifest;
}
