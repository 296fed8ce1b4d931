/**
 * The run part of the store ({@link RunStore}), written once in portable SQL
 * over a {@link SqlDriver}. Writes take the store-wide write lock, so run
 * numbers come out consecutive across processes, as revision ids do. Targets
 * and results travel in multi-row statements of at most {@link BATCH} rows,
 * so 50,000 targets are a hundred statements, not 50,000.
 */
import { randomUUID } from 'node:crypto';
import type { CreateRunInput, NodeResultDetail, RunNodeCounts, RunNodeRow, RunNodeStatus, RunRecord, RunStore } from './run-store.ts';
import { RunNodeStatus as Status } from './run-store.ts';
import {
  assertOutcome,
  assertRunId,
  assertWorkflowId,
  isNodeName,
  mergeResults,
  validatePageQuery,
  validateRunInput,
  type MergedResult,
} from './run-validation.ts';
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
import { isUlid } from '../ulid.ts';
import { freshUlid, runNotFound } from './sql-action-store.ts';
import { sqlRunWaves } from './sql-run-waves.ts';
import { sqlRunMembers } from './sql-run-members.ts';
import { batches, valueRows } from '../sql/sql-batches.ts';

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
    startedBy: columnStringOrNull(row, 'started_by'),
    startedVia: columnStringOrNull(row, 'started_via'),
    outcome: columnStringOrNull(row, 'outcome'),
    actionId: columnStringOrNull(row, 'action_id'),
    contextMarker: columnStringOrNull(row, 'context_marker'),
    executionRunId: columnStringOrNull(row, 'execution_run_id'),
  };
}

function runNodeRow(row: SqlRow): RunNodeRow {
  const detail = columnStringOrNull(row, 'detail');
  return {
    seq: columnNumber(row, 'seq'),
    node: columnString(row, 'node'),
    status: columnString(row, 'status') as RunNodeStatus,
    written: columnNumber(row, 'written') === 1,
    detail: detail === null ? null : (JSON.parse(detail) as NodeResultDetail),
  };
}

const RUN_COLUMNS =
  'id, key, created_at, workflow_id, revision, dry_run, retry_of, target_count, started_by, started_via, outcome, action_id, context_marker, execution_run_id';

async function selectRun(s: SqlSession, t: TableNames, column: 'id' | 'key' | 'action_id', value: SqlValue): Promise<RunRecord | undefined> {
  const [row] = await s.all(`SELECT ${RUN_COLUMNS} FROM ${t.runs} WHERE ${column} = ?`, [value]);
  return row && runRecord(row);
}

/**
 * Apply one batch of merged results; throws (so the transaction rolls back)
 * when a node is not a target of the run, naming the first such node, or
 * NotFound when the run itself is absent.
 */
async function updateBatch(s: SqlSession, t: TableNames, id: number, chunk: readonly MergedResult[]): Promise<void> {
  const params: SqlValue[] = [];
  for (const r of chunk) {
    params.push(
      r.node,
      r.status,
      r.written ? 1 : 0,
      r.detail === undefined ? 0 : 1,
      r.detail ?? null,
      r.observed === undefined ? 0 : 1,
      r.observed ?? null,
      id,
    );
  }
  // VALUES columns are named column1, column2, … on both backends. The run
  // number rides in every row (column8) rather than as one constant: joined
  // on (run_id, node) from v, SQLite looks each node up in the unique index;
  // given `run_id = ?` it would scan all of the run's rows instead.
  const changed = await s.run(
    `UPDATE ${t.runNodes} AS r SET
       status = v.column2,
       written = CASE WHEN r.written = 1 OR v.column3 = 1 THEN 1 ELSE 0 END,
       detail = CASE WHEN v.column4 = 1 THEN v.column5 ELSE r.detail END,
       observed = CASE WHEN v.column6 = 1 THEN v.column7 ELSE r.observed END
     FROM (VALUES ${valueRows(chunk.length, ['TEXT', 'TEXT', 'INTEGER', 'INTEGER', 'TEXT', 'INTEGER', 'TEXT', 'INTEGER'])}) AS v
     WHERE r.run_id = v.column8 AND r.node = v.column1`,
    params,
  );
  if (changed === chunk.length) return;
  if ((await s.all(`SELECT 1 AS found FROM ${t.runs} WHERE id = ?`, [id])).length === 0) throw runNotFound(id);
  const names = chunk.map((r) => r.node);
  const known = await s.all(`SELECT node FROM ${t.runNodes} WHERE run_id = ? AND node IN (${names.map(() => '?').join(', ')})`, [id, ...names]);
  const present = new Set(known.map((row) => columnString(row, 'node')));
  const missing = names.filter((name) => !present.has(name));
  const more = missing.length > 1 ? ` (and ${missing.length - 1} more)` : '';
  throw new StoreError(StoreErrorCode.InvalidArgument, `run ${id} has no target node ${missing[0] ?? '?'}${more}`);
}

