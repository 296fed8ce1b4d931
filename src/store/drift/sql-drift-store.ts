/**
 * The drift part of the store ({@link DriftStore}), in portable SQL over a
 * {@link SqlDriver}, as the run half is.
 */
import { DriftState as State, emptyDriftCounts, type DriftCounts, type DriftState } from '../../core/plan/drift.ts';
import {
  DRIFT_REPORTS_KEPT,
  MAX_DRIFT_PAGE,
  type CreateDriftReportInput,
  type DriftNodeDetail,
  type DriftNodeRow,
  type DriftReportRecord,
  type DriftStore,
  type StoredDriftState,
} from './drift-store.ts';
import { assertRunId, isNodeName } from '../runs/run-validation.ts';
import {
  columnDate,
  columnNumber,
  columnString,
  columnStringOrNull,
  type SqlDriver,
  type SqlRow,
  type SqlSession,
  type SqlValue,
  type TableNames,
} from '../sql/sql-driver.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';

const STATES: ReadonlySet<string> = new Set(Object.values(State));
const COLUMNS = 'id, key, created_at, finished_at, site, revision, workflow_id, action, counts, heal';
/** Rows per multi-row INSERT (6 values a row). */
const BATCH = 500;

function invalid(message: string): StoreError {
  return new StoreError(StoreErrorCode.InvalidArgument, message);
}

function notFound(id: number): StoreError {
  return new StoreError(StoreErrorCode.NotFound, `drift report ${id} not found`);
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1000 || value.includes('\0')) {
    throw invalid(`invalid ${what} ${JSON.stringify(value)}: must be a non-empty string without NUL, at most 1000 characters`);
  }
  return value;
}

function json(value: string | null): unknown {
  return value === null ? null : JSON.parse(value);
}

/** Counts as recorded; a report of an earlier version, before `moved` and `orphaned`, had none of either. */
function countsOf(counts: DriftCounts | null): DriftCounts | null {
  return counts === null ? null : { ...emptyDriftCounts(), ...counts };
}

function report(row: SqlRow): DriftReportRecord {
  const finished = row['finished_at'];
  return {
    id: columnNumber(row, 'id'),
    key: columnStringOrNull(row, 'key'),
    createdAt: columnDate(row, 'created_at'),
    finishedAt: finished === null || finished === undefined ? null : columnDate(row, 'finished_at'),
    site: columnString(row, 'site'),
    revision: columnNumber(row, 'revision'),
    workflowId: columnStringOrNull(row, 'workflow_id'),
    action: columnString(row, 'action'),
    counts: countsOf(json(columnStringOrNull(row, 'counts')) as DriftCounts | null),
    heal: json(columnStringOrNull(row, 'heal')),
  };
}

/**
 * A row's `detail` column: its detail as JSON, led by `nodeSet` for a
 * member. The set is the first key so that one prefix match finds a set's
 * rows in both dialects (see {@link nodeSetWhere}) with no column of its own.
 */
function detailColumn(row: DriftNodeRow): string {
  return JSON.stringify(row.nodeSet !== undefined ? { nodeSet: row.nodeSet, ...row.detail } : row.detail);
}

/** The condition and parameters choosing the rows of `nodeSet`'s members: a detail of exactly `{"nodeSet":…}` or starting with it. */
function nodeSetWhere(nodeSet: string): { sql: string; params: SqlValue[] } {
  const lead = JSON.stringify({ nodeSet }).slice(0, -1);
  const escaped = lead.replace(/[\\%_]/g, (c) => `\\${c}`);
  return { sql: `(detail = ? OR detail LIKE ? ESCAPE '\\')`, params: [`${lead}}`, `${escaped},%`] };
}

function nodeRow(row: SqlRow): DriftNodeRow {
  const revision = row['revision'];
  const { nodeSet, ...detail } = (json(columnStringOrNull(row, 'detail')) ?? {}) as DriftNodeDetail & { nodeSet?: string };
  return {
    seq: columnNumber(row, 'seq'),
    node: columnString(row, 'node'),
    state: columnString(row, 'state') as DriftState,
    revision: revision === null || revision === undefined ? null : columnNumber(row, 'revision'),
    ...(typeof nodeSet === 'string' ? { nodeSet } : {}),
    detail,
  };
}

