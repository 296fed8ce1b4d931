/**
 * `updateLabels`: the Airship update_labels action as a durable workflow,
 * in three steps, each in its own module:
 *
 * 1. resolve and plan (`update-labels-plan.ts`): resolve the revision,
 *    reject what must be rejected, plan every target in bulk (one read of
 *    the nodes, every plan computed in the worker, unchanged nodes settled
 *    without a child);
 * 2. window (`update-labels-window.ts`): one `relabelNode` child per node
 *    with something to change, in a bounded sliding window, continuing as
 *    new well before the history grows large;
 * 3. finish (`update-labels-finish.ts`): roll the counts up into the
 *    result and record it.
 *
 * A run in waves (`update-labels-waves.ts`) runs the window once per wave,
 * with gates between waves (health, approval, a halt on failures).
 *
 * The state they share (progress, pause, failure buffer) is an
 * `UpdateRun` (`update-labels-run.ts`). Never rolls back; never tags the
 * revision. Bounded by design: targets and per-node results live in the
 * revision store under the run number; the workflow keeps counts, a capped
 * failure sample and a cursor.
 */
import { continueAsNew, isCancellation, patched, setCurrentDetails } from '@temporalio/workflow';
import { RunPhase, type UpdateLabelsInput, type UpdateLabelsResult } from '../contracts/messages.ts';
import { runTelemetry } from './run-telemetry.ts';
import { settleCancelled, SETTLE_CANCELLED_PATCH } from './run-control.ts';
import { carriedOn, finishRun } from './update-labels-finish.ts';
import { resolveAndPlan } from './update-labels-plan.ts';
import { UpdateRun } from './update-labels-run.ts';
import { runWindow } from './update-labels-window.ts';
import { runWaves } from './update-labels-waves.ts';

/** The patch under which a run whose plan left nothing to change skips its window. */
export const SKIP_EMPTY_WINDOW_PATCH = 'skip-empty-window';

/**
 * Applies a revision's labels to the run's targets. Rejects (non-retryable
 * ApplicationFailure, nothing written) on invalid targets
 * (InvalidTargets), no committed revision (NoCommittedRevision), an
 * unknown revision (RevisionNotFound), no revision that took part in a site
 * action (NoSiteActionRevision) and invalid documents
 * (DocumentValidationFailed, every error listed) and a run the mass-removal
 * brake stops (MassRemovalRefused: it removes more of the owned labels than
 * the policy allows, and `allowMassRemoval` is not set; see `planRun`).
 * Otherwise completes with
 * `success`, `partial_success` or `failure`; every node's outcome is in the
 * store under the run number.
 *
 * The `control` Update pauses it (no new node starts; running ones finish)
 * and unpauses it; a paused run stays paused across continue-as-new. At
 * the gates of a run in waves it approves, resumes a halted run, or aborts
 * (the nodes not started are settled as such; the run ends partial).
 * Cancelled (stopped), it lets the running nodes finish and settles every
 * other node as `cancelled` (NotStarted) before it ends cancelled: nodes
 * already relabelled stay relabelled.
 */
export async function updateLabels(input: UpdateLabelsInput): Promise<UpdateLabelsResult> {
  const settles = patched(SETTLE_CANCELLED_PATCH);
  const run = new UpdateRun(input);
  run.listen();
  try {
    return await apply(run, settles);
  } catch (err) {
    if (settles && isCancellation(err) && run.runNumber !== undefined) {
      setCurrentDetails(`**cancelled**: run ${run.runNumber} lets its ${run.running.size} running node(s) finish and settles the nodes it did not start`);
      await settleCancelled(
        run.runNumber,
        () => run.running.size === 0,
        () => run.flush(),
      );
    }
    throw err;
  }
}

/** The run's three steps: plan (unless continued), window, then continue as new or finish. */
async function apply(run: UpdateRun, settles: boolean): Promise<UpdateLabelsResult> {
  const { plan, state } = run.carried ? { plan: undefined, state: run.carried } : await resolveAndPlan(run);
  const telemetry = runTelemetry({ run: state.run, revision: state.revision, site: state.site, dryRun: run.dryRun });
  if (plan) telemetry.planned(plan);
  run.phase = RunPhase.applying;
  run.showProgress();

  // A plan that left no node to change needs no read of pending nodes (runs started before this patch made one).
  const empty = plan !== undefined && plan.toChange === 0 && !run.dryRun && !state.waves && patched(SKIP_EMPTY_WINDOW_PATCH);
  const options = { settles, telemetry };
  const end = state.waves ? await runWaves(run, state, state.waves, options) : { more: await runWindow(run, state, { ...options, empty }) };
  if (end.more) await continueAsNew<typeof updateLabels>({ ...run.input, carried: carriedOn(state, run.control.paused) });
  return await finishRun(run, state, telemetry, end.aborted);
}
