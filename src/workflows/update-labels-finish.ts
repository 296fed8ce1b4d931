/**
 * The end of an `updateLabels` execution: what continue-as-new carries to
 * the next one, or, once every node has been started and settled, the
 * roll-up of the run's counts into its result, recorded in the store and
 * shown in the Temporal UI. Nothing is rolled back.
 * Workflow code: deterministic.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { RunPhase, RunStatus, type CarriedProgress, type UpdateLabelsResult } from '../contracts/messages.ts';
import { runStatus, summaryMarkdown } from './rollup.ts';
import { recordOutcome } from './run-record.ts';
import type { RunTelemetry } from './run-telemetry.ts';
import { RelabelStatus, RelabelStatusValue } from '../contracts/search-attributes.ts';
import type { UpdateRun } from './update-labels-run.ts';

/** What continue-as-new carries: `state`, marked paused only while the run is paused. */
export function carriedOn(state: CarriedProgress, paused: boolean): CarriedProgress {
  const { paused: _carried, ...rest } = state;
  return paused ? { ...rest, paused: true } : rest;
}

/**
 * Rolls the run up into its result (`success`, `partial_success` or
 * `failure`, the counts and the failure sample; an aborted run that left
 * nodes unstarted is never `success`), sets the run's status
 * search attribute, records the outcome with the run in the store and
 * shows the summary. Call only once every child has settled and the
 * failures are written.
 */
export async function finishRun(
  run: UpdateRun,
  state: CarriedProgress,
  telemetry: RunTelemetry,
  aborted?: UpdateLabelsResult['aborted'],
): Promise<UpdateLabelsResult> {
  const { input, dryRun } = run;
  run.phase = RunPhase.done;
  const c = state.counts;
  // An aborted run left nodes unstarted: it is partial at best, whatever its started nodes did.
  const status = aborted && aborted.notStarted > 0 ? (c.success > 0 ? RunStatus.partialSuccess : RunStatus.failure) : runStatus(c.success, c.failure);
  const result: UpdateLabelsResult = {
    status,
    run: state.run,
    revision: state.revision,
    site: state.site,
    dryRun,
    counts: c,
    failures: state.failures,
    ...(input.retryOf ? { retryOf: input.retryOf } : {}),
    ...(state.removal ? { removal: state.removal } : {}),
    ...(state.impact ? { impact: state.impact } : {}),
    ...(state.waves ? { waves: state.waves.count } : {}),
    ...(aborted ? { aborted } : {}),
  };
  run.result = result;
  telemetry.finished(result);
  if (run.useSearchAttributes) upsertSearchAttributes([{ key: RelabelStatus, value: dryRun ? RelabelStatusValue.dryRun : result.status }]);
  await recordOutcome(state.run, result.status);
  setCurrentDetails(summaryMarkdown(result));
  return result;
}
