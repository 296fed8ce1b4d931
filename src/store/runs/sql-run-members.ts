/**
 * Targets a run gains while it is planned: the members of the node sets it
 * targets, known only once the planner has read the cluster. Appended after
 * the run's last row, in one transaction, names it already has skipped.
 */
import type { RunStore } from './run-store.ts';
import { RunNodeStatus } from './run-store.ts';
import { assertRunId, invalid, isNodeName } from './run-validation.ts';
import { batches } from '../sql/sql-batches.ts';
import { columnNumber, columnString, type SqlDriver, type SqlValue } from '../sql/sql-driver.ts';
import { runNotFound } from './sql-action-store.ts';

/** The SQL of {@link RunStore.addNodes}. */
export function sqlRunMembers(driver: SqlDriver): Pick<RunStore, 'addNodes'> {
  const t = driver.tables;
  return {
    async addNodes(id, nodes) {
      assertRunId(id);
      const seen = new Set<string>();
      for (const [i, node] of nodes.entries()) {
        if (!isNodeName(node)) throw invalid(`node #${i + 1} to add to run ${id} is not a node name`);
        if (seen.has(node)) throw invalid(`node ${node} is added to run ${id} more than once`);
        seen.add(node);
      }
      return driver.write(async (s) => {
        const [run] = await s.all(`SELECT id FROM ${t.runs} WHERE id = ?`, [id]);
        if (!run) throw runNotFound(id);
        const fresh: string[] = [];
        for (const { chunk } of batches(nodes)) {
          const rows = await s.all(`SELECT node FROM ${t.runNodes} WHERE run_id = ? AND node IN (${chunk.map(() => '?').join(', ')})`, [id, ...chunk]);
          const present = new Set(rows.map((row) => columnString(row, 'node')));
          fresh.push(...chunk.filter((node) => !present.has(node)));
        }
        if (fresh.length === 0) return 0;
        const [last] = await s.all(`SELECT COALESCE(MAX(seq), -1) AS last FROM ${t.runNodes} WHERE run_id = ?`, [id]);
        const first = (last ? columnNumber(last, 'last') : -1) + 1;
        for (const { start, chunk } of batches(fresh)) {
          const params = chunk.flatMap((node, k): SqlValue[] => [id, first + start + k, node]);
          const rows = Array.from(chunk, () => `(?, ?, ?, '${RunNodeStatus.queued}')`).join(', ');
          await s.run(`INSERT INTO ${t.runNodes} (run_id, seq, node, status) VALUES ${rows}`, params);
        }
        await s.run(`UPDATE ${t.runs} SET target_count = target_count + ? WHERE id = ?`, [fresh.length, id]);
        return fresh.length;
      });
    },
  };
}
