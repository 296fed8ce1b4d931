/**
 * The state of a fleet rollout and its `fleetControl` Update: `pause` and
 * `unpause` at any time (a pause starts no more sites; those running go
 * on); `approve` at an approval gate; `resume` when halted; `abort` at
 * either gate. The validator refuses, before anything is recorded, an
 * unknown verb and a gate verb the rollout is not waiting for.
 * Workflow code: deterministic.
 */
import { ApplicationFailure, setHandler } from '@temporalio/workflow';
import type { EffectiveFleetRollout, FleetWave } from '../core/fleet/fleet-waves.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import {
  FleetGate,
  fleetControlUpdate,
  type FleetControlAnswer,
  type FleetControlRequest,
  type SiteOutcome,
  type SiteState,
} from '../contracts/fleet-messages.ts';
import { ControlVerb } from '../contracts/messages.ts';

/** A fleet rollout as its execution holds it. */
export interface FleetState {
  name: string;
  rollout: EffectiveFleetRollout;
  waves: FleetWave[];
  /** The wave being rolled out (from 0). */
  wave: number;
  /** Every ended site's state, by site. */
  ended: Map<string, SiteState>;
  /** The first failed and unreachable sites' outcomes: at most FLEET_FAILURE_SAMPLE. */
  failures: SiteOutcome[];
  /** Sites running now. */
  running: Set<string>;
  /** The site of each running site's run, by the run's workflow ID. */
  children: Map<string, string>;
  /** Running sites whose run is halted at a gate, with why (their runs told the rollout). */
  halted: Map<string, string>;
  paused: boolean;
  aborted: boolean;
  approvals: { wave: number; by: string | null }[];
  /** The failed sites when the rollout was last resumed past a halt. */
  resumedAt?: number;
  /** What the rollout waits for now, and why. */
  waiting?: { gate: FleetGate; reason: string };
  /** A gate verb the Update handed over, taken by the gate. */
  decision?: { verb: ControlVerb; by: string | null };
  /** Sites in the rollout. */
  sites: number;
}

/** The gate verbs, and the gates each is accepted at. */
const GATE_VERBS: Partial<Record<ControlVerb, readonly FleetGate[]>> = {
  [ControlVerb.approve]: [FleetGate.approval],
  [ControlVerb.resume]: [FleetGate.halted],
  [ControlVerb.abort]: [FleetGate.approval, FleetGate.halted],
};

/** Longest `by` kept. */
const MAX_BY = 128;

function answer(state: FleetState, changed: boolean): FleetControlAnswer {
  return { paused: state.paused, aborted: state.aborted, changed, ...(state.waiting ? { waiting: state.waiting.gate } : {}) };
}

/** Refuses a verb the rollout cannot take now, naming why. */
function validate(state: FleetState, request: FleetControlRequest): void {
  const verb = (request as { verb?: unknown } | undefined)?.verb;
  if (verb === ControlVerb.pause || verb === ControlVerb.unpause) return;
  const gates = typeof verb === 'string' ? GATE_VERBS[verb as ControlVerb] : undefined;
  if (!gates) {
    const shown = JSON.stringify(typeof verb === 'string' ? verb.slice(0, 40) : (verb ?? null));
    throw ApplicationFailure.nonRetryable(
      `unknown control verb ${shown}: a fleet rollout takes pause, unpause, approve, resume or abort`,
      FailureType.InvalidRequest,
    );
  }
  const waiting = state.waiting?.gate;
  if (waiting === undefined || !gates.includes(waiting)) {
    const now =
      waiting === undefined
        ? 'it is not waiting at a gate'
        : waiting === FleetGate.halted
          ? 'it is halted (resume or abort it)'
          : 'it is waiting for an approval';
    throw ApplicationFailure.nonRetryable(`cannot ${String(verb)} the fleet rollout: ${now}`, FailureType.NotRunning);
  }
}

/** Registers the `fleetControl` Update on `state`. */
export function handleFleetControl(state: FleetState): void {
  setHandler(
    fleetControlUpdate,
    ({ verb, by }: FleetControlRequest): FleetControlAnswer => {
      if (GATE_VERBS[verb]) {
        state.decision = { verb, by: typeof by === 'string' && by.length > 0 ? by.slice(0, MAX_BY) : null };
        // The gate takes the verb once the handler returned: answer as it will stand.
        return { paused: state.paused, aborted: verb === ControlVerb.abort, changed: true };
      }
      const paused = verb === ControlVerb.pause;
      const changed = paused !== state.paused;
      state.paused = paused;
      return answer(state, changed);
    },
    { validator: (request: FleetControlRequest) => validate(state, request) },
  );
}
