/**
 * The steps of an update run as Shipyard shows a DAG's tasks: the three
 * things a run does, in order, each with an Airflow task state (a run in
 * waves: one step per wave instead of the last, see `wave-steps.ts`). Pure:
 * from what the runs facade reports of the run and when its activities ran.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { RunStepTimes } from '../../facade/runs/run-actions.ts';
import { waveFacts, waveStates, waveStep, type StepState, type WaveFacts, type WaveStepsInput } from './wave-steps.ts';

export type { StepState } from './wave-steps.ts';

/** A run's steps, in order: Shipyard's step id, what relabel runs for it, and what it does. */
export const ACTION_STEPS = [
  { id: 'validate_site_design', operator: 'resolveRevision', does: 'resolve the committed revision the run applies and check it and its documents' },
  { id: 'plan_labels', operator: 'planRun', does: 'read the target nodes and plan their labels, annotations and taints (the mass-removal brake)' },
  { id: 'relabel_nodes', operator: 'relabelNode', does: 'write each planned node, verify it, and record its outcome' },
] as const;
/** One of the step ids (a run in waves: `relabel_wave_<n>` instead of `relabel_nodes`). */
export type StepId = (typeof ACTION_STEPS)[number]['id'];

/** One step of a run. */
export interface StepFacts {
  /** A {@link StepId}, or a wave's `relabel_wave_<n>`. */
  id: string;
  /** From 1. */
  index: number;
  operator: string;
  state: StepState;
  queued: string | null;
  start: string | null;
  end: string | null;
  /** Seconds between start and end, when both are known. */
  duration: number | null;
  tryNumber: number | null;
  /** A wave's step: the wave, its counts and where the run stands at it. */
  wave?: WaveFacts;
}

/** What the steps are derived from. */
export interface StepInput {
  /** Temporal's execution status. */
  execution: string;
  /** The run's phase, from its progress query (absent when none answered). */
  phase?: string;
  /** The finished run's status (`success`, `partial_success`, `failure`). */
  status?: string;
  dryRun?: boolean;
  /** Why the run was rejected or ended early. */
  failure?: { type: string } | null;
  /** Whether the run's plan recorded outcomes (any node past `queued`); for a stopped run. */
  planned?: boolean;
  times?: RunStepTimes;
  startTime: string;
  closeTime?: string;
  /** A run in waves: its waves (none given, or none recorded yet: the one relabel_nodes step). */
  waves?: WaveStepsInput;
}

/** Failures found while resolving and checking the revision and its documents: the first step's. */
const VALIDATION_FAILURES = new Set<string>([
  FailureType.InvalidTargets,
  FailureType.NoCommittedRevision,
  FailureType.RevisionNotFound,
  FailureType.NoSiteActionRevision,
  FailureType.DocumentValidationFailed,
  FailureType.NoNodesMatched,
]);

const PHASE_STEP: Record<string, number> = { resolving: 0, planning: 1, applying: 2, done: 3 };

/** Which step a rejection or early end failed, by its type or, failing that, how far the run got. */
function failedStep(input: StepInput): number {
  const type = input.failure?.type;
  if (type !== undefined && VALIDATION_FAILURES.has(type)) return 0;
  if (type === FailureType.MassRemovalRefused) return 1;
  if (input.planned === true || input.times?.plan?.closed !== undefined) return 2;
  if (input.times?.resolve?.closed !== undefined) return 1;
  return input.execution === 'FAILED' ? 1 : 0;
}

/** Each step's state. */
function states(input: StepInput): StepState[] {
  const upTo = (k: number, at: StepState, after: StepState): StepState[] => [0, 1, 2].map((i) => (i < k ? 'success' : i === k ? at : after));
  switch (input.execution) {
    case 'RUNNING':
    case 'CONTINUED_AS_NEW': {
      if (input.phase === undefined) return upTo(0, input.times?.resolve ? 'running' : 'queued', null);
      return upTo(Math.min(2, PHASE_STEP[input.phase] ?? 0), 'running', null);
    }
    case 'COMPLETED': {
      if (input.dryRun) return ['success', 'success', 'skipped'];
      const failed = input.status === 'partial_success' || input.status === 'failure';
      return ['success', 'success', failed ? 'failed' : 'success'];
    }
    default:
      return upTo(failedStep(input), 'failed', 'upstream_failed');
  }
}

