/**
 * The run half of the store ({@link RunStore}), written once in portable SQL
 * over a {@link SqlDriver}. Writes take the store-wide write lock, so run
 * numbers come out consecutive across processes, as revision ids do.
 */
import type { NodeResultDetail, RunNodeCounts, RunNodeRow, RunNodeStatus, RunRecord, RunStore } from './run-store.ts';
import { MAX_RUN_PAGE, RunNodeStatus as Status } from './run-store.ts';
import { columnDate, columnNumber, columnString, columnStringOrNull, type SqlDriver, type SqlRow, type SqlSession, type SqlValue } from './sql-driver.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';

/** Rows per multi-row statement. */
const BATCH = 500;

/** Longest node name (a DNS-1123 subdomain). */
const MAX_NODE_NAME = 253;

const STATUSES = new Set<string>(Object.values(Status));

function nullableNumber(row: SqlRow, column: string): number | null {
  return row[column] === null || row[column] === undefined ? null : columnNumber(row, column);
}

function runRecord(row: SqlRow): RunRecord {
  return {
    id: columnNumber(row, 'id'),
    key: columnStringOrNull(row, 'key'),
    createdAt: columnDate(row, 'created_at'),
    workflowId: columnStringOrNull(row, 'workflow_id'),
    revision: nullableNumber(row, 'revision'),
    dryRun: columnNumber(row, 'dry_run') === 1,
    retryOf: nullableNumber(row, 'retry_of'),
    targetCount: columnNumber(row, 'target_count'),
  };
}

function checkTargets(targets: readonly string[]): void {
  if (targets.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, 'a run needs at least one target node');
  const seen = new Set<string>();
  for (const [i, name] of targets.entries()) {
    if (typeof name !== 'string' || name.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, `target #${i + 1} is not a node name`);
    if (name.length > MAX_NODE_NAME) throw new StoreError(StoreErrorCode.InvalidArgument, `target #${i + 1} is longer than ${MAX_NODE_NAME} characters`);
    if (seen.has(name)) throw new StoreError(StoreErrorCode.InvalidArgument, `target ${name} is listed more than once`);
    seen.add(name);
  }
}

function checkId(id: number): void {
  if (!Number.isSafeInteger(id) || id < 1) throw new StoreError(StoreErrorCode.InvalidArgument, `invalid run number ${String(id)}`);
}

async function runExists(s: SqlSession, table: string, id: number): Promise<void> {
  const rows = await s.all(`SELECT 1 AS found FROM ${table} WHERE id = ?`, [id]);
  if (rows.length === 0) throw new StoreError(StoreErrorCode.NotFound, `run ${id} not found`);
}

/** Portable multi-row `VALUES (?, …), (?, …)` for `rows` of `width` values. */
function values(rows: number, width: number): string {
  const one = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => one).join(', ');
}

