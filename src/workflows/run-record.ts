/**
 * What an update run records about itself in the store, beside its nodes:
 * how it ended (its status, or `rejected`), and who started a run that a
 * Temporal Schedule started. Workflow code: deterministic, its one
 * activity behind {@link RECORD_OUTCOME_PATCH}, local under
 * {@link LOCAL_BOOKKEEPING_PATCH}.
 */
import { ApplicationFailure, patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { runAudit, StartedVia, type RunAudit } from '../core/plan/run-audit.ts';
import type { Activities } from '../activities/index.ts';
import { rejectionOf } from './failure.ts';
import type { RunStatus } from '../contracts/messages.ts';
import { TemporalScheduledById } from '../contracts/search-attributes.ts';

/**
 * The patch under which a run records how it ended in the store (its
 * status, or `rejected`): runs started before it replay without that step.
 */
export const RECORD_OUTCOME_PATCH = 'record-run-outcome';

/**
 * The patch under which a run's bookkeeping in the store (resolving its
 * revision, recording how it ended) runs in local activities: a store
 * access inside the workflow task, not a round trip through the server.
 * Runs started before it replay with the activities.
 */
export const LOCAL_BOOKKEEPING_PATCH = 'local-bookkeeping';

const timeouts = { startToCloseTimeout: '60s', retry: { maximumInterval: '10s' } } as const;
const remote = proxyActivities<Activities>(timeouts);
const local = proxyLocalActivities<Activities>(timeouts);

/** The store bookkeeping activities a run calls (`resolveRevision`, `setRunOutcome`): local under {@link LOCAL_BOOKKEEPING_PATCH}. */
export function bookkeeping(): typeof remote {
  return patched(LOCAL_BOOKKEEPING_PATCH) ? local : remote;
}

/** Records `outcome` for `run`. */
function setRunOutcome(input: { run: number; outcome: RunStatus | 'rejected' }): Promise<void> {
  return bookkeeping().setRunOutcome(input);
}

/** Records that `run` ended with `status` (runs started before {@link RECORD_OUTCOME_PATCH} do not). */
export async function recordOutcome(run: number, status: RunStatus): Promise<void> {
  if (patched(RECORD_OUTCOME_PATCH)) await setRunOutcome({ run, outcome: status });
}

/**
 * Runs a rejection-checking activity so that its non-retryable failure
 * becomes the run's own failure, with the public failure type on top
 * (not buried under an ActivityFailure).
 */
async function rejecting<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw rejectionOf(err) ?? err;
  }
}

/**
 * {@link rejecting}, and when the call rejects the run (a non-retryable
 * failure) and the run's number is known, records the run's outcome as
 * `rejected` first.
 */
export async function rejectingRun<T>(run: number | undefined, call: Promise<T>): Promise<T> {
  try {
    return await rejecting(call);
  } catch (err) {
    if (run !== undefined && err instanceof ApplicationFailure && err.nonRetryable && patched(RECORD_OUTCOME_PATCH)) {
      await setRunOutcome({ run, outcome: 'rejected' });
    }
    throw err;
  }
}

/** Who started a run that a Temporal Schedule started: the schedule's ID, via `schedule`; undefined for any other run. */
export function scheduledAudit(): RunAudit | undefined {
  const id = workflowInfo().typedSearchAttributes.get(TemporalScheduledById);
  return typeof id === 'string' && id !== '' ? runAudit(id, StartedVia.schedule) : undefined;
}
