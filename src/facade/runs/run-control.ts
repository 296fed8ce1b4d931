/**
 * Shipyard's action controls over update runs, shared by the CLI and the
 * HTTP API: `pause` (no new node starts; running ones finish), `unpause`
 * and `stop` (a cancellation: nodes already relabelled stay relabelled, the
 * others are settled as cancelled); and at the gates of a run in waves,
 * `approve`, `resume` (a halted run) and `abort` (a partial end), each
 * passing who asks to the run. Each accepted control is recorded with
 * the run in the store (who, when, which) for the action's command audit.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';
import { FailureType } from '../../core/plan/failure-types.ts';
import type { Store } from '../../store/store.ts';
import { controlUpdate, type ControlAnswer } from '../../contracts/messages.ts';
import { RelabelError, relabelErrorOf } from '../relabel-error.ts';
import { describeRun, type RunReads, type RunRef } from './run-reads.ts';

/** How long a pause or unpause waits for the run to answer before it is Unavailable. */
export const CONTROL_TIMEOUT_MS = 15_000;

/** The controls a run takes: Shipyard's verbs, and the gate verbs of a run in waves. */
export const CONTROL_VERBS = ['pause', 'unpause', 'stop', 'approve', 'resume', 'abort'] as const;
/** One of {@link CONTROL_VERBS}. */
export type ControlVerbName = (typeof CONTROL_VERBS)[number];

/** What a control did. */
export interface ControlOutcome extends RunRef {
  verb: ControlVerbName;
  /** For pause and unpause: the run's answer (paused now, whether that changed, nodes running and not started). */
  answer?: ControlAnswer;
}

/** What the controls need: the client, the store's command audit, and the read half's status and links. */
export interface RunControlDeps {
  client: Client;
  store: Pick<Store, 'actions'>;
  reads: Pick<RunReads, 'status' | 'link'>;
}

/** The controls of a running run: Shipyard's verbs, and the cancellation `stop` is. */
export interface RunControls {
  /**
   * Applies `verb` to the running run `workflowId` (followed down its
   * continue-as-new chain) and records it, with `user`, in the run's command
   * audit. NotRunning for a run that has ended (or, for pause and unpause, a
   * dry run or a run that has started all its nodes); RunNotFound for an
   * unknown run; Unavailable when no worker serves the run to answer a pause
   * or unpause (within {@link CONTROL_TIMEOUT_MS}). Pausing a paused run is
   * accepted and changes nothing.
   */
  control(workflowId: string, runId: string | undefined, verb: ControlVerbName, user: string | null): Promise<ControlOutcome>;
  /** Requests cancellation of a running run; nodes already done stay done. NotRunning when it has ended. */
  cancel(workflowId: string, runId?: string): Promise<RunRef>;
}

/** The workflow's refusal of an Update as a {@link RelabelError} of its own type. */
function updateRefusal(err: unknown, verb: string, workflowId: string): unknown {
  const refused = err instanceof WorkflowUpdateFailedError ? relabelErrorOf(err, (m) => `cannot ${verb} run ${workflowId}: ${m}`) : undefined;
  if (refused) return refused;
  if (err instanceof WorkflowNotFoundError) return new RelabelError(FailureType.NotRunning, `cannot ${verb} run ${workflowId}: it has ended`);
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
    return new RelabelError(FailureType.Unavailable, `run ${workflowId} did not answer ${verb} within ${CONTROL_TIMEOUT_MS / 1000} s: is a worker serving it?`);
  }
  return err;
}

/** Builds the controls over the read half's `status` and links. */
export function createRunControl(deps: RunControlDeps): RunControls {
  const { client, reads } = deps;

  async function cancel(workflowId: string, runId?: string): Promise<RunRef> {
    const d = await describeRun(client, workflowId, runId);
    if (d.status.name !== 'RUNNING') throw new RelabelError(FailureType.NotRunning, `run ${workflowId} (${d.runId}) is not running (it is ${d.status.name})`);
    await client.workflow.getHandle(workflowId, d.runId).cancel();
    return { workflowId, runId: d.runId, uiLink: reads.link(workflowId, d.runId) };
  }

  async function control(workflowId: string, runId: string | undefined, verb: ControlVerbName, user: string | null): Promise<ControlOutcome> {
    const report = await reads.status(workflowId, runId);
    if (report.execution !== 'RUNNING') {
      throw new RelabelError(FailureType.NotRunning, `cannot ${verb} run ${workflowId} (${report.runId}): it is not running (it is ${report.execution})`);
    }
    const run = report.run ?? report.progress?.run;
    let outcome: ControlOutcome;
    if (verb === 'stop') {
      outcome = { ...(await cancel(workflowId, report.runId)), verb };
    } else {
      // A run no worker serves cannot answer: say so rather than wait for one.
      const idle = report.warnings?.[0];
      if (idle !== undefined) throw new RelabelError(FailureType.Unavailable, `cannot ${verb} run ${workflowId} now: ${idle}`);
      const handle = client.workflow.getHandle(workflowId, report.runId);
      const answer = await client
        .withDeadline(Date.now() + CONTROL_TIMEOUT_MS, () => handle.executeUpdate(controlUpdate, { args: [{ verb, ...(user !== null ? { by: user } : {}) }] }))
        .catch((err: unknown) => {
          throw updateRefusal(err, verb, workflowId);
        });
      outcome = { workflowId, runId: report.runId, ...(report.uiLink ? { uiLink: report.uiLink } : {}), verb, answer };
    }
    if (run !== undefined) {
      await deps.store.actions.recordCommand(run, verb, user);
      outcome.run = run;
    }
    return outcome;
  }

  return { control, cancel };
}
