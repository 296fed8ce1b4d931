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
import {
  ControlVerb,
  GateWait,
  controlUpdate,
  fleetDecisionSignal,
  type ControlAnswer,
  type ControlRequest,
  type WaveProgress,
} from '../contracts/messages.ts';

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
  /** What a run in waves waits for at a gate now (undefined: not waiting, or no waves). */
  gate(): GateWait | undefined;
  /** Hands a gate verb (approve, resume, abort) and who sent it to the gate waiting for it. */
  decide(verb: ControlVerb, by: string | null): void;
  /** Where a run in waves stands (undefined: no waves). */
  wave(): WaveProgress | undefined;
}

/** The gate verbs, and the gates each is accepted at. */
const GATE_VERBS: Partial<Record<ControlVerb, readonly GateWait[]>> = {
  [ControlVerb.approve]: [GateWait.approval],
  [ControlVerb.resume]: [GateWait.halted],
  [ControlVerb.abort]: [GateWait.approval, GateWait.halted],
};

/** Longest `by` kept (as the store keeps who issued a command). */
const MAX_BY = 128;

/** Why the run cannot take gate verb `verb` (accepted at `gates`) now; undefined when its gate waits for it. */
function gateRefusal(verb: ControlVerb, gates: readonly GateWait[], run: ControlledRun): string | undefined {
  if (run.dryRun) return `a dry run has no gates: there is nothing to ${verb}`;
  const waiting = run.gate();
  if (run.wave() === undefined) return `the run has no waves: there is no gate to ${verb}`;
  if (waiting !== undefined && gates.includes(waiting)) return undefined;
  const now =
    waiting === undefined
      ? 'it is not waiting at a gate'
      : waiting === GateWait.halted
        ? 'it is halted (resume or abort it)'
        : `it is waiting at the ${waiting} gate`;
  return `cannot ${verb} the run: ${now}`;
}

/** Refuses, before anything is recorded, a gate verb the run is not waiting for. */
function checkGateVerb(verb: ControlVerb, gates: readonly GateWait[], run: ControlledRun): void {
  const refused = gateRefusal(verb, gates, run);
  if (refused !== undefined) throw ApplicationFailure.nonRetryable(refused, FailureType.NotRunning);
}

/** Who sent a verb, as the run keeps it: clipped, null when not given. */
const who = (by: unknown): string | null => (typeof by === 'string' && by.length > 0 ? by.slice(0, MAX_BY) : null);

/**
 * Where a run in waves stands once its gate took `verb`: no longer waiting,
 * and, after `approve`, approved by `by` after the current wave, as the
 * gate records it (src/workflows/update-labels-waves.ts). The gate takes
 * the verb only after the Update's handler has returned (its condition is
 * checked after the handler runs), so the answer is built here rather than
 * read from the run, and the handler answers at the same point of the
 * history as before.
 */
export function waveAfterGateVerb(wave: WaveProgress | undefined, verb: ControlVerb, by: string | null): WaveProgress | undefined {
  if (wave === undefined) return undefined;
  const { waiting: _waiting, reason: _reason, ...rest } = wave;
  return verb === ControlVerb.approve ? { ...rest, approved: { wave: wave.current.index, by } } : rest;
}

/**
 * Registers the `control` Update on `state`: `pause` makes the run start
 * no more nodes (those running finish), `unpause` lets it go on; pausing a
 * paused run changes nothing. `approve`, `resume` and `abort` go to the
 * gate a run in waves waits at. The validator refuses, before anything is
 * recorded, an unknown verb, a dry run, a run whose nodes have all been
 * started (NotRunning), and a gate verb the run is not waiting for. The
 * fleet's `resume` and `abort` of a halted site run come as a signal.
 */
export function handleControl(state: { paused: boolean }, run: ControlledRun): void {
  // The fleet's resume or abort of a halted site run: taken only by the gate it is meant for.
  setHandler(fleetDecisionSignal, ({ verb, by }: ControlRequest) => {
    const gates = verb === ControlVerb.resume || verb === ControlVerb.abort ? GATE_VERBS[verb] : undefined;
    if (gates && gateRefusal(verb, gates, run) === undefined) run.decide(verb, who(by));
  });
  setHandler(
    controlUpdate,
    ({ verb, by }: ControlRequest): ControlAnswer => {
      if (GATE_VERBS[verb]) {
        const sender = who(by);
        run.decide(verb, sender);
        const wave = waveAfterGateVerb(run.wave(), verb, sender);
        return { paused: state.paused, changed: true, running: run.running(), pending: run.pending(), ...(wave ? { wave } : {}) };
      }
      const paused = verb === ControlVerb.pause;
      const changed = paused !== state.paused;
      state.paused = paused;
      if (changed) run.changed();
      const wave = run.wave();
      return { paused, changed, running: run.running(), pending: run.pending(), ...(wave ? { wave } : {}) };
    },
    {
      validator: (request: ControlRequest) => {
        const verb = (request as { verb?: unknown } | undefined)?.verb;
        const gates = typeof verb === 'string' ? GATE_VERBS[verb as ControlVerb] : undefined;
        if (gates) return checkGateVerb(verb as ControlVerb, gates, run);
        if (verb !== ControlVerb.pause && verb !== ControlVerb.unpause) {
          throw ApplicationFailure.nonRetryable(
            `unknown control verb ${JSON.stringify(typeof verb === 'string' ? verb.slice(0, 40) : (verb ?? null))}: a run takes pause, unpause, approve, resume or abort`,
            FailureType.InvalidRequest,
          );
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
