/**
 * Run control of `updateLabels`: the `control` Update (pause, unpause) and
 * what a cancelled (stopped) run does before it ends: it lets the nodes
 * being relabelled finish and settles every other node's row, so that the
 * store says which nodes the run wrote and which it never started.
 * Workflow code: deterministic.
 */
import { ApplicationFailure, CancellationScope, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import { FailureType } from '../core/plan/failure-types.ts';
import type { Activities } from '../activities/index.ts';
import { ControlVerb, controlUpdate, type ControlAnswer, type ControlRequest } from './messages.ts';

/**
 * The patch under which children start outside the run's cancellation (a
 * stop lets them finish) and a cancelled run settles its nodes: runs started
 * before it replay as they ran.
 */
export const SETTLE_CANCELLED_PATCH = 'settle-cancelled-runs';

const { settleCancelledRun } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'settle the nodes the cancelled run did not start',
});

/** What the `control` Update needs to know of the run. */
export interface ControlledRun {
  dryRun: boolean;
  /** Whether every node has been started (nothing left to pause). */
  started(): boolean;
  running(): number;
  pending(): number;
  /** Called when the paused state changes. */
  changed(): void;
}

/**
 * Registers the `control` Update on `state`: `pause` makes the run start
 * no more nodes (those running finish), `unpause` lets it go on; pausing a
 * paused run changes nothing. The validator refuses, before anything is
 * recorded, an unknown verb, a dry run and a run whose nodes have all been
 * started (NotRunning).
 */
export function handleControl(state: { paused: boolean }, run: ControlledRun): void {
  setHandler(
    controlUpdate,
    ({ verb }: ControlRequest): ControlAnswer => {
      const paused = verb === ControlVerb.pause;
      const changed = paused !== state.paused;
      state.paused = paused;
      if (changed) run.changed();
      return { paused, changed, running: run.running(), pending: run.pending() };
    },
    {
      validator: (request: ControlRequest) => {
        const verb = (request as { verb?: unknown } | undefined)?.verb;
        if (verb !== ControlVerb.pause && verb !== ControlVerb.unpause) {
          throw ApplicationFailure.nonRetryable(`unknown control verb ${JSON.stringify(verb ?? null)}: a run takes pause or unpause`, FailureType.InvalidRequest);
        }
        if (run.dryRun) throw ApplicationFailure.nonRetryable(`a dry run starts no node: there is nothing to ${verb}`, FailureType.NotRunning);
        if (run.started()) throw ApplicationFailure.nonRetryable(`the run has started all its nodes: there is nothing to ${verb}`, FailureType.NotRunning);
      },
    },
  );
}

/**
 * Settles a cancelled run, out of reach of the cancellation: waits for the
 * running nodes to finish (`idle`), writes the buffered failures (`flush`),
 * then marks every node still queued or pending `cancelled` (NotStarted)
 * and the run's outcome `cancelled`.
 */
export async function settleCancelled(run: number, idle: () => boolean, flush: () => Promise<void>): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    await condition(idle);
    await flush();
    await settleCancelledRun({ run });
  });
}
