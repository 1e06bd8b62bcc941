// Embedded adapter of the document-store port: one SQLite file in DATA_DIR (WAL), a table per
// collection holding JSON documents, unique keys in a side table written in the same transaction.
import Database from 'better-sqlite3';
import { Collection, CollectionSpec, DocumentStore, DuplicateId, ListQuery, Scalar, StoredDoc, UniqueViolation, VersionConflict, Where } from './port';

const SAFE_NAME = /^[a-z][a-z0-9_]*$/;
/** Rows of a filter's own range a search examines before it turns to the substring index (see list). */
const SEARCH_SCAN_ROWS = 2_000;
/** Matches of the trigram index few enough to sort outright (an ordered search; see searchIndexed). */
const SORTED_CANDIDATES = 5_000;

export interface SqliteStoreOptions {
  /** Rows of a filter's own range a `contains` search scans before it asks the trigram index (default 2,000). */
  searchScanRows?: number;
  /** Index matches an ordered search sorts outright; more, and it walks the list order instead (default 5,000). */
  sortedCandidates?: number;
}

function fieldExpr(field: string): string {
  if (!SAFE_NAME.test(field)) throw new Error(`invalid field name ${field}`);
  return `json_extract(doc, '$.${field}')`;
}

/**
 * A LIMIT written into the SQL text, never bound: SQLite plans with a bound LIMIT's value, so it marks the
 * statement to be prepared again whenever that parameter is bound — on every run of a cached statement
 * (measured: a point lookup with `LIMIT ?` 8 µs, with `LIMIT 1` 3 µs; in the gateway's POST ≈ 40 µs of
 * parsing per call). The cache then holds one statement per distinct limit, and limits are few (page sizes).
 */
function limitSql(limit: number): string {
  if (!Number.isSafeInteger(limit)) throw new Error(`invalid limit ${limit}`);
  return `LIMIT ${limit}`;
}

function sqlValue(value: Scalar | undefined): Scalar {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value ?? null;
}

export class SqliteDocumentStore implements DocumentStore {
  private readonly db: Database.Database;

  constructor(file: string, private readonly options: SqliteStoreOptions = {}) {
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
    return new SqliteCollection<T>(this.db, spec, this.options.searchScanRows ?? SEARCH_SCAN_ROWS, this.options.sortedCandidates ?? SORTED_CANDIDATES);
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

  private advance?: Database.Statement;

  async reserveIds(sequence: string, count: number): Promise<number> {
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`cannot reserve ${count} ids`);
    this.advance ??= this.db.prepare(
      'INSERT INTO sequences (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value RETURNING value',
    );
    const row = this.advance.get(sequence, count) as { value: number };
    if (row.value > Number.MAX_SAFE_INTEGER) throw new Error(`sequence ${sequence} overflowed`);
    return row.value - count + 1;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/**
 * The substring index of a collection's `searchField`: an FTS5 table with the trigram tokenizer whose
 * rowid is the document's id, written in the same transaction as the document. A MATCH of a quoted
 * needle finds the rows containing it (FTS5 folds ASCII case, so the caller's exact `instr` check stays).
 * Trigrams need 3 characters: a shorter needle is served by a scan of the filtered rows.
 */
class SubstringIndex {
  readonly table: string;

  constructor(db: Database.Database, collection: string, documents: string, readonly field: string) {
    this.table = `s_${collection}`;
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE name = ?").get(this.table);
    if (exists) return;
    db.transaction(() => {
      db.exec(`CREATE VIRTUAL TABLE ${this.table} USING fts5(text, tokenize = 'trigram')`);
      // A collection that existed before its index: index what it holds, once.
      db.exec(`INSERT INTO ${this.table} (rowid, text) SELECT id, ${fieldExpr(field)} FROM ${documents} WHERE ${fieldExpr(field)} IS NOT NULL`);
    })();
  }

  static serves(needle: string): boolean {
    return [...needle].length >= 3;
  }

  /** The FTS5 query for a literal substring: one phrase, quotes doubled. */
  static phrase(needle: string): string {
    return `"${needle.replace(/"/g, '""')}"`;
  }

  /** Statements that make the index follow a written document (inside the caller's transaction). */
  write(id: number, doc: Record<string, unknown>, statement: (sql: string) => Database.Statement, replacing: boolean): void {
    if (replacing) statement(`DELETE FROM ${this.table} WHERE rowid = ?`).run(id);
    const text = doc[this.field];
    if (typeof text === 'string') statement(`INSERT INTO ${this.table} (rowid, text) VALUES (?, ?)`).run(id, text);
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

  private readonly search?: SubstringIndex;

  constructor(
    private readonly db: Database.Database,
    private readonly spec: CollectionSpec<T>,
    private readonly searchScanRows: number,
    private readonly sortedCandidates: number,
  ) {
    if (!SAFE_NAME.test(spec.name)) throw new Error(`invalid collection name ${spec.name}`);
    this.table = `c_${spec.name}`;
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, doc TEXT NOT NULL)`);
    for (const fields of spec.indexes ?? []) {
      const name = `ix_${spec.name}_${fields.join('_')}`;
      db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON ${this.table} (${fields.map(fieldExpr).join(', ')}, id)`);
    }
    if (spec.searchField) this.search = new SubstringIndex(db, spec.name, this.table, spec.searchField);
  }

