/**
 * The window of `updateLabels`: one `relabelNode` child per pending node of
 * the run, read from the store a page at a time, at most `concurrency`
 * running at once, until every node has started or this execution has
 * started enough children (or grown enough history) to continue as new.
 * Workflow code: deterministic; which children start, and when, is part of
 * every recorded history.
 */
import { CancellationScope, ParentClosePolicy, executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { CarriedProgress, NodeError } from '../contracts/messages.ts';
import { failureInfo } from './failure.ts';
import { relabelNode } from './relabel-node.ts';
import { sampleFailure } from './rollup.ts';
import type { RunTelemetry } from './run-telemetry.ts';
import { nodeSearchAttributes } from '../contracts/search-attributes.ts';
import type { UpdateRun } from './update-labels-run.ts';

/** Children started in one workflow execution before it continues as new. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER = 2500;

/**
 * History an execution may reach before it continues as new: below the
 * server's warning (10,240 events) and far below its hard limit (51,200
 * events, 50 MB). The server's own suggestion comes at about 4,000 events,
 * which would cost a drained window every 1,000 children.
 */
export const MAX_HISTORY_EVENTS = 9000;
/** History size (bytes) an execution may reach before it continues as new; see {@link MAX_HISTORY_EVENTS}. */
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;

/** Pending nodes fetched from the store at a time. */
const PAGE_SIZE = 500;

/** Longest failure message kept (the store and payloads stay bounded). */
const MAX_MESSAGE = 1000;

const { pendingNodes } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
});

/** How the window starts and reports its children. */
export interface WindowOptions {
  /** Whether the run is under the patch that starts children out of reach of a stop. */
  settles: boolean;
  /** The run's reporter of node outcomes. */
  telemetry: RunTelemetry;
  /** A run in waves: the window covers this wave's nodes only (from 0), and the run has started every node only after the last. */
  wave?: { index: number; last: boolean };
  /** The plan left no node pending: nothing to read or start. */
  empty?: boolean;
}

/** The reason a child failed: the innermost ApplicationFailure under the child and activity wrappers. */
function childFailure(err: unknown): NodeError {
  const { type, message } = failureInfo(err);
  return { type, message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message };
}

/** Whether this execution's history is large enough to continue as new. */
function historyFull(): boolean {
  // A fresh workflowInfo() each time: the copy taken at start never changes.
  const info = workflowInfo();
  return info.historyLength >= MAX_HISTORY_EVENTS || info.historySize >= MAX_HISTORY_BYTES;
}

/**
 * Starts the `relabelNode` child of `node` without waiting for it; its
 * outcome moves the counts, the failure sample and the failure buffer, and
 * frees its place in the window. Under `settles`, the child starts in
 * `shielded`, a scope a stop does not cancel.
 */
function startNode(run: UpdateRun, state: CarriedProgress, node: string, { telemetry, wave }: WindowOptions, shielded?: CancellationScope): void {
  const { workflowId } = workflowInfo();
  const inWave = wave && state.waves ? ` (wave ${wave.index + 1} of ${state.waves.count})` : '';
  const child = () =>
    executeChild(relabelNode, {
      workflowId: `${workflowId}/${state.run}/${node}`,
      args: [{ run: state.run, node, revision: state.revision, searchAttributes: run.useSearchAttributes }],
      staticSummary: `Relabel ${node} at revision ${state.revision}${inWave}`,
      staticDetails: `Run ${state.run} of ${workflowId}: brings node **${node}** to revision ${state.revision} of site ${state.site}.`,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      ...(run.useSearchAttributes ? { typedSearchAttributes: nodeSearchAttributes(node, state.revision) } : {}),
    });
  const settled = () => {
    run.running.delete(node);
    run.showProgress();
  };
  // One handler pair, no `finally`: every promise a workflow makes costs the
  // SDK a captured stack, and this one runs per node.
  void (shielded ? shielded.run(child) : child()).then(
    (r) => {
      state.counts.success++;
      if (r.written) state.counts.written++;
      telemetry.settled(r.written);
      settled();
    },
    (err: unknown) => {
      const failure = { node, error: childFailure(err) };
      state.counts.failure++;
      sampleFailure(state.failures, failure);
      run.unrecorded.push(failure);
      telemetry.failed(failure);
      settled();
    },
  );
}

/**
 * Runs the window from `state.cursor` on, then waits for every child it
 * started and writes the buffered failures. Returns whether pending nodes
 * remain for a continued execution: true once this execution has started
 * `input.continueAsNewAfter` children or its history is full. A dry run
 * starts none, and an `empty` window reads nothing. A paused run starts no
 * child until it is unpaused.
 */
export async function runWindow(run: UpdateRun, state: CarriedProgress, options: WindowOptions): Promise<boolean> {
  const limit = run.input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  // Out of reach of a stop, a started node finishes: its row then says what
  // was written. One such scope serves every child this window starts.
  const shielded = options.settles ? new CancellationScope({ cancellable: false }) : undefined;
  const roomFor = () => !run.control.paused && run.running.size < state.concurrency;
  let launched = 0;
  let more = !run.dryRun && options.empty !== true;
  while (more) {
    const { wave } = options;
    const page = await pendingNodes({ run: state.run, afterSeq: state.cursor, limit: PAGE_SIZE, ...(wave ? { wave: wave.index } : {}) });
    more = page.length === PAGE_SIZE;
    for (const { seq, node } of page) {
      if (launched >= limit || historyFull()) {
        more = true;
        break;
      }
      // Waits only for a place in the window (or a flush of the failures);
      // with room now, none of the promises a wait makes.
      if (!roomFor() || run.flushDue()) await run.waitFor(roomFor);
      launched++;
      state.cursor = seq;
      run.running.add(node);
      run.showProgress();
      startNode(run, state, node, options, shielded);
    }
    if (launched >= limit || historyFull()) break;
  }
  run.started = !more && (options.wave?.last ?? true);
  await run.waitFor(() => run.running.size === 0);
  await run.flush();
  return more;
}
