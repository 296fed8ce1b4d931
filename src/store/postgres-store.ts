/**
 * The PostgreSQL revision store, for deployments running several API/worker
 * replicas against one database. Tables live in one schema (default
 * `relabel`), created on open. Every write transaction first locks the schema's
 * single `meta` row (`SELECT … FOR UPDATE`): writers from any process run one
 * after the other, and under READ COMMITTED each of their statements sees the
 * previous writer's commit, so revision ids come out consecutive and distinct.
 */
import { Pool, type PoolClient } from 'pg';
import type { RevisionStore } from './revision-store.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';
import { SqlRevisionStore } from './sql-revision-store.ts';
import type { SqlDriver, SqlRow, SqlSession, SqlValue, TableNames } from './sql-driver.ts';

/** Schema version this code writes and reads. Stored in the schema's `meta` table. */
export const POSTGRES_SCHEMA_VERSION = 6;

/** Schema used when none is given. */
export const DEFAULT_POSTGRES_SCHEMA = 'relabel';

/** Rule for schema names (kept simple so they never need quoting rules beyond `"…"`). */
export const POSTGRES_SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** Schema holding the tables; created when absent. Default {@link DEFAULT_POSTGRES_SCHEMA}. */
  readonly schema?: string;
  /** Most connections the pool opens. Default 10. */
  readonly maxConnections?: number;
}

function tableNames(schema: string): TableNames {
  const q = (table: string) => `"${schema}".${table}`;
  return {
    contents: q('contents'),
    revisions: q('revisions'),
    revisionFiles: q('revision_files'),
    revisionTags: q('revision_tags'),
    buffer: q('buffer'),
    bufferFiles: q('buffer_files'),
    runs: q('runs'),
    runNodes: q('run_nodes'),
    driftReports: q('drift_reports'),
    driftNodes: q('drift_nodes'),
    pluginSets: q('plugin_sets'),
    pluginSetPlugins: q('plugin_set_plugins'),
    pluginSetLabels: q('plugin_set_labels'),
    pluginStatus: q('plugin_status'),
    runPluginSets: q('run_plugin_sets'),
    runCommands: q('run_commands'),
  };
}

function schemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.contents (digest text PRIMARY KEY, text text NOT NULL);
CREATE TABLE ${s}.revisions (id integer PRIMARY KEY, created_at timestamptz NOT NULL, message text);
CREATE TABLE ${s}.revision_files (
  revision_id integer NOT NULL REFERENCES ${s}.revisions (id),
  bucket text NOT NULL,
  source text NOT NULL,
  digest text NOT NULL REFERENCES ${s}.contents (digest),
  PRIMARY KEY (revision_id, bucket, source)
);
CREATE INDEX revision_files_digest ON ${s}.revision_files (digest);
CREATE TABLE ${s}.revision_tags (
  revision_id integer NOT NULL REFERENCES ${s}.revisions (id),
  tag text NOT NULL,
  data text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (revision_id, tag)
);
CREATE INDEX revision_tags_tag ON ${s}.revision_tags (tag);
CREATE TABLE ${s}.buffer (bucket text PRIMARY KEY, staged_at timestamptz NOT NULL);
CREATE TABLE ${s}.buffer_files (
  bucket text NOT NULL REFERENCES ${s}.buffer (bucket),
  source text NOT NULL,
  digest text NOT NULL REFERENCES ${s}.contents (digest),
  PRIMARY KEY (bucket, source)
);
CREATE INDEX buffer_files_digest ON ${s}.buffer_files (digest);
`;
}

/** Version 2: update runs and their per-node results. */
function runsSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.runs (
  id integer PRIMARY KEY,
  key text UNIQUE,
  created_at timestamptz NOT NULL,
  workflow_id text,
  revision integer,
  dry_run integer NOT NULL,
  retry_of integer,
  target_count integer NOT NULL
);
CREATE TABLE ${s}.run_nodes (
  run_id integer NOT NULL REFERENCES ${s}.runs (id),
  seq integer NOT NULL,
  node text NOT NULL,
  status text NOT NULL,
  written integer NOT NULL DEFAULT 0,
  detail text,
  observed text,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, node)
);
CREATE INDEX run_nodes_status ON ${s}.run_nodes (run_id, status, seq);
`;
}

