/**
 * The PostgreSQL store, for deployments running several API/worker
 * replicas against one database. Tables live in one schema (default
 * `relabel`), created on open. Every write transaction first locks the schema's
 * single `meta` row (`SELECT … FOR UPDATE`): writers from any process run one
 * after the other, and under READ COMMITTED each of their statements sees the
 * previous writer's commit, so revision ids come out consecutive and distinct.
 */
import { Pool, type PoolClient } from 'pg';
import type { Store } from '../store.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';
import { sqlStore } from './sql-store.ts';
import type { SqlDriver, SqlRow, SqlSession, SqlValue, TableNames } from './sql-driver.ts';
import { META_TABLE, migrationSteps, renderSql, SCHEMA_VERSION, SqlDialect, tableNames } from './schema.ts';

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

/** Rewrite portable `?` placeholders as PostgreSQL's `$1, $2, …`. Our SQL has no `?` in literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

function session(client: PoolClient): SqlSession {
  return {
    all: async (sql, params: readonly SqlValue[] = []) => (await client.query(numbered(sql), [...params])).rows as SqlRow[],
    run: async (sql, params: readonly SqlValue[] = []) => (await client.query(numbered(sql), [...params])).rowCount ?? 0,
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
    this.tables = tableNames(SqlDialect.postgres(schema));
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
    const dialect = SqlDialect.postgres(schema);
    await client.query(renderSql(META_TABLE, dialect));
    const { rows } = await client.query<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
    const [row] = rows;
    const found = row === undefined ? 0 : Number(row.value);
    if (!(Number.isInteger(found) && found >= 0 && found <= SCHEMA_VERSION)) {
      throw new StoreError(
        StoreErrorCode.SchemaVersion,
        `schema "${schema}": version ${String(row?.value)} is not supported by this relabel ` + `(it knows version ${SCHEMA_VERSION})`,
      );
    }
    for (const sql of migrationSteps(found, dialect)) await client.query(sql);
    if (!row) {
      await client.query(`INSERT INTO "${schema}".meta (key, value) VALUES ('schema_version', $1)`, [String(SCHEMA_VERSION)]);
    } else if (found !== SCHEMA_VERSION) {
      await client.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION)]);
    }
  });
}

/**
 * Open the PostgreSQL store at `connectionString` (a `postgres://`
 * URL as `pg` understands it), creating its schema and tables when absent.
 * Throws InvalidName for a bad schema name, SchemaVersion for a schema written
 * by an incompatible relabel, and the driver's error when the server cannot be
 * reached.
 */
export async function openPostgresStore(connectionString: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const schema = options.schema ?? DEFAULT_POSTGRES_SCHEMA;
  if (!POSTGRES_SCHEMA_PATTERN.test(schema)) {
    throw new StoreError(StoreErrorCode.InvalidName, `invalid PostgreSQL schema name ${JSON.stringify(schema)}: must match ${POSTGRES_SCHEMA_PATTERN.source}`);
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
  return sqlStore(new PostgresDriver(pool, schema));
}