/** The {@link RunStore} over `driver`; `isClosed` lets the owning store refuse calls after close. */
export function sqlRunStore(driver: SqlDriver, guard: () => void): RunStore {
  const t = driver.tables;
  const read = <T>(fn: (s: SqlSession) => Promise<T>) => (guard(), driver.read(fn));
  const write = <T>(fn: (s: SqlSession) => Promise<T>) => (guard(), driver.write(fn));

  return {
    async createRun(input) {
      checkTargets(input.targets);
      return write(async (s) => {
        if (input.key !== undefined) {
          const [existing] = await s.all(`SELECT * FROM ${t.runs} WHERE key = ?`, [input.key]);
          if (existing) return runRecord(existing);
        }
        const [last] = await s.all(`SELECT COALESCE(MAX(id), 0) AS last FROM ${t.runs}`);
        const id = (last ? columnNumber(last, 'last') : 0) + 1;
        await s.run(
          `INSERT INTO ${t.runs} (id, key, created_at, workflow_id, revision, dry_run, retry_of, target_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [id, input.key ?? null, new Date().toISOString(), input.workflowId ?? null, input.revision ?? null, input.dryRun ? 1 : 0, input.retryOf ?? null, input.targets.length],
        );
        for (let i = 0; i < input.targets.length; i += BATCH) {
          const chunk = input.targets.slice(i, i + BATCH);
          const params: SqlValue[] = chunk.flatMap((node, k) => [id, i + k, node, Status.queued]);
          await s.run(`INSERT INTO ${t.runNodes} (run_id, seq, node, status) VALUES ${values(chunk.length, 4)}`, params);
        }
        const [row] = await s.all(`SELECT * FROM ${t.runs} WHERE id = ?`, [id]);
        if (!row) throw new Error(`run ${id} vanished inside its own transaction`);
        return runRecord(row);
      });
    },

    async getRun(id) {
      checkId(id);
      return read(async (s) => {
        const [row] = await s.all(`SELECT * FROM ${t.runs} WHERE id = ?`, [id]);
        if (!row) throw new StoreError(StoreErrorCode.NotFound, `run ${id} not found`);
        return runRecord(row);
      });
    },

    async discardRun(id) {
      checkId(id);
      await write(async (s) => {
        await s.run(`DELETE FROM ${t.runNodes} WHERE run_id = ?`, [id]);
        await s.run(`DELETE FROM ${t.runs} WHERE id = ?`, [id]);
      });
    },

    async setNodeResults(id, updates) {
      checkId(id);
      for (const u of updates) {
        if (!STATUSES.has(u.status)) throw new StoreError(StoreErrorCode.InvalidArgument, `invalid node status ${JSON.stringify(u.status)}`);
      }
      if (updates.length === 0) return;
      await write(async (s) => {
        for (const u of updates) {
          const sets = ['status = ?', 'written = CASE WHEN written = 1 OR ? = 1 THEN 1 ELSE 0 END'];
          const params: SqlValue[] = [u.status, u.written ? 1 : 0];
          if (u.detail !== undefined) {
            sets.push('detail = ?');
            params.push(u.detail === null ? null : JSON.stringify(u.detail));
          }
          if (u.observed !== undefined) {
            sets.push('observed = ?');
            params.push(u.observed === null ? null : JSON.stringify(u.observed));
          }
          const changed = await s.run(`UPDATE ${t.runNodes} SET ${sets.join(', ')} WHERE run_id = ? AND node = ?`, [...params, id, u.node]);
          if (changed === 0) throw new StoreError(StoreErrorCode.InvalidArgument, `run ${id} has no target node ${u.node}`);
        }
      });
    },

    async runNodes(id, query) {
      checkId(id);
      const limit = Math.trunc(query.limit);
      if (!(limit >= 1 && limit <= MAX_RUN_PAGE)) throw new StoreError(StoreErrorCode.InvalidArgument, `limit must be 1 to ${MAX_RUN_PAGE}, not ${query.limit}`);
      const statuses = query.status === undefined ? [] : typeof query.status === 'string' ? [query.status] : [...query.status];
      const where = ['run_id = ?'];
      const params: SqlValue[] = [id];
      if (statuses.length > 0) {
        where.push(`status IN (${statuses.map(() => '?').join(', ')})`);
        params.push(...statuses);
      }
      if (query.afterSeq !== undefined) {
        where.push('seq > ?');
        params.push(query.afterSeq);
      }
      const offset = Math.max(0, Math.trunc(query.offset ?? 0));
      return read(async (s) => {
        const rows = await s.all(
          `SELECT seq, node, status, written, detail FROM ${t.runNodes} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ? OFFSET ?`,
          [...params, limit, offset],
        );
        return rows.map(
          (r): RunNodeRow => ({
            seq: columnNumber(r, 'seq'),
            node: columnString(r, 'node'),
            status: columnString(r, 'status') as RunNodeStatus,
            written: columnNumber(r, 'written') === 1,
            detail: r.detail === null || r.detail === undefined ? null : (JSON.parse(columnString(r, 'detail')) as NodeResultDetail),
          }),
        );
      });
    },

    async observedState(id, node) {
      checkId(id);
      return read(async (s) => {
        const [row] = await s.all(`SELECT observed FROM ${t.runNodes} WHERE run_id = ? AND node = ?`, [id, node]);
        const text = row ? columnStringOrNull(row, 'observed') : null;
        return text === null ? null : (JSON.parse(text) as unknown);
      });
    },

    async runCounts(id) {
      checkId(id);
      return read(async (s) => {
        await runExists(s, t.runs, id);
        const rows = await s.all(
          `SELECT status, COUNT(*) AS n, SUM(written) AS w FROM ${t.runNodes} WHERE run_id = ? GROUP BY status`,
          [id],
        );
        const counts: RunNodeCounts = { total: 0, queued: 0, pending: 0, success: 0, failure: 0, written: 0 };
        for (const r of rows) {
          const n = columnNumber(r, 'n');
          counts[columnString(r, 'status') as RunNodeStatus] = n;
          counts.total += n;
          counts.written += r.w === null ? 0 : columnNumber(r, 'w');
        }
        return counts;
      });
    },
  };
}