/** Version 3: drift reports and their per-node rows. */
function driftSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.drift_reports (
  id integer PRIMARY KEY,
  key text UNIQUE,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  site text NOT NULL,
  revision integer NOT NULL,
  workflow_id text,
  action text NOT NULL,
  counts text,
  heal text
);
CREATE INDEX drift_reports_site ON ${s}.drift_reports (site, id);
CREATE TABLE ${s}.drift_nodes (
  report_id integer NOT NULL REFERENCES ${s}.drift_reports (id),
  seq integer NOT NULL,
  node text NOT NULL,
  state text NOT NULL,
  revision integer,
  detail text,
  PRIMARY KEY (report_id, seq)
);
CREATE INDEX drift_nodes_state ON ${s}.drift_nodes (report_id, state, seq);
`;
}


/**
 * Version 4: label plugin sets, plugin status, and the set each run pinned
 * (set_id 0: the run uses no plugin set).
 */
function pluginsSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.plugin_sets (id integer PRIMARY KEY, site text NOT NULL, created_at timestamptz NOT NULL, digest text NOT NULL);
CREATE INDEX plugin_sets_site ON ${s}.plugin_sets (site, id);
CREATE TABLE ${s}.plugin_set_plugins (
  set_id integer NOT NULL REFERENCES ${s}.plugin_sets (id),
  plugin text NOT NULL,
  digest text NOT NULL,
  polled_at timestamptz NOT NULL,
  node_count integer NOT NULL,
  label_count integer NOT NULL,
  PRIMARY KEY (set_id, plugin)
);
CREATE TABLE ${s}.plugin_set_labels (
  set_id integer NOT NULL REFERENCES ${s}.plugin_sets (id),
  node text NOT NULL,
  plugin text NOT NULL,
  labels text NOT NULL,
  PRIMARY KEY (set_id, node, plugin)
);
CREATE INDEX plugin_set_labels_plugin ON ${s}.plugin_set_labels (set_id, plugin);
CREATE TABLE ${s}.plugin_status (
  site text NOT NULL,
  plugin text NOT NULL,
  polled_at timestamptz NOT NULL,
  ok integer NOT NULL,
  error text,
  last_good_at timestamptz,
  last_good_set integer,
  node_count integer,
  label_count integer,
  PRIMARY KEY (site, plugin)
);
CREATE TABLE ${s}.run_plugin_sets (run_id integer PRIMARY KEY, set_id integer NOT NULL);
`;
}

/**
 * Version 5: who started each run, how, and how it ended (the audit trail).
 * Nullable columns added in place, so runs recorded before keep working.
 */
function runAuditSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
ALTER TABLE ${s}.runs ADD COLUMN started_by text;
ALTER TABLE ${s}.runs ADD COLUMN started_via text;
ALTER TABLE ${s}.runs ADD COLUMN outcome text;
`;
}

/**
 * Version 6: each run's Shipyard action id (a ULID), context marker and
 * Temporal run id, and the commands issued against the action. Nullable
 * columns added in place: runs recorded before keep their old ids only.
 */
function runActionSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
ALTER TABLE ${s}.runs ADD COLUMN action_id text;
ALTER TABLE ${s}.runs ADD COLUMN context_marker text;
ALTER TABLE ${s}.runs ADD COLUMN execution_run_id text;
CREATE UNIQUE INDEX runs_action_id ON ${s}.runs (action_id);
CREATE TABLE ${s}.run_commands (
  id text PRIMARY KEY,
  run_id integer NOT NULL REFERENCES ${s}.runs (id),
  command text NOT NULL,
  issued_by text,
  issued_at timestamptz NOT NULL
);
CREATE INDEX run_commands_run ON ${s}.run_commands (run_id, id);
`;
}

/**
 * The steps from each schema version to the next: the SQL that turns
 * version `from` into `from + 1`. A fresh schema runs them all.
 */
const MIGRATIONS: readonly { from: number; sql: (schema: string) => string }[] = [
  { from: 0, sql: schemaSql },
  { from: 1, sql: runsSchemaSql },
  { from: 2, sql: driftSchemaSql },
  { from: 3, sql: pluginsSchemaSql },
  { from: 4, sql: runAuditSchemaSql },
  { from: 5, sql: runActionSchemaSql },
];

