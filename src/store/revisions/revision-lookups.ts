/**
 * Lookups in the revision tables inside an open session, shared by the
 * store's methods: the newest revision id, and a missing revision's
 * NotFound, which names the newest one.
 */
import { columnNumber, type SqlSession, type TableNames } from '../sql/sql-driver.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';

/** The newest revision id, 0 when none has been committed. */
export async function lastRevisionId(s: SqlSession, t: TableNames): Promise<number> {
  const [row] = await s.all(`SELECT COALESCE(MAX(id), 0) AS last FROM ${t.revisions}`);
  return row ? columnNumber(row, 'last') : 0;
}

/** NotFound for revision `id`, naming the latest one (or that none has been committed yet). */
export async function notFound(s: SqlSession, t: TableNames, id: number): Promise<StoreError> {
  const last = await lastRevisionId(s, t);
  const hint = last === 0 ? 'no revision has been committed yet' : `the latest is ${last}`;
  return new StoreError(StoreErrorCode.NotFound, `revision ${id} not found (${hint})`);
}

/** Throws {@link notFound} unless revision `id` exists. */
export async function assertRevisionExists(s: SqlSession, t: TableNames, id: number): Promise<void> {
  const rows = await s.all(`SELECT 1 AS found FROM ${t.revisions} WHERE id = ?`, [id]);
  if (rows.length === 0) throw await notFound(s, t, id);
}
