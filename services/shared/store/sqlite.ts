// Embedded adapter of the document-store port: one SQLite file in DATA_DIR (WAL), a table per
// collection holding JSON documents, unique keys in a side table written in the same transaction.
import Database from 'better-sqlite3';
import { Collection, CollectionSpec, DocumentStore, DuplicateId, ListQuery, Scalar, StoredDoc, UniqueViolation, VersionConflict, Where } from './port';

const SAFE_NAME = /^[a-z][a-z0-9_]*$/;

function fieldExpr(field: string): string {
  if (!SAFE_NAME.test(field)) throw new Error(`invalid field name ${field}`);
  return `json_extract(doc, '$.${field}')`;
}

function sqlValue(value: Scalar | undefined): Scalar {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value ?? null;
}

export class SqliteDocumentStore implements DocumentStore {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS unique_keys (collection TEXT NOT NULL, key TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (collection, key));
      CREATE INDEX IF NOT EXISTS unique_keys_owner ON unique_keys (collection, id);
      CREATE TABLE IF NOT EXISTS sequences (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
  }

  collection<T extends StoredDoc>(spec: CollectionSpec<T>): Collection<T> {
    return new SqliteCollection<T>(this.db, spec);
  }

  private increment?: Database.Statement;

  async nextId(sequence: string): Promise<number> {
    this.increment ??= this.db.prepare(
      'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value',
    );
    const row = this.increment.get(sequence) as { value: number };
    if (row.value > Number.MAX_SAFE_INTEGER) throw new Error(`sequence ${sequence} overflowed`);
    return row.value;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

class SqliteCollection<T extends StoredDoc> implements Collection<T> {
  private readonly table: string;
  /** Prepared once per distinct SQL text: preparing is most of a point read's cost. */
  private readonly statements = new Map<string, Database.Statement>();
  /** The point read, the hottest statement, kept apart from the map. */
  private getById?: Database.Statement;

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  constructor(private readonly db: Database.Database, private readonly spec: CollectionSpec<T>) {
    if (!SAFE_NAME.test(spec.name)) throw new Error(`invalid collection name ${spec.name}`);
    this.table = `c_${spec.name}`;
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, doc TEXT NOT NULL)`);
    for (const fields of spec.indexes ?? []) {
      const name = `ix_${spec.name}_${fields.join('_')}`;
      db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON ${this.table} (${fields.map(fieldExpr).join(', ')}, id)`);
    }
  }

  private keysOf(doc: T): string[] {
    return this.spec.uniqueKeys ? [...new Set(this.spec.uniqueKeys(doc))] : [];
  }

  private claimKeys(id: number, keys: string[]): void {
    const claim = this.sql('INSERT INTO unique_keys (collection, key, id) VALUES (?, ?, ?)');
    for (const key of keys) {
      try {
        claim.run(this.spec.name, key, id);
      } catch (err) {
        if ((err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) throw new UniqueViolation(key);
        throw err;
      }
    }
  }

  async insert(input: Omit<T, 'version'>): Promise<T> {
    const doc = { ...input, version: 1 } as T;
    const write = () => {
      try {
        this.sql(`INSERT INTO ${this.table} (id, version, doc) VALUES (?, 1, ?)`).run(doc.id, JSON.stringify(doc));
      } catch (err) {
        if ((err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) throw new DuplicateId(this.spec.name, doc.id);
        throw err;
      }
      this.claimKeys(doc.id, this.keysOf(doc));
    };
    // A collection without unique keys writes one statement, atomic by itself: no BEGIN/COMMIT round.
    if (this.spec.uniqueKeys) this.db.transaction(write)();
    else write();
    return doc;
  }

  async get(id: number): Promise<T | null> {
    this.getById ??= this.sql(`SELECT doc FROM ${this.table} WHERE id = ?`);
    const row = this.getById.get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as T) : null;
  }

  private whereSql(where: Where): { sql: string[]; params: Scalar[] } {
    const sql: string[] = [];
    const params: Scalar[] = [];
    for (const [field, value] of Object.entries(where)) {
      if (field === 'id') {
        sql.push('id = ?');
      } else {
        sql.push(`${fieldExpr(field)} IS ?`);
      }
      params.push(sqlValue(value));
    }
    return { sql, params };
  }

  async findOne(where: Where): Promise<T | null> {
    const [found] = await this.list({ where, limit: 1 });
    return found ?? null;
  }

  async list(query: ListQuery): Promise<T[]> {
    const { sql, params } = this.whereSql(query.where);
    const order = [...(query.orderBy ?? []).map(fieldExpr), 'id'];
    if (query.after) {
      if (query.after.length !== order.length) throw new Error('keyset length does not match the sort order');
      // (a, b, id) < (x, y, z) in descending order, spelled out for SQLite's planner.
      const alternatives: string[] = [];
      for (let i = 0; i < order.length; i++) {
        const equal = order.slice(0, i).map((expr) => `${expr} = ?`);
        alternatives.push(`(${[...equal, `${order[i]} < ?`].join(' AND ')})`);
        params.push(...query.after.slice(0, i), query.after[i]);
      }
      sql.push(`(${alternatives.join(' OR ')})`);
    }
    if (query.contains) {
      sql.push(`instr(${fieldExpr(query.contains.field)}, ?) > 0`);
      params.push(query.contains.text);
    }
    const rows = this.sql(
      `SELECT doc FROM ${this.table} ${sql.length ? `WHERE ${sql.join(' AND ')}` : ''} ORDER BY ${order.map((o) => `${o} DESC`).join(', ')} LIMIT ?`,
    ).all(...params, query.limit) as Array<{ doc: string }>;
    return rows.map((row) => JSON.parse(row.doc) as T);
  }

  async count(where: Where): Promise<number> {
    const { sql, params } = this.whereSql(where);
    const row = this.sql(`SELECT count(*) AS n FROM ${this.table} ${sql.length ? `WHERE ${sql.join(' AND ')}` : ''}`).get(...params) as {
      n: number;
    };
    return row.n;
  }

  async update(doc: T): Promise<T> {
    const next = { ...doc, version: doc.version + 1 } as T;
    const write = () => {
      const result = this.sql(`UPDATE ${this.table} SET version = ?, doc = ? WHERE id = ? AND version = ?`).run(
        next.version,
        JSON.stringify(next),
        doc.id,
        doc.version,
      );
      if (result.changes !== 1) throw new VersionConflict(this.spec.name, doc.id);
      if (!this.spec.uniqueKeys) return;
      this.sql('DELETE FROM unique_keys WHERE collection = ? AND id = ?').run(this.spec.name, doc.id);
      this.claimKeys(doc.id, this.keysOf(next));
    };
    if (this.spec.uniqueKeys) this.db.transaction(write)();
    else write();
    return next;
  }
}