/** Rewrite portable `?` placeholders as PostgreSQL's `$1, $2, …`. Our SQL has no `?` in literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function session(client: PoolClient): SqlSession {
  return {
    all: async (sql, params: readonly SqlValue[] = []) =>
      (await client.query(numbered(sql), [...params])).rows as SqlRow[],
    run: async (sql, params: readonly SqlValue[] = []) =>
      (await client.query(numbered(sql), [...params])).rowCount ?? 0,
  };
}

/** Run `fn` between BEGIN and COMMIT on one pooled connection; ROLLBACK and rethrow on error. */
async function inTransaction<T>(pool: Pool, begin: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection is unusable; tell the pool to discard it.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

class PostgresDriver implements SqlDriver {
  readonly tables: TableNames;
  readonly #pool: Pool;
  readonly #lockSql: string;
  #closed = false;

  constructor(pool: Pool, schema: string) {
    this.#pool = pool;
    this.tables = tableNames(schema);
    this.#lockSql = `SELECT value FROM "${schema}".meta WHERE key = 'schema_version' FOR UPDATE`;
  }

  read<T>(fn: (s: SqlSession) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY', (c) => fn(session(c)));
  }

  write<T>(fn: (s: SqlSession) => Promise<T>): Promise<T> {
    return inTransaction(this.#pool, 'BEGIN', async (client) => {
      await client.query(this.#lockSql);
      return fn(session(client));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }
}

async function migrate(pool: Pool, schema: string): Promise<void> {
  await inTransaction(pool, 'BEGIN', async (client) => {
    // Two processes opening a fresh database at once would race on CREATE …
    // IF NOT EXISTS (it is not atomic in PostgreSQL); a transaction-scoped
    // advisory lock per schema makes the second wait and then see the tables.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`relabel-schema:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".meta (key text PRIMARY KEY, value text NOT NULL)`);
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`,
    );
    const [row] = rows;
    const found = row === undefined ? 0 : Number(row.value);
    if (!(Number.isInteger(found) && found >= 0 && found <= POSTGRES_SCHEMA_VERSION)) {
      throw new StoreError(StoreErrorCode.SchemaVersion,
        `schema "${schema}": version ${String(row?.value)} is not supported by this relabel ` +
          `(it knows version ${POSTGRES_SCHEMA_VERSION})`,
      );
    }
    for (const step of MIGRATIONS) if (step.from >= found) await client.query(step.sql(schema));
    if (!row) {
      await client.query(`INSERT INTO "${schema}".meta (key, value) VALUES ('schema_version', $1)`, [String(POSTGRES_SCHEMA_VERSION)]);
    } else if (found !== POSTGRES_SCHEMA_VERSION) {
      await client.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(POSTGRES_SCHEMA_VERSION)]);
    }
  });
}

/**
 * Open the PostgreSQL revision store at `connectionString` (a `postgres://`
 * URL as `pg` understands it), creating its schema and tables when absent.
 * Throws InvalidName for a bad schema name, SchemaVersion for a schema written
 * by an incompatible relabel, and the driver's error when the server cannot be
 * reached.
 */
export async function openPostgresStore(
  connectionString: string,
  options: PostgresStoreOptions = {},
): Promise<RevisionStore> {
  const schema = options.schema ?? DEFAULT_POSTGRES_SCHEMA;
  if (!POSTGRES_SCHEMA_PATTERN.test(schema)) {
    throw new StoreError(StoreErrorCode.InvalidName,
      `invalid PostgreSQL schema name ${JSON.stringify(schema)}: must match ${POSTGRES_SCHEMA_PATTERN.source}`,
    );
  }
  const pool = new Pool({ connectionString, max: options.maxConnections ?? 10 });
  // An idle pooled connection dropped by the server emits 'error' on the pool;
  // unhandled, that would crash the process. The next query reports the
  // outage to its caller instead.
  pool.on('error', () => undefined);
  try {
    await migrate(pool, schema);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return new SqlRevisionStore(new PostgresDriver(pool, schema));
}