async function select(s: SqlSession, t: TableNames, where: string, params: SqlValue[]): Promise<DriftReportRecord | undefined> {
  const [row] = await s.all(`SELECT ${COLUMNS} FROM ${t.driftReports} WHERE ${where}`, params);
  return row && report(row);
}

/** Deletes the site's reports beyond the newest {@link DRIFT_REPORTS_KEPT} (at most 100 at a time). */
async function prune(s: SqlSession, t: TableNames, site: string): Promise<void> {
  const old = await s.all(`SELECT id FROM ${t.driftReports} WHERE site = ? ORDER BY id DESC LIMIT 100 OFFSET ?`, [site, DRIFT_REPORTS_KEPT]);
  const ids = old.map((r) => columnNumber(r, 'id'));
  if (ids.length === 0) return;
  const marks = ids.map(() => '?').join(', ');
  await s.run(`DELETE FROM ${t.driftNodes} WHERE report_id IN (${marks})`, ids);
  await s.run(`DELETE FROM ${t.driftReports} WHERE id IN (${marks})`, ids);
}

/**
 * Creates a report in the open write transaction `s`, or, for a `key` seen
 * before, empties that report and returns it (a retried detection writes its
 * nodes again), then forgets the site's oldest reports.
 */
async function createReport(s: SqlSession, t: TableNames, input: CreateDriftReportInput): Promise<DriftReportRecord> {
  if (input.key !== undefined) {
    const existing = await select(s, t, 'key = ?', [input.key]);
    if (existing) {
      await s.run(`DELETE FROM ${t.driftNodes} WHERE report_id = ?`, [existing.id]);
      await s.run(`UPDATE ${t.driftReports} SET counts = NULL, finished_at = NULL, heal = NULL WHERE id = ?`, [existing.id]);
      return { ...existing, counts: null, finishedAt: null, heal: null };
    }
  }
  const [last] = await s.all(`SELECT COALESCE(MAX(id), 0) AS last FROM ${t.driftReports}`);
  const id = (last ? columnNumber(last, 'last') : 0) + 1;
  await s.run(`INSERT INTO ${t.driftReports} (id, key, created_at, site, revision, workflow_id, action) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
    id,
    input.key ?? null,
    new Date().toISOString(),
    input.site,
    input.revision,
    input.workflowId ?? null,
    input.action,
  ]);
  await prune(s, t, input.site);
  const created = await select(s, t, 'id = ?', [id]);
  if (!created) throw new Error(`drift report ${id} vanished inside its own transaction`);
  return created;
}

/** The {@link DriftStore} over `driver`. */
export function sqlDriftStore(driver: SqlDriver): DriftStore {
  const t = driver.tables;
  const write = async (id: number, sql: string, params: SqlValue[]) => {
    assertRunId(id, 'drift report number');
    const changed = await driver.write((s) => s.run(sql, params));
    if (changed === 0) throw notFound(id);
  };
  return {
    async createReport(input) {
      if (input.key !== undefined) text(input.key, 'drift report key');
      text(input.site, 'site');
      if (input.workflowId !== undefined) text(input.workflowId, 'workflow ID');
      text(input.action, 'action');
      assertRunId(input.revision, 'revision');
      return driver.write((s) => createReport(s, t, input));
    },

    async addNodes(id, rows) {
      assertRunId(id, 'drift report number');
      for (const r of rows) {
        if (!isNodeName(r.node)) throw invalid(`invalid node name ${JSON.stringify(r.node)}`);
        if (!STATES.has(r.state)) throw invalid(`invalid drift state ${JSON.stringify(r.state)}: must be one of ${[...STATES].join(', ')}`);
        if (!Number.isSafeInteger(r.seq) || r.seq < 0) throw invalid(`invalid seq ${String(r.seq)}`);
      }
      if (rows.length === 0) return;
      await driver.write(async (s) => {
        if ((await s.all(`SELECT 1 AS found FROM ${t.driftReports} WHERE id = ?`, [id])).length === 0) throw notFound(id);
        for (let start = 0; start < rows.length; start += BATCH) {
          const chunk = rows.slice(start, start + BATCH);
          const params = chunk.flatMap((r): SqlValue[] => [id, r.seq, r.node, r.state, r.revision, detailColumn(r)]);
          await s.run(
            `INSERT INTO ${t.driftNodes} (report_id, seq, node, state, revision, detail) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
            params,
          );
        }
      });
    },

    async finishReport(id, counts) {
      await write(id, `UPDATE ${t.driftReports} SET counts = ?, finished_at = ? WHERE id = ?`, [JSON.stringify(counts), new Date().toISOString(), id]);
    },

    async setHeal(id, heal) {
      await write(id, `UPDATE ${t.driftReports} SET heal = ? WHERE id = ?`, [JSON.stringify(heal ?? null), id]);
    },

    async getReport(id) {
      assertRunId(id, 'drift report number');
      const found = await driver.read((s) => select(s, t, 'id = ?', [id]));
      if (!found) throw notFound(id);
      return found;
    },

    async latestReport(site) {
      if (site !== undefined) text(site, 'site');
      const where = site === undefined ? 'finished_at IS NOT NULL' : 'finished_at IS NOT NULL AND site = ?';
      return (await driver.read((s) => select(s, t, `${where} ORDER BY id DESC LIMIT 1`, site === undefined ? [] : [site]))) ?? null;
    },

    async nodes(id, query) {
      assertRunId(id, 'drift report number');
      const { limit, offset = 0, afterSeq, states, revision } = query;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DRIFT_PAGE) throw invalid(`invalid limit ${String(limit)}: must be 1 to ${MAX_DRIFT_PAGE}`);
      if (!Number.isSafeInteger(offset) || offset < 0) throw invalid(`invalid offset ${String(offset)}: must be a whole number ≥ 0`);
      if (states?.length === 0) return [];
      const where = ['report_id = ?'];
      const params: SqlValue[] = [id];
      if (states) {
        for (const state of states) if (!STATES.has(state)) throw invalid(`invalid drift state ${JSON.stringify(state)}`);
        where.push(`state IN (${states.map(() => '?').join(', ')})`);
        params.push(...states);
      }
      if (revision !== undefined) {
        where.push('revision = ?');
        params.push(revision);
      }
      if (afterSeq !== undefined) {
        where.push('seq > ?');
        params.push(afterSeq);
      }
      if (query.nodeSet !== undefined) {
        const member = nodeSetWhere(text(query.nodeSet, 'node set'));
        where.push(member.sql);
        params.push(...member.params);
      }
      const rows = await driver.read((s) =>
        s.all(`SELECT seq, node, state, revision, detail FROM ${t.driftNodes} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ? OFFSET ?`, [
          ...params,
          limit,
          offset,
        ]),
      );
      return rows.map(nodeRow);
    },

    countNodes: (id, query = {}) => countRows(driver, t, id, query.nodeSet),
  };
}

/** {@link DriftStore.countNodes}: one grouped count of the report's rows (of `nodeSet`'s members). */
async function countRows(driver: SqlDriver, t: TableNames, id: number, nodeSet: string | undefined): Promise<Record<StoredDriftState, number>> {
  assertRunId(id, 'drift report number');
  const member = nodeSet !== undefined ? nodeSetWhere(text(nodeSet, 'node set')) : undefined;
  const rows = await driver.read((s) =>
    s.all(`SELECT state, COUNT(*) AS n FROM ${t.driftNodes} WHERE report_id = ?${member ? ` AND ${member.sql}` : ''} GROUP BY state`, [
      id,
      ...(member?.params ?? []),
    ]),
  );
  const counts: Record<StoredDriftState, number> = { drifted: 0, moved: 0, pending: 0, unmanaged: 0, missing: 0, orphaned: 0 };
  for (const row of rows) {
    const state = columnString(row, 'state');
    if (state in counts) counts[state as StoredDriftState] = Number(row['n']);
  }
  return counts;
}
