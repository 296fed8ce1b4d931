/**
 * The writes of a run that the API server refused as stale, counted from
 * the run's own node results: each node's result records how many times it
 * was read, and every read after the first followed a refused write (a
 * guard's test that failed, or a resourceVersion that moved). The API
 * server's own counters count every client's refusals (on the simulated
 * cluster, the node lifecycle controller's taint patches meet relabel's
 * writes too), so they cannot tell relabel's apart.
 */
import type { RunStore } from '../src/store/runs/run-store.ts';

/** Rows read per store page. */
const PAGE = 5000;

/** Writes of run `run` refused as stale and re-planned. */
export async function runRefusals(store: RunStore, run: number): Promise<number> {
  let refused = 0;
  for (let afterSeq = -1; ;) {
    const rows = await store.nodes(run, { afterSeq, limit: PAGE });
    for (const row of rows) refused += Math.max(0, (row.detail?.attempts ?? 1) - 1);
    const last = rows.at(-1);
    if (rows.length < PAGE || last === undefined) return refused;
    afterSeq = last.seq;
  }
}