  /** Whether a write must run as one transaction: more than one statement (unique keys, the substring index). */
  private get multiStatement(): boolean {
    return Boolean(this.spec.uniqueKeys || this.search);
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
      this.search?.write(doc.id, doc as unknown as Record<string, unknown>, (text) => this.sql(text), false);
    };
    // A collection without unique keys or search writes one statement, atomic by itself: no BEGIN/COMMIT round.
    if (this.multiStatement) this.db.transaction(write)();
    else write();
    return doc;
  }

  async insertMany(input: Array<Omit<T, 'version'>>): Promise<void> {
    const insert = this.sql(`INSERT INTO ${this.table} (id, version, doc) VALUES (?, 1, ?)`);
    this.db.transaction(() => {
      for (const item of input) {
        const doc = { ...item, version: 1 } as T;
        try {
          insert.run(doc.id, JSON.stringify(doc));
        } catch (err) {
          if ((err as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) throw new DuplicateId(this.spec.name, doc.id);
          throw err;
        }
        this.claimKeys(doc.id, this.keysOf(doc));
        this.search?.write(doc.id, doc as unknown as Record<string, unknown>, (text) => this.sql(text), false);
      }
    })();
  }

  async get(id: number): Promise<T | null> {
    this.getById ??= this.sql(`SELECT doc FROM ${this.table} WHERE id = ?`);
    const row = this.getById.get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as T) : null;
  }

  async getMany(ids: number[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const rows = this.sql(`SELECT doc FROM ${this.table} WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as Array<{ doc: string }>;
    return rows.map((row) => JSON.parse(row.doc) as T);
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

  async findByUniqueKey(key: string): Promise<T | null> {
    // Keys are written in the same transaction as their document, so a key's row always names its holder.
    const row = this.sql(`SELECT d.doc FROM unique_keys k JOIN ${this.table} d ON d.id = k.id WHERE k.collection = ? AND k.key = ?`).get(this.spec.name, key) as
      | { doc: string }
      | undefined;
    return row ? (JSON.parse(row.doc) as T) : null;
  }

  async list(query: ListQuery): Promise<T[]> {
    const indexed = this.search && query.contains?.field === this.search.field && SubstringIndex.serves(query.contains.text);
    if (!indexed) return this.scan(query);
    // Within the first rows of the filter's own index range (a workspace's contacts) the scan is cheap: if
    // it finds a page there, or the range ends, that is the answer. Otherwise the trigram index serves it: a
    // needle rare in a large workspace, or a workspace so large the scan would be long.
    if (this.searchScanRows > 0) {
      const probe = this.scan(query, this.searchScanRows);
      if (probe.complete) return probe.rows;
    }
    return this.searchIndexed(query);
  }

  /** The filtered rows in order, `contains` checked row by row; `within` bounds the rows examined. */
  private scan(query: ListQuery): T[];
  private scan(query: ListQuery, within: number): { rows: T[]; complete: boolean };
  private scan(query: ListQuery, within?: number): T[] | { rows: T[]; complete: boolean } {
    const { sql, params } = this.whereSql(query.where);
    const order = [...(query.orderBy ?? []).map(fieldExpr), 'id'];
    params.push(...this.keyset(order, query.after, sql));
    const orderSql = order.map((o) => `${o} DESC`).join(', ');
    const whereSql = sql.length ? `WHERE ${sql.join(' AND ')}` : '';
    const needle = query.contains ? `instr(${fieldExpr(query.contains.field)}, ?) > 0` : '';
    if (within === undefined) {
      const rows = this.sql(
        `SELECT doc FROM ${this.table} ${whereSql}${needle ? `${whereSql ? ' AND' : 'WHERE'} ${needle}` : ''} ORDER BY ${orderSql} ${limitSql(query.limit)}`,
      ).all(...params, ...(query.contains ? [query.contains.text] : [])) as Array<{ doc: string }>;
      return rows.map((row) => JSON.parse(row.doc) as T);
    }
    // The first `within` rows of the range, and which of them hold the needle: ids only (reading every
    // row's document out to JavaScript was most of a search's time and garbage), then the hits' documents.
    const rows = this.sql(
      `SELECT id, ${needle || '1'} AS hit FROM ${this.table} ${whereSql} ORDER BY ${orderSql} ${limitSql(within)}`,
    ).all(...(query.contains ? [query.contains.text] : []), ...params) as Array<{ id: number; hit: number }>;
    const hits = rows.filter((row) => row.hit).slice(0, query.limit);
    return { rows: this.inOrder(hits.map((row) => row.id)), complete: hits.length === query.limit || rows.length < within };
  }

  /** The documents of `ids`, in that order. */
  private inOrder(ids: number[]): T[] {
    if (ids.length === 0) return [];
    const rows = this.sql(`SELECT id, doc FROM ${this.table} WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as Array<{ id: number; doc: string }>;
    const byId = new Map(rows.map((row) => [row.id, row.doc]));
    return ids.map((id) => JSON.parse(byId.get(id)!) as T);
  }

  /** Rows found through the trigram index, in the list's order. */
  private searchIndexed(query: ListQuery): T[] {
    const search = this.search!;
    const contains = query.contains!;
    const { sql, params } = this.whereSql(query.where);
    const orderBy = query.orderBy ?? [];
    const order = [...orderBy.map(fieldExpr), 'id'];
    params.push(...this.keyset(order, query.after, sql));
    sql.push(`instr(${fieldExpr(contains.field)}, ?) > 0`);
    params.push(contains.text);
    const phrase = SubstringIndex.phrase(contains.text);
    if (orderBy.length === 0) {
      // Ordered by id alone: walk the index in rowid order (FTS5 gives it without sorting) and stop at a page.
      const rows = this.sql(
        `SELECT c.doc FROM ${search.table} s JOIN ${this.table} c ON c.id = s.rowid WHERE s.text MATCH ? AND ${sql.join(' AND ')} ORDER BY s.rowid DESC ${limitSql(query.limit)}`,
      ).all(phrase, ...params) as Array<{ doc: string }>;
      return rows.map((row) => JSON.parse(row.doc) as T);
    }
    // Ordered by another field. Few matches in the whole index (a rare needle): they are the candidates,
    // filtered and sorted. Many: walk the filter's range in list order and keep the rows among the matches
    // (sorting many candidates costs more than walking to the first page of them). Left to itself the
    // planner always walked, which reads a large workspace end to end for a needle it does not hold.
    const orderSql = order.map((o) => `${o} DESC`).join(', ');
    const candidates = this.sql(`SELECT rowid FROM ${search.table} WHERE text MATCH ? ${limitSql(this.sortedCandidates + 1)}`).all(phrase) as Array<{ rowid: number }>;
    const ids =
      candidates.length <= this.sortedCandidates
        ? // Materialised first: the candidates drive (the planner otherwise walked the range, probing each row against them).
          (this.sql(
            `WITH m AS MATERIALIZED (SELECT id, doc FROM ${this.table} WHERE id IN (SELECT value FROM json_each(?))) SELECT id FROM m WHERE ${sql.join(' AND ')} ORDER BY ${orderSql} ${limitSql(query.limit)}`,
          ).all(
            JSON.stringify(candidates.map((c) => c.rowid)), ...params,
          ) as Array<{ id: number }>)
        : (this.sql(`SELECT id FROM ${this.table} WHERE id IN (SELECT rowid FROM ${search.table} WHERE text MATCH ?) AND ${sql.join(' AND ')} ORDER BY ${orderSql} ${limitSql(query.limit)}`).all(
            phrase, ...params,
          ) as Array<{ id: number }>);
    return this.inOrder(ids.map((row) => row.id));
  }

  /** The keyset condition "strictly after `after`" in descending order, pushed onto `sql`; returns its parameters. */
  private keyset(order: string[], after: ListQuery['after'], sql: string[]): Scalar[] {
    if (!after) return [];
    if (after.length !== order.length) throw new Error('keyset length does not match the sort order');
    // (a, b, id) < (x, y, z) in descending order, spelled out for SQLite's planner.
    const params: Scalar[] = [];
    const alternatives: string[] = [];
    for (let i = 0; i < order.length; i++) {
      const equal = order.slice(0, i).map((expr) => `${expr} = ?`);
      alternatives.push(`(${[...equal, `${order[i]} < ?`].join(' AND ')})`);
      params.push(...after.slice(0, i), after[i]);
    }
    sql.push(`(${alternatives.join(' OR ')})`);
    return params;
  }

  async count(where: Where): Promise<number> {
    const { sql, params } = this.whereSql(where);
    const row = this.sql(`SELECT count(*) AS n FROM ${this.table} ${sql.length ? `WHERE ${sql.join(' AND ')}` : ''}`).get(...params) as {
      n: number;
    };
    return row.n;
  }

  async increment(id: number): Promise<number> {
    const row = this.sql(
      `INSERT INTO ${this.table} (id, version, doc) VALUES (?, 1, json_object('id', ?, 'version', 1))
       ON CONFLICT(id) DO UPDATE SET version = version + 1, doc = json_set(doc, '$.version', version + 1) RETURNING version`,
    ).get(id, id) as { version: number };
    return row.version;
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
      this.search?.write(doc.id, next as unknown as Record<string, unknown>, (text) => this.sql(text), true);
      if (!this.spec.uniqueKeys) return;
      this.sql('DELETE FROM unique_keys WHERE collection = ? AND id = ?').run(this.spec.name, doc.id);
      this.claimKeys(doc.id, this.keysOf(next));
    };
    if (this.multiStatement) this.db.transaction(write)();
    else write();
    return next;
  }
}