/**
 * Records a run in the open write transaction `s`: its row, the invocation
 * that starts its command audit, and its targets as queued rows in target
 * order; a run whose `key` is known already is returned as it is.
 */
async function insertRun(s: SqlSession, t: TableNames, input: CreateRunInput): Promise<RunRecord> {
  if (input.key !== undefined) {
    const existing = await selectRun(s, t, 'key', input.key);
    if (existing) return existing;
  }
  const [last] = await s.all(`SELECT COALESCE(MAX(id), 0) AS last FROM ${t.runs}`);
  const id = (last ? columnNumber(last, 'last') : 0) + 1;
  const createdAt = new Date().toISOString();
  const actionId = await freshUlid(s, t.runs, 'action_id');
  await s.run(`INSERT INTO ${t.runs} (${RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    id,
    input.key ?? null,
    createdAt,
    input.workflowId ?? null,
    input.revision ?? null,
    input.dryRun === true ? 1 : 0,
    input.retryOf ?? null,
    input.targets.length,
    input.startedBy ?? null,
    input.startedVia ?? null,
    null,
    actionId,
    input.contextMarker ?? randomUUID(),
    null,
  ]);
  // Shipyard's command audit starts with the action's invocation.
  await s.run(`INSERT INTO ${t.runCommands} (id, run_id, command, issued_by, issued_at) VALUES (?, ?, ?, ?, ?)`, [
    await freshUlid(s, t.runCommands, 'id'),
    id,
    'invoke',
    input.startedBy ?? null,
    createdAt,
  ]);
  for (const { start, chunk } of batches(input.targets)) {
    const params = chunk.flatMap((node, k): SqlValue[] => [id, start + k, node]);
    const rows = Array.from(chunk, () => `(?, ?, ?, '${Status.queued}')`).join(', ');
    await s.run(`INSERT INTO ${t.runNodes} (run_id, seq, node, status) VALUES ${rows}`, params);
  }
  const run = await selectRun(s, t, 'id', id);
  if (!run) throw new Error(`run ${id} vanished inside its own transaction`);
  return run;
}

/** The runs' own records: create, read, name the workflow, record the outcome, discard. */
function runRecords(driver: SqlDriver): Pick<RunStore, 'create' | 'get' | 'setWorkflow' | 'byActionId' | 'setOutcome' | 'discard'> {
  const t = driver.tables;
  return {
    async create(input) {
      validateRunInput(input);
      return driver.write((s) => insertRun(s, t, input));
    },

    async get(id) {
      assertRunId(id);
      const run = await driver.read((s) => selectRun(s, t, 'id', id));
      if (!run) throw runNotFound(id);
      return run;
    },

    async setWorkflow(id, workflowId) {
      assertRunId(id);
      assertWorkflowId(workflowId);
      const changed = await driver.write((s) => s.run(`UPDATE ${t.runs} SET workflow_id = ? WHERE id = ?`, [workflowId, id]));
      if (changed === 0) throw runNotFound(id);
    },

    async byActionId(actionId) {
      if (!isUlid(actionId)) return null;
      return (await driver.read((s) => selectRun(s, t, 'action_id', actionId))) ?? null;
    },

    async setOutcome(id, outcome) {
      assertRunId(id);
      assertOutcome(outcome);
      const changed = await driver.write((s) => s.run(`UPDATE ${t.runs} SET outcome = ? WHERE id = ?`, [outcome, id]));
      if (changed === 0) throw runNotFound(id);
    },

    async discard(id) {
      assertRunId(id);
      await driver.write(async (s) => {
        await s.run(`DELETE FROM ${t.runNodes} WHERE run_id = ?`, [id]);
        await s.run(`DELETE FROM ${t.runPluginSets} WHERE run_id = ?`, [id]);
        await s.run(`DELETE FROM ${t.runCommands} WHERE run_id = ?`, [id]);
        await s.run(`DELETE FROM ${t.runWaves} WHERE run_id = ?`, [id]);
        await s.run(`DELETE FROM ${t.runs} WHERE id = ?`, [id]);
      });
    },
  };
}

/** A run's node rows: results, pages, one node, counts, and settling a cancelled run. */
function runRows(driver: SqlDriver): Pick<RunStore, 'setNodeResults' | 'nodes' | 'observedState' | 'node' | 'counts' | 'cancelNodes'> {
  const t = driver.tables;
  return {
    async setNodeResults(id, updates) {
      assertRunId(id);
      const merged = mergeResults(id, updates);
      if (merged.length === 0) return;
      await driver.write(async (s) => {
        for (const { chunk } of batches(merged)) await updateBatch(s, t, id, chunk);
      });
    },

    async nodes(id, query) {
      assertRunId(id);
      const { statuses, afterSeq, offset, limit, wave } = validatePageQuery(query);
      if (statuses?.length === 0) return [];
      const where = ['run_id = ?'];
      const params: SqlValue[] = [id];
      if (wave !== undefined) {
        where.push('wave = ?');
        params.push(wave);
      }
      if (statuses) {
        where.push(`status IN (${statuses.map(() => '?').join(', ')})`);
        params.push(...statuses);
      }
      if (afterSeq !== undefined) {
        where.push('seq > ?');
        params.push(afterSeq);
      }
      const rows = await driver.read((s) =>
        s.all(`SELECT seq, node, status, written, detail FROM ${t.runNodes} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ? OFFSET ?`, [
          ...params,
          limit,
          offset,
        ]),
      );
      return rows.map(runNodeRow);
    },

    async observedState(id, node) {
      assertRunId(id);
      if (!isNodeName(node)) return null;
      const [row] = await driver.read((s) => s.all(`SELECT observed FROM ${t.runNodes} WHERE run_id = ? AND node = ?`, [id, node]));
      const text = row ? columnStringOrNull(row, 'observed') : null;
      return text === null ? null : (JSON.parse(text) as unknown);
    },

    async node(id, node) {
      assertRunId(id);
      if (!isNodeName(node)) return null;
      const [row] = await driver.read((s) => s.all(`SELECT seq, node, status, written, detail FROM ${t.runNodes} WHERE run_id = ? AND node = ?`, [id, node]));
      return row ? runNodeRow(row) : null;
    },

    async counts(id) {
      assertRunId(id);
      return driver.read(async (s) => {
        if ((await s.all(`SELECT 1 AS found FROM ${t.runs} WHERE id = ?`, [id])).length === 0) throw runNotFound(id);
        const rows = await s.all(`SELECT status, COUNT(*) AS n, SUM(written) AS w FROM ${t.runNodes} WHERE run_id = ? GROUP BY status`, [id]);
        const counts: RunNodeCounts = { total: 0, queued: 0, pending: 0, success: 0, failure: 0, cancelled: 0, written: 0 };
        for (const r of rows) {
          const n = columnNumber(r, 'n');
          counts[columnString(r, 'status') as RunNodeStatus] += n;
          counts.total += n;
          counts.written += nullableNumber(r, 'w') ?? 0;
        }
        return counts;
      });
    },

    async cancelNodes(id, detail) {
      assertRunId(id);
      let text: string;
      try {
        text = JSON.stringify(detail);
      } catch (err) {
        throw new StoreError(StoreErrorCode.InvalidArgument, `run ${id}: the detail of cancelled nodes is not JSON: ${(err as Error).message}`);
      }
      return driver.write(async (s) => {
        if ((await s.all(`SELECT 1 AS found FROM ${t.runs} WHERE id = ?`, [id])).length === 0) throw runNotFound(id);
        // One statement whatever the run's size; the status index finds the rows.
        return s.run(`UPDATE ${t.runNodes} SET status = ?, detail = ?, observed = NULL WHERE run_id = ? AND status IN (?, ?)`, [
          Status.cancelled,
          text,
          id,
          Status.queued,
          Status.pending,
        ]);
      });
    },
  };
}

/** The {@link RunStore} over `driver` (whose `read`/`write` refuse once the owning store is closed). */
export function sqlRunStore(driver: SqlDriver): RunStore {
  return { ...runRecords(driver), ...runRows(driver), ...sqlRunWaves(driver), ...sqlRunMembers(driver) };
}