const seconds = (start: string | null, end: string | null) => (start && end ? Math.max(0, Date.parse(end) - Date.parse(start)) / 1000 : null);

/**
 * The run's three steps with their states and, where the history tells,
 * times: the first two from the resolve and plan activities, the last from
 * the end of planning to the run's close. A step not reached has no times.
 */
export function actionSteps(input: StepInput): StepFacts[] {
  const [s0, s1, s2] = states(input);
  const { resolve, plan } = input.times ?? {};
  const final = (s: StepState) => s === 'success' || s === 'failed' || s === 'skipped';
  const close = input.closeTime ?? null;
  const step = (i: number, state: StepState, queued: string | null, start: string | null, end: string | null, attempt: number | undefined): StepFacts => {
    const reached = state !== null && state !== 'upstream_failed';
    const s = reached ? start : null;
    const e = reached && final(state) ? (end ?? close) : null;
    const spec = ACTION_STEPS[i] as (typeof ACTION_STEPS)[number];
    return {
      id: spec.id,
      index: i + 1,
      operator: spec.operator,
      state,
      queued: reached ? queued : null,
      start: s,
      end: e,
      duration: seconds(s, e),
      tryNumber: reached ? (attempt ?? 1) : null,
    };
  };
  const steps = [
    step(
      0,
      s0 ?? null,
      resolve?.scheduled ?? input.startTime,
      resolve?.started ?? resolve?.scheduled ?? input.startTime,
      resolve?.closed ?? null,
      resolve?.attempt,
    ),
    step(
      1,
      s1 ?? null,
      plan?.scheduled ?? resolve?.closed ?? null,
      plan?.started ?? plan?.scheduled ?? resolve?.closed ?? null,
      plan?.closed ?? null,
      plan?.attempt,
    ),
    step(2, s2 ?? null, plan?.closed ?? null, plan?.closed ?? null, close, undefined),
  ];
  if (!input.waves || input.waves.waves.length === 0) return steps;
  return [steps[0] as StepFacts, steps[1] as StepFacts, ...waveSteps(steps[2] as StepFacts, input.waves)];
}

/**
 * The steps of a run's waves in place of `relabel` (the relabel_nodes step
 * the run would have): the first starts when relabel_nodes would, the
 * run's last wave ends when it would; the store keeps no other wave's times.
 */
function waveSteps(relabel: StepFacts, input: WaveStepsInput): StepFacts[] {
  const facts = waveFacts(input);
  const states = waveStates(relabel.state, input, facts);
  return facts.map((w, i): StepFacts => {
    const state = states[i] ?? null;
    const reached = state !== null && state !== 'upstream_failed' && state !== 'skipped';
    const start = reached && i === 0 ? relabel.start : null;
    const end = reached && w.index === w.count - 1 && (state === 'success' || state === 'failed') ? relabel.end : null;
    return {
      id: waveStep(w),
      index: relabel.index + i,
      operator: relabel.operator,
      state,
      queued: reached && i === 0 ? relabel.queued : null,
      start,
      end,
      duration: seconds(start, end),
      tryNumber: reached ? 1 : null,
      wave: w,
    };
  });
}

/** The Airflow DAG-run state of a run (Shipyard's `dag_status`) from its lifecycle. */
export function dagStatus(lifecycle: string): 'queued' | 'running' | 'success' | 'failed' | 'paused' {
  switch (lifecycle) {
    case 'Pending':
      return 'queued';
    case 'Processing':
      return 'running';
    case 'Paused':
      return 'paused';
    case 'Complete':
      return 'success';
    default:
      return 'failed';
  }
}

/**
 * A time as Airflow's execution dates are written in Shipyard's workflow
 * ids: `YYYY-MM-DDTHH:mm:ss.SSSSSS` (UTC, microseconds; relabel's times have
 * milliseconds, so the last three digits are 0).
 */
export function executionDate(iso: string): string {
  return new Date(iso).toISOString().replace(/\.(\d{3})Z$/, '.$1000');
}
