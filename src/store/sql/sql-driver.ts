/**
 * The narrow seam between the store's parts (each written once, in its
 * sql-*-store.ts module) and a database backend. A backend supplies
 * transactions and table names; the SQL itself is portable between SQLite and
 * PostgreSQL (`?` placeholders, which the PostgreSQL driver renumbers).
 */
import { StoreError, StoreErrorCode } from '../store-error.ts';

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | null;

/** One result row, keyed by column name. */
export type SqlRow = Readonly<Record<string, unknown>>;

/** Statements run inside one transaction. */
export interface SqlSession {
  /** Run a query and return its rows. */
  all(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Run a statement and return the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

/** Fully qualified names of the store's tables, ready to splice into SQL. */
export interface TableNames {
  readonly contents: string;
  readonly revisions: string;
  readonly revisionFiles: string;
  readonly revisionTags: string;
  readonly buffer: string;
  readonly bufferFiles: string;
  readonly runs: string;
  readonly runNodes: string;
  // Schema v3: drift reports.
  readonly driftReports: string;
  readonly driftNodes: string;
  // Schema v4: label plugins.
  readonly pluginSets: string;
  readonly pluginSetPlugins: string;
  readonly pluginSetLabels: string;
  readonly pluginStatus: string;
  readonly runPluginSets: string;
  // Schema v6: commands issued against a run's action.
  readonly runCommands: string;
  /** Each run's waves (schema version 7). */
  readonly runWaves: string;
  /** Each revision's validated design (schema version 8). */
  readonly revisionDesigns: string;
  readonly fleetSites: string;
}

/** A backend: transactions over one database. */
export interface SqlDriver {
  /** Table names for this database (schema-qualified where the backend has schemas). */
  readonly tables: TableNames;
  /**
   * Run `fn` in a read-only transaction seeing one consistent snapshot.
   * Commits on success, rolls back when `fn` throws, and rethrows.
   */
  read<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Run `fn` in a write transaction that holds the store-wide write lock from
   * its start, so writers (in any process) run one after the other and each
   * sees every earlier writer's changes. All-or-nothing.
   */
  write<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /** Release connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * `driver`, refusing transactions once closed: after {@link SqlDriver.close}
 * (which stays idempotent) `read` and `write` reject with Closed instead of
 * reaching the released database. Shared by the parts of one store, so
 * closing the store closes them all.
 */
export function closableDriver(driver: SqlDriver): SqlDriver {
  let closed = false;
  const refuse = () => Promise.reject(new StoreError(StoreErrorCode.Closed, 'the revision store is closed'));
  return {
    tables: driver.tables,
    read: (fn) => (closed ? refuse() : driver.read(fn)),
    write: (fn) => (closed ? refuse() : driver.write(fn)),
    async close() {
      if (closed) return;
      closed = true;
      await driver.close();
    },
  };
}

/** Read a column as a number (drivers return integers as number, bigint or numeric text). */
export function columnNumber(row: SqlRow, column: string): number {
  const value = row[column];
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`column ${column}: expected an integer, got ${String(value)}`);
  return n;
}

/** Read a column as a string. */
export function columnString(row: SqlRow, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new Error(`column ${column}: expected text, got ${typeof value}`);
  return value;
}

/** Read a nullable text column. */
export function columnStringOrNull(row: SqlRow, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : columnString(row, column);
}

/** Read a timestamp column (a Date from PostgreSQL, ISO-8601 text from SQLite). */
export function columnDate(row: SqlRow, column: string): Date {
  const value = row[column];
  const date = value instanceof Date ? value : new Date(String(value));
  if (Number.isNaN(date.getTime())) throw new Error(`column ${column}: expected a timestamp, got ${String(value)}`);
  return date;
}
