/**
 * The embedded revision store: one SQLite file through Node's built-in
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
import type { RevisionStore } from './revision-store.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';
import { SqlRevisionStore } from './sql-revision-store.ts';
import type { SqlDriver, SqlSession, SqlValue, TableNames } from './sql-driver.ts';

/** Schema version this code writes and reads. Stored in the `meta` table. */
export const SQLITE_SCHEMA_VERSION = 6;

/** Path that opens a private in-memory database (tests, dry runs). */
export const SQLITE_MEMORY = ':memory:';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** How long a write waits for another process's write lock, in ms. Default 10 000. */
  readonly busyTimeoutMs?: number;
}

const TABLES: TableNames = {
  contents: 'contents',
  revisions: 'revisions',
  revisionFiles: 'revision_files',
  revisionTags: 'revision_tags',
  buffer: 'buffer',
  bufferFiles: 'buffer_files',
  runs: 'runs',
  runNodes: 'run_nodes',
  driftReports: 'drift_reports',
  driftNodes: 'drift_nodes',
  pluginSets: 'plugin_sets',
  pluginSetPlugins: 'plugin_set_plugins',
  pluginSetLabels: 'plugin_set_labels',
  pluginStatus: 'plugin_status',
  runPluginSets: 'run_plugin_sets',
  runCommands: 'run_commands',
};

// Timestamps are ISO-8601 text written by the application.
const SCHEMA = `
CREATE TABLE contents (digest TEXT PRIMARY KEY, text TEXT NOT NULL) STRICT;
CREATE TABLE revisions (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, message TEXT) STRICT;
CREATE TABLE revision_files (
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  bucket TEXT NOT NULL,
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES contents (digest),
  PRIMARY KEY (revision_id, bucket, source)
) STRICT;
CREATE INDEX revision_files_digest ON revision_files (digest);
CREATE TABLE revision_tags (
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  tag TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (revision_id, tag)
) STRICT;
CREATE INDEX revision_tags_tag ON revision_tags (tag);
CREATE TABLE buffer (bucket TEXT PRIMARY KEY, staged_at TEXT NOT NULL) STRICT;
CREATE TABLE buffer_files (
  bucket TEXT NOT NULL REFERENCES buffer (bucket),
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES contents (digest),
  PRIMARY KEY (bucket, source)
) STRICT;
CREATE INDEX buffer_files_digest ON buffer_files (digest);
`;

// Version 2: update runs and their per-node results.
const RUNS_SCHEMA = `
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TEXT NOT NULL,
  workflow_id TEXT,
  revision INTEGER,
  dry_run INTEGER NOT NULL,
  retry_of INTEGER,
  target_count INTEGER NOT NULL
) STRICT;
CREATE TABLE run_nodes (
  run_id INTEGER NOT NULL REFERENCES runs (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  status TEXT NOT NULL,
  written INTEGER NOT NULL DEFAULT 0,
  detail TEXT,
  observed TEXT,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, node)
) STRICT;
CREATE INDEX run_nodes_status ON run_nodes (run_id, status, seq);
`;

// Version 3: drift reports and their per-node rows.
const DRIFT_SCHEMA = `
CREATE TABLE drift_reports (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  site TEXT NOT NULL,
  revision INTEGER NOT NULL,
  workflow_id TEXT,
  action TEXT NOT NULL,
  counts TEXT,
  heal TEXT
) STRICT;
CREATE INDEX drift_reports_site ON drift_reports (site, id);
CREATE TABLE drift_nodes (
  report_id INTEGER NOT NULL REFERENCES drift_reports (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  state TEXT NOT NULL,
  revision INTEGER,
  detail TEXT,
  PRIMARY KEY (report_id, seq)
) STRICT;
CREATE INDEX drift_nodes_state ON drift_nodes (report_id, state, seq);
`;


