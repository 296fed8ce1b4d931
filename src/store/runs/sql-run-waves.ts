/**
 * A run's waves in SQL: the `run_waves` rows (index and name) and each
 * node's `wave` in `run_nodes`, written in one transaction; pages of waves
 * with their nodes counted by status, from the `(run_id, wave, status)`
 * index.
 */
import type { RunStore, RunWave } from './run-store.ts';
import { MAX_WAVE_PAGE, RunNodeStatus } from './run-store.ts';
import { assertRunId, invalid } from './run-validation.ts';
import { batches, valueRows } from '../sql/sql-batches.ts';
import { columnNumber, columnString, type SqlDriver, type SqlValue } from '../sql/sql-driver.ts';
import { runNotFound } from './sql-action-store.ts';

/** Longest wave name. */
const MAX_WAVE_NAME = 200;

function checkWaves(id: number, waves: readonly { name: string; nodes: readonly string[] }[]): { node: string; wave: number }[] {
  const seen = new Map<string, number>();
  const rows: { node: string; wave: number }[] = [];
  waves.forEach(({ name, nodes }, wave) => {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_WAVE_NAME)
      throw invalid(`run ${id}: wave ${wave} needs a name of 1 to ${MAX_WAVE_NAME} characters`);
    for (const node of nodes) {
      const other = seen.get(node);
      if (other !== undefined) throw invalid(`run ${id}: node ${node.slice(0, 253)} is in waves ${other} and ${wave}`);
      seen.set(node, wave);
      rows.push({ node, wave });
    }
  });
  return rows;
}

/** The wave half of the run store over `driver`. */
export function sqlRunWaves(driver: SqlDriver): Pick<RunStore, 'setWaves' | 'waves'> {
  const t = driver.tables;
  return {
    async setWaves(id, waves) {
      assertRunId(id);
      const rows = checkWaves(id, waves);
      await driver.write(async (s) => {
        if ((await s.all(`SELECT 1 AS found FROM ${t.runs} WHERE id = ?`, [id])).length === 0) throw runNotFound(id);
        await s.run(`DELETE FROM ${t.runWaves} WHERE run_id = ?`, [id]);
        await s.run(`UPDATE ${t.runNodes} SET wave = NULL WHERE run_id = ? AND wave IS NOT NULL`, [id]);
        for (const { start, chunk } of batches(waves)) {
          const params: SqlValue[] = chunk.flatMap((w, k) => [id, start + k, w.name]);
          await s.run(`INSERT INTO ${t.runWaves} (run_id, idx, name) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}`, params);
        }
        for (const { chunk } of batches(rows)) {
          const params: SqlValue[] = chunk.flatMap((r) => [r.node, r.wave, id]);
          const changed = await s.run(
            `UPDATE ${t.runNodes} AS r SET wave = v.column2
             FROM (VALUES ${valueRows(chunk.length, ['TEXT', 'INTEGER', 'INTEGER'])}) AS v
             WHERE r.run_id = v.column3 AND r.node = v.column1`,
            params,
          );
          if (changed !== chunk.length) throw invalid(`run ${id}: ${chunk.length - changed} node(s) of its waves are not targets of the run`);
        }
      });
    },

    async waves(id, { afterIndex = -1, limit }) {
      assertRunId(id);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_WAVE_PAGE)
        throw invalid(`limit must be an integer from 1 to ${MAX_WAVE_PAGE}, not ${String(limit)}`);
      if (!Number.isSafeInteger(afterIndex)) throw invalid(`afterIndex must be an integer, not ${String(afterIndex)}`);
      return driver.read(async (s) => {
        const names = await s.all(`SELECT idx, name FROM ${t.runWaves} WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?`, [id, afterIndex, limit]);
        if (names.length === 0) return [];
        const waves = new Map<number, RunWave>();
        for (const row of names) {
          const index = columnNumber(row, 'idx');
          waves.set(index, { index, name: columnString(row, 'name'), nodes: 0, success: 0, failure: 0, cancelled: 0, pending: 0 });
        }
        const last = columnNumber(names.at(-1) ?? {}, 'idx');
        const counts = await s.all(`SELECT wave, status, COUNT(*) AS n FROM ${t.runNodes} WHERE run_id = ? AND wave > ? AND wave <= ? GROUP BY wave, status`, [
          id,
          afterIndex,
          last,
        ]);
        for (const row of counts) {
          const wave = waves.get(columnNumber(row, 'wave'));
          if (!wave) continue;
          const n = columnNumber(row, 'n');
          const status = columnString(row, 'status');
          wave.nodes += n;
          if (status === RunNodeStatus.success || status === RunNodeStatus.failure || status === RunNodeStatus.cancelled) wave[status] += n;
          else wave.pending += n;
        }
        return [...waves.values()];
      });
    },
  };
}
