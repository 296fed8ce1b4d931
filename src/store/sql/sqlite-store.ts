/**
 * The embedded store: one SQLite file through Node's built-in
 * `node:sqlite`, in WAL mode. Several processes may use the same file at once:
 * every write runs in a `BEGIN IMMEDIATE` transaction, which takes SQLite's
 * single write lock up front (waiting up to the busy timeout), so writers are
 * serialized across processes and each reads the latest committed state.
 * DatabaseSync waits synchronously, so a process blocks while another holds
 * the lock; transactions here last milliseconds.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { Store } from '../store.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';
import { sqlStore } from './sql-store.ts';
import type { SqlDriver, SqlSession, SqlValue } from './sql-driver.ts';
import { META_TABLE, migrationSteps, renderSql, SCHEMA_VERSION, SqlDialect, tableNames } from './schema.ts';

/** Path that opens a private in-memory database (tests, dry runs). */
export const SQLITE_MEMORY = ':memory:';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** How long a write waits for another process's write lock, in ms. Default 10 000. */
  readonly busyTimeoutMs?: number;
}

const TABLES = tableNames(SqlDialect.sqlite);

/**
 * Most prepared statements a connection keeps. Multi-row statements (run
 * targets and results) differ by row count, so the cache must not grow with
 * every batch size ever seen.
 */
const STATEMENT_CACHE_SIZE = 200;

/**
 * One connection per database file per process, shared by every store opened
 * on that file. DatabaseSync waits for SQLite's write lock synchronously, so a
 * second connection in the same process would block the event loop while the
 * first one's transaction, spanning awaits, could never finish: a deadlock.
 * Within a process, transactions queue on the shared connection instead;
 * between processes, SQLite's lock (with the busy timeout) serializes them.
 */
class Connection {
  readonly db: DatabaseSync;
  readonly session: SqlSession;
  readonly #key: string | undefined;
  readonly #statements = new Map<string, StatementSync>();
  #queue: Promise<unknown> = Promise.resolve();
  refs = 1;

  constructor(db: DatabaseSync, key: string | undefined) {
    this.db = db;
    this.#key = key;
    this.session = {
      all: async (sql, params = []) => this.#prepare(sql).all(...bind(params)),
      run: async (sql, params = []) => Number(this.#prepare(sql).run(...bind(params)).changes),
    };
  }

  /** A cached prepared statement; the cache keeps the most recently used {@link STATEMENT_CACHE_SIZE}. */
  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement) {
      this.#statements.delete(sql);
    } else {
      statement = this.db.prepare(sql);
      const oldest = this.#statements.size >= STATEMENT_CACHE_SIZE ? this.#statements.keys().next() : undefined;
      if (oldest && !oldest.done) this.#statements.delete(oldest.value);
    }
    this.#statements.set(sql, statement);
    return statement;
  }

  transaction<T>(begin: string, fn: (s: SqlSession) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.db.exec(begin);
      try {
        const result = await fn(this.session);
        this.db.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.db.isTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async release(): Promise<void> {
    if (--this.refs > 0) return;
    if (this.#key !== undefined) connections.delete(this.#key);
    await this.#queue;
    this.db.close();
  }
}

const connections = new Map<string, Connection>();

class SqliteDriver implements SqlDriver {
  readonly tables = TABLES;
  readonly #connection: Connection;
  #closed = false;

  constructor(connection: Connection) {
    this.#connection = connection;
  }

  read<T>(fn: (s: SqlSession) => Promise<T>): Promise<T> {
    // A deferred transaction in WAL mode reads one snapshot and never blocks writers.
    return this.#connection.transaction('BEGIN DEFERRED', fn);
  }

  write<T>(fn: (s: SqlSession) => Promise<T>): Promise<T> {
    return this.#connection.transaction('BEGIN IMMEDIATE', fn);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connection.release();
  }
}

function bind(params: readonly SqlValue[]): SQLInputValue[] {
  return params as SQLInputValue[];
}

/** Whether `error` is SQLite's SQLITE_BUSY (any extended code). */
function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 5;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `fn`, again while SQLite answers SQLITE_BUSY, for up to `timeout` ms.
 * SQLite answers BUSY without waiting where waiting could deadlock: two
 * processes opening a fresh file at once both read it, then both ask for
 * the exclusive lock that switching to WAL needs. Opening is synchronous,
 * so the pauses (5 ms doubling to 100 ms) block; they happen only then.
 */
function whileBusy<T>(timeout: number, fn: () => T): T {
  const deadline = Date.now() + timeout;
  for (let ms = 5; ; ms = Math.min(ms * 2, 100)) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, ms);
    }
  }
}

/** Create the schema on a fresh database, or bring an older one up to {@link SCHEMA_VERSION} step by step. */
function migrate(db: DatabaseSync, path: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(renderSql(META_TABLE, SqlDialect.sqlite));
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get();
    const found = row === undefined ? 0 : Number(row.value);
    if (!(Number.isInteger(found) && found >= 0 && found <= SCHEMA_VERSION)) {
      throw new StoreError(
        StoreErrorCode.SchemaVersion,
        `${path}: schema version ${String(row?.value)} is not supported by this relabel ` + `(it knows version ${SCHEMA_VERSION})`,
      );
    }
    for (const sql of migrationSteps(found, SqlDialect.sqlite)) db.exec(sql);
    if (row === undefined) {
      db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SCHEMA_VERSION));
    } else if (found !== SCHEMA_VERSION) {
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(String(SCHEMA_VERSION));
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

function openDatabase(path: string, timeout: number): DatabaseSync {
  const db = new DatabaseSync(path, { timeout, enableForeignKeyConstraints: true });
  try {
    if (path !== SQLITE_MEMORY) {
      // WAL lets readers run beside the one writer. synchronous stays at its
      // default (FULL): a committed revision survives a power loss too.
      whileBusy(timeout, () => db.prepare('PRAGMA journal_mode = WAL').get());
    }
    whileBusy(timeout, () => migrate(db, path));
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Open (creating when absent, with its parent directories) the SQLite
 * store at `path`, or a private in-memory one for {@link SQLITE_MEMORY}.
 * Stores opened on one file in one process share a connection (the first
 * opener's options apply). Throws SchemaVersion when the file holds a schema
 * this code does not know; the driver's own error when it cannot be opened.
 */
export async function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Promise<Store> {
  if (path.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, 'SQLite store path is empty');
  const timeout = options.busyTimeoutMs ?? 10_000;
  if (path === SQLITE_MEMORY) {
    return sqlStore(new SqliteDriver(new Connection(openDatabase(path, timeout), undefined)));
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = join(realpathSync(dirname(path)), basename(path));
  let connection = connections.get(key);
  if (connection) {
    connection.refs++;
  } else {
    connection = new Connection(openDatabase(key, timeout), key);
    connections.set(key, connection);
  }
  return sqlStore(new SqliteDriver(connection));
}
