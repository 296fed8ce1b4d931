/**
 * The runs of one scenario of the join pass, read back once they have
 * ended: from the store, how each was started and what it wrote, and which
 * node any two of them wrote; from Temporal, each run's history against
 * Temporal's limits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { isStoreError, StoreErrorCode } from '../../src/store/store-error.ts';
import { MAX_RUN_PAGE, type RunRecord, type RunStore } from '../../src/store/runs/run-store.ts';
import { historyFigures, overHistoryLimits } from '../history.ts';
import { runRefusals } from '../run-refusals.ts';

/** What the pass reports of one run. */
export interface RunFigures {
  run: number;
  via: string | null;
  targets: number;
  written: number;
  /** Its writes the API server refused as stale (another client had moved the node), each re-read and re-planned. */
  refused: number;
  outcome: string | null;
  executions: number;
  /** Events of its largest execution. */
  maxEvents: number;
  children: number;
  /** Its largest payload, its children's (a sample) included. */
  largestPayload: number;
  /** When the store created it, and when its last execution recorded its last event (epoch ms: once ended, its end). */
  createdAt: number;
  lastEventAt: number;
}

/**
 * The runs numbered `first` on, up to the first number the store does not
 * have: runs are numbered without gaps, and the pass starts no run another
 * may discard.
 */
export async function runsFrom(store: RunStore, first: number): Promise<RunRecord[]> {
  const out: RunRecord[] = [];
  for (let id = first; ; id++) {
    try {
      out.push(await store.get(id));
    } catch (err) {
      if (isStoreError(err, StoreErrorCode.NotFound)) return out;
      throw err;
    }
  }
}

/** `record` once its workflow has ended, as the store then has it. */
async function ended(client: Client, store: RunStore, record: RunRecord): Promise<RunRecord> {
  let r = record;
  // A run's first execution is recorded a moment after it is created.
  for (let i = 0; (!r.workflowId || !r.executionRunId) && i < 100; i++) {
    await sleep(100);
    r = await store.get(r.id);
  }
  if (!r.workflowId || !r.executionRunId) throw new Error(`run ${r.id} has no workflow execution recorded after 10 s`);
  await client.workflow
    .getHandle(r.workflowId, r.executionRunId)
    .result()
    .catch(() => undefined);
  return store.get(r.id);
}

/** A workflow's history figures from its first execution `runId` on: executions, events of the largest, children, largest payload, when it last recorded an event. */
export async function historyOf(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<Pick<RunFigures, 'executions' | 'maxEvents' | 'children' | 'largestPayload' | 'lastEventAt'>> {
  const history = await historyFigures(client, workflowId, runId);
  return {
    executions: history.executions,
    maxEvents: history.largestExecutionEvents,
    children: history.children,
    largestPayload: history.largestPayload,
    lastEventAt: history.lastEventAt,
  };
}

/** Waits for `record`'s run to end, then reads its figures. */
export async function runFigures(client: Client, store: RunStore, record: RunRecord): Promise<RunFigures> {
  const r = await ended(client, store, record);
  const history = await historyOf(client, r.workflowId as string, r.executionRunId as string);
  const counts = await store.counts(r.id);
  return {
    run: r.id,
    via: r.startedVia,
    targets: r.targetCount,
    written: counts.written,
    refused: await runRefusals(store, r.id),
    outcome: r.outcome,
    createdAt: r.createdAt.getTime(),
    ...history,
  };
}

/** The first few runs whose history is over Temporal's limits, in words. */
export function historyProblems(figures: readonly { run: number | string; maxEvents: number; largestPayload: number }[], what = 'run'): string[] {
  return figures
    .flatMap((f) => overHistoryLimits({ largestExecutionEvents: f.maxEvents, largestPayload: f.largestPayload }).map((p) => `${what} ${f.run}: ${p}`))
    .slice(0, 5);
}

/** For each of `names` that some of `runs` wrote, the runs that wrote it (their rows say the write landed). */
export async function writers(store: RunStore, runs: readonly number[], names: ReadonlySet<string>): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const run of runs) {
    for (let afterSeq = -1; ;) {
      const rows = await store.nodes(run, { afterSeq, limit: MAX_RUN_PAGE });
      for (const row of rows) if (row.written && names.has(row.node)) out.set(row.node, [...(out.get(row.node) ?? []), run]);
      const last = rows.at(-1);
      if (rows.length < MAX_RUN_PAGE || last === undefined) break;
      afterSeq = last.seq;
    }
  }
  return out;
}
