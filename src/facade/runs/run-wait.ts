/**
 * Waiting for an update run to close, as the CLI and the API wait: its
 * progress told as it goes (continue-as-new followed), and a warning when
 * no worker serves it, so an operator is never left with a silent hang.
 */
import type { Client } from '@temporalio/client';
import { progressQuery, type Progress } from '../../contracts/messages.ts';
import { idleTaskQueueWarning, QUERY_TIMEOUT_MS } from '../idle-task-queue.ts';

/** How often waiting for a run asks whether a worker polls its task queue. */
const IDLE_CHECK_MS = 10_000;
/** How often it asks again while no worker polls. */
const IDLE_RECHECK_MS = 2_000;

/** What waiting needs: the client, the namespace, and the facade's own status read (its report, whatever it holds, is what waiting returns). */
export interface RunWaitDeps<Report> {
  client: Client;
  namespace: string;
  status(workflowId: string, runId?: string): Promise<Report>;
}

/** How to wait: what to call with progress and warnings, how often, and until when. */
export interface RunWaitOptions {
  /** Called with the run's progress about every `everyMs` while it runs. */
  onProgress?: (p: Progress) => void;
  /** Milliseconds between progress queries (500 when absent). */
  everyMs?: number;
  /** Told when whether a worker polls the run's task queue changes: a warning, or undefined once one polls again. */
  onWarning?: (warning: string | undefined) => void;
  /** Epoch ms after which waiting stops and the status then is returned. */
  deadline?: number;
}

/**
 * Waits for a run to close, calling `onProgress` about every `everyMs`
 * while it runs (continue-as-new is followed). Every
 * {@link IDLE_CHECK_MS} (while none does, {@link IDLE_RECHECK_MS}) it asks whether a worker polls the run's task
 * queue and tells `onWarning` when that changes (a warning, or undefined
 * once a worker polls again); no progress is asked of a run no worker
 * serves. Returns the final status; with `deadline` (epoch ms), the
 * status then if the run is still going.
 */
export async function waitForRun<Report>(deps: RunWaitDeps<Report>, ref: { workflowId: string; runId?: string }, options: RunWaitOptions): Promise<Report> {
  const { client } = deps;
  const { onProgress, onWarning, deadline } = options;
  const everyMs = options.everyMs ?? 500;
  const handle = client.workflow.getHandle(ref.workflowId, ref.runId);
  const done = handle.result().then(
    () => true,
    () => true,
  );
  let finished = false;
  void done.then(() => (finished = true));
  const taskQueue = onWarning
    ? await handle.describe().then(
        (d) => d.taskQueue,
        () => undefined,
      )
    : undefined;
  let idle: string | undefined;
  let checkedAt = 0;
  while (!finished && (deadline === undefined || Date.now() < deadline)) {
    // While no worker polls, look again sooner, to say when one comes.
    if (taskQueue !== undefined && Date.now() - checkedAt >= (idle === undefined ? IDLE_CHECK_MS : IDLE_RECHECK_MS)) {
      checkedAt = Date.now();
      const now = await idleTaskQueueWarning(client, deps.namespace, taskQueue);
      if (now !== idle && !finished) onWarning?.(now);
      idle = now;
    }
    if (onProgress && idle === undefined) {
      const p = await client
        .withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(ref.workflowId).query(progressQuery))
        .catch(() => undefined);
      if (p) onProgress(p);
    }
    await Promise.race([done, new Promise((r) => setTimeout(r, everyMs))]);
  }
  return deps.status(ref.workflowId, ref.runId);
}