// Version 4: label plugin sets, plugin status, and the set each run pinned.
// (set_id 0 in run_plugin_sets: the run uses no plugin set.)
const PLUGINS_SCHEMA = `
CREATE TABLE plugin_sets (id INTEGER PRIMARY KEY, site TEXT NOT NULL, created_at TEXT NOT NULL, digest TEXT NOT NULL) STRICT;
CREATE INDEX plugin_sets_site ON plugin_sets (site, id);
CREATE TABLE plugin_set_plugins (
  set_id INTEGER NOT NULL REFERENCES plugin_sets (id),
  plugin TEXT NOT NULL,
  digest TEXT NOT NULL,
  polled_at TEXT NOT NULL,
  node_count INTEGER NOT NULL,
  label_count INTEGER NOT NULL,
  PRIMARY KEY (set_id, plugin)
) STRICT;
CREATE TABLE plugin_set_labels (
  set_id INTEGER NOT NULL REFERENCES plugin_sets (id),
  node TEXT NOT NULL,
  plugin TEXT NOT NULL,
  labels TEXT NOT NULL,
  PRIMARY KEY (set_id, node, plugin)
) STRICT;
CREATE INDEX plugin_set_labels_plugin ON plugin_set_labels (set_id, plugin);
CREATE TABLE plugin_status (
  site TEXT NOT NULL,
  plugin TEXT NOT NULL,
  polled_at TEXT NOT NULL,
  ok INTEGER NOT NULL,
  error TEXT,
  last_good_at TEXT,
  last_good_set INTEGER,
  node_count INTEGER,
  label_count INTEGER,
  PRIMARY KEY (site, plugin)
) STRICT;
CREATE TABLE run_plugin_sets (run_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL) STRICT;
`;

// Version 5: who started each run, how, and how it ended (the audit trail).
// Nullable columns added in place, so runs recorded before keep working.
const RUN_AUDIT_SCHEMA = `
ALTER TABLE runs ADD COLUMN started_by TEXT;
ALTER TABLE runs ADD COLUMN started_via TEXT;
ALTER TABLE runs ADD COLUMN outcome TEXT;
`;

// Version 6: each run's Shipyard action id (a ULID), context marker and
// Temporal run id, and the commands issued against the action. Nullable
// columns added in place: runs recorded before keep their old ids only.
const RUN_ACTION_SCHEMA = `
ALTER TABLE runs ADD COLUMN action_id TEXT;
ALTER TABLE runs ADD COLUMN context_marker TEXT;
ALTER TABLE runs ADD COLUMN execution_run_id TEXT;
CREATE UNIQUE INDEX runs_action_id ON runs (action_id);
CREATE TABLE run_commands (
  id TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  command TEXT NOT NULL,
  issued_by TEXT,
  issued_at TEXT NOT NULL
) STRICT;
CREATE INDEX run_commands_run ON run_commands (run_id, id);
`;

/**
 * The steps from each schema version to the next: the SQL that turns
 * version `from` into `from + 1`. A fresh database runs them all.
 */
const MIGRATIONS: readonly { from: number; sql: string }[] = [
  { from: 0, sql: SCHEMA },
  { from: 1, sql: RUNS_SCHEMA },
  { from: 2, sql: DRIFT_SCHEMA },
  { from: 3, sql: PLUGINS_SCHEMA },
  { from: 4, sql: RUN_AUDIT_SCHEMA },
  { from: 5, sql: RUN_ACTION_SCHEMA },
];

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

/** Create the schema on a fresh database, or bring an older one up to {@link SQLITE_SCHEMA_VERSION} step by step. */
function migrate(db: DatabaseSync, path: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT');
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get();
    const found = row === undefined ? 0 : Number(row.value);
    if (!(Number.isInteger(found) && found >= 0 && found <= SQLITE_SCHEMA_VERSION)) {
      throw new StoreError(StoreErrorCode.SchemaVersion,
        `${path}: schema version ${String(row?.value)} is not supported by this relabel ` +
          `(it knows version ${SQLITE_SCHEMA_VERSION})`,
      );
    }
    for (const step of MIGRATIONS) if (step.from >= found) db.exec(step.sql);
    if (row === undefined) {
      db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SQLITE_SCHEMA_VERSION));
    } else if (found !== SQLITE_SCHEMA_VERSION) {
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(String(SQLITE_SCHEMA_VERSION));
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
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
 * Open (creating when absent, with its parent directories) the SQLite revision
 * store at `path`, or a private in-memory one for {@link SQLITE_MEMORY}.
 * Stores opened on one file in one process share a connection (the first
 * opener's options apply). Throws SchemaVersion when the file holds a schema
 * this code does not know; the driver's own error when it cannot be opened.
 */
export async function openSqliteStore(
  path: string,
  options: SqliteStoreOptions = {},
): Promise<RevisionStore> {
  if (path.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, 'SQLite store path is empty');
  const timeout = options.busyTimeoutMs ?? 10_000;
  if (path === SQLITE_MEMORY) {
    return new SqlRevisionStore(new SqliteDriver(new Connection(openDatabase(path, timeout), undefined)));
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
  return new SqlRevisionStore(new SqliteDriver(connection));
}
