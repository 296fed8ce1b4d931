/**
 * Inputs, results and query definitions of relabel's workflows: the contract
 * shared by the worker, the CLI and the HTTP API. One input object and one
 * result object per workflow, so fields can be added without breaking
 * running histories.
 *
 * Bounded by design: none of these grows with the number of nodes. Targets
 * and per-node results live in the revision store, keyed by the run number;
 * workflows carry counts and capped samples.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RemovalAssessment } from '../core/plan/removal-brake.ts';
import type { PlanImpact } from '../core/plan/workload-impact.ts';
import type { RunAudit } from '../core/plan/run-audit.ts';
import type { EffectiveRollout, Rollout } from '../core/plan/waves.ts';

/** How an update run ended. */
export const RunStatus = {
  success: 'success',
  partialSuccess: 'partial_success',
  failure: 'failure',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Where an update run is. */
export const RunPhase = {
  resolving: 'resolving',
  planning: 'planning',
  applying: 'applying',
  done: 'done',
} as const;
export type RunPhase = (typeof RunPhase)[keyof typeof RunPhase];

/** A failure reason: a public failure type and a message. */
export interface NodeError {
  type: string;
  message: string;
}

/** One failed node and why. */
export interface NodeFailure {
  node: string;
  error: NodeError;
}

/** Most failures a workflow keeps (progress, result, continue-as-new); all are in the store. */
export const FAILURE_SAMPLE_LIMIT = 50;

/** Most targets a run started without the facade may name inline. */
export const MAX_INLINE_TARGETS = 1000;

/** Prefix of every update run's workflow ID: `update-labels/<site>` (a dry run's adds `/dry-run/<id>`). */
export const RUN_ID_PREFIX = 'update-labels';

/** The workflow ID of `site`'s update run: one at a time per site. */
export function runWorkflowId(site: string): string {
  return `${RUN_ID_PREFIX}/${site}`;
}

/** A run this one retries. */
export interface RetryOf {
  workflowId: string;
  runId: string;
}

/** Input of the `relabelNode` child workflow. */
export interface RelabelNodeInput {
  /** The run (revision store run number) the node belongs to. */
  run: number;
  node: string;
  revision: number;
  /** Set relabel's custom search attributes (default true). */
  searchAttributes?: boolean;
}

/** Result of `relabelNode`: what was done to one node (the full detail is in the store). */
export interface RelabelNodeResult {
  node: string;
  /** Whether a write request landed. */
  written: boolean;
  /**
   * Number of labels set, removed, adopted and already right; of annotations
   * set or removed, and of taints added or removed (absent from results of
   * earlier versions).
   */
  counts: { set: number; removed: number; adopted: number; unchanged: number; annotations?: number; taints?: number };
  /** Whether relabel's uninitialized taint was removed in the same write. */
  taintLifted: boolean;
  /** Reads of the node (more than one after a resourceVersion conflict). */
  attempts: number;
}

/** Counts of a run's nodes. */
export interface RunCounts {
  /** Targets of the run. */
  total: number;
  success: number;
  failure: number;
  /** Nodes a write landed on. */
  written: number;
}

/** Progress carried across continue-as-new: bounded whatever the run's size. */
export interface CarriedProgress {
  run: number;
  revision: number;
  site: string;
  concurrency: number;
  counts: RunCounts;
  /** Up to {@link FAILURE_SAMPLE_LIMIT} failures with reasons. */
  failures: NodeFailure[];
  /** Sequence number (target order) of the last node handed to a child; later pending nodes are still to do. */
  cursor: number;
  startedAt: string;
  /** What the plan found the run removes, against the mass-removal brake (absent in runs of earlier versions). */
  removal?: RemovalAssessment;
  /** The run is paused: it starts no node until unpaused (absent: not paused). */
  paused?: boolean;
  /** A dry run's workload impact (bounded; absent when not weighed). */
  impact?: PlanImpact;
  /** Where a run in waves stands (absent: the run has no waves). */
  waves?: CarriedWaves;
}

/** What a gate between waves waits for. */
export const GateWait = {
  /** The health gate: the wave's DaemonSet pods Ready, and those it lost gone. */
  health: 'health',
  /** An approval gate: `approve`. */
  approval: 'approval',
  /** A halted run: `resume` or `abort`. */
  halted: 'halted',
} as const;
/** One of the {@link GateWait} strings. */
export type GateWait = (typeof GateWait)[keyof typeof GateWait];

/** A run in waves, as continue-as-new carries it: bounded whatever the number of waves. */
export interface CarriedWaves {
  /** Waves in the run. */
  count: number;
  /** The wave being applied (from 0). */
  index: number;
  /** The rollout in effect (the policy's and the run's options, defaults filled in). */
  rollout: EffectiveRollout;
  /** The run's failed nodes when this wave started: the wave's failures are the difference. */
  failedBefore: number;
}

/** One wave, as the store and the progress Query show it. */
export interface WaveInfo {
  /** From 0. */
  index: number;
  name: string;
  /** Nodes in the wave. */
  nodes: number;
}

/** Where a run in waves stands, as the progress Query answers it. */
export interface WaveProgress {
  /** The current wave (from 0), its name and size. */
  current: WaveInfo;
  /** Waves in the run. */
  count: number;
  /** What the run waits for after the current wave, while it waits. */
  waiting?: GateWait;
  /** Why the run halted, or what the gate waits for, in words. */
  reason?: string;
  /** Who approved the last approval gate, and which wave it followed. */
  approved?: { wave: number; by: string | null };
}

/** Input of the `updateLabels` workflow. */
export interface UpdateLabelsInput {
  /** The run in the revision store whose targets to relabel (the facade creates it). */
  run?: number;
  /** Targets named inline, for a run started without the facade: at most {@link MAX_INLINE_TARGETS}. */
  targets?: string[];
  /** Revision to apply; the latest committed one when absent. */
  revision?: number;
  /** Nodes relabelled at once; the policy's default when absent. */
  concurrency?: number;
  /** Plan every node; write nothing and start no child. */
  dryRun?: boolean;
  /** Go ahead even when the run removes more owned labels than the policy's max_removal_fraction (the mass-removal brake). */
  allowMassRemoval?: boolean;
  /** The run this one retries (its failed nodes, against its revision). */
  retryOf?: RetryOf;
  /** Continue-as-new after this many children in one execution (keeps history bounded). */
  continueAsNewAfter?: number;
  /** Set relabel's custom search attributes (they must be registered on the server). */
  searchAttributes?: boolean;
  /** Who started the run and how (the facade records it with the run too); absent for runs started without it. */
  audit?: RunAudit;
  /** Roll the run out in waves with gates between them (over the policy's rollout). */
  rollout?: Rollout;
  /** Node sets whose members are targets too: read from the cluster when the run is planned (absent: none). */
  nodeSets?: string[];
  /** Release the targets instead: take back what relabel's records say it owns on them, and the records (see `core/plan/release.ts`). */
  release?: boolean;
  /** The fleet rollout this run is a site's run of (its workflow ID): told when the run halts at a gate and goes on. */
  fleet?: string;
  /** Set only by continue-as-new. */
  carried?: CarriedProgress;
}

/** Result of `updateLabels`: counts and a capped sample of failures; every node's outcome is in the store. */
export interface UpdateLabelsResult {
  status: RunStatus;
  /** Run number in the revision store, where the per-node results are. */
  run: number;
  revision: number;
  site: string;
  dryRun: boolean;
  counts: RunCounts;
  /** Up to {@link FAILURE_SAMPLE_LIMIT} failures, in the order they happened. */
  failures: NodeFailure[];
  retryOf?: RetryOf;
  /** What the run removes (in a dry run: would) of the owned labels on its targets, and what the brake says of it. */
  removal?: RemovalAssessment;
  /** In a dry run: what the plan does to DaemonSets, pods and their budgets (bounded; absent when not weighed). */
  impact?: PlanImpact;
  /** Waves the run had (absent: none). */
  waves?: number;
  /** The run was aborted at a gate: after which wave (from 0), by whom, and how many nodes it never started. */
  aborted?: { wave: number; by: string | null; notStarted: number };
}

/** What the `progress` query answers: bounded in size whatever the run's size. */
export interface Progress {
  phase: RunPhase;
  run?: number;
  revision?: number;
  site?: string;
  dryRun: boolean;
  total: number;
  counts: { pending: number; running: number; success: number; failure: number; written: number };
  /** Up to {@link FAILURE_SAMPLE_LIMIT} failures with reasons. */
  failures: NodeFailure[];
  status?: RunStatus;
  retryOf?: RetryOf;
  /** True while the run is paused: it starts no node, those running finish (absent from answers of earlier versions). */
  paused?: boolean;
  /** A run in waves: the current wave and what the run waits for (absent: no waves). */
  wave?: WaveProgress;
}

/** Phase, counts and a sample of failures of an update run. */
export const progressQuery = defineQuery<Progress>('progress');

/** The verbs the `control` Update takes (Shipyard's; `stop` is a cancellation of the workflow). */
export const ControlVerb = {
  /** Start no more nodes; nodes already running finish. */
  pause: 'pause',
  /** Start nodes again. */
  unpause: 'unpause',
  /** Pass the approval gate the run waits at. */
  approve: 'approve',
  /** Go on past the gate a halted run stopped at. */
  resume: 'resume',
  /** End a run waiting at a gate: start no more nodes, settle the rest as not started, finish as a partial run. */
  abort: 'abort',
} as const;
/** One of the {@link ControlVerb} strings. */
export type ControlVerb = (typeof ControlVerb)[keyof typeof ControlVerb];

/** What the `control` Update asks of a run. */
export interface ControlRequest {
  verb: ControlVerb;
  /** Who asks (approve, resume and abort record it); absent: unknown. */
  by?: string;
}

/** The `control` Update's answer: the run's state once the verb took effect. */
export interface ControlAnswer {
  /** Whether the run is now paused. */
  paused: boolean;
  /** False when the run already was as asked (pausing a paused run). */
  changed: boolean;
  /** Nodes being relabelled now (a pause lets them finish). */
  running: number;
  /** Nodes not started yet. */
  pending: number;
  /** A run in waves: where it stands once the verb took effect. */
  wave?: WaveProgress;
}

/**
 * Pauses or unpauses an update run; approves, resumes or aborts a run in
 * waves waiting at a gate. Refused (the Update fails, the run is unchanged)
 * for an unknown verb, a dry run (it starts no node), a run that has
 * started all its nodes, and a gate verb the run is not waiting for
 * (`approve` only at an approval gate, `resume` only when halted, `abort`
 * at either).
 */
export const controlUpdate = defineUpdate<ControlAnswer, [ControlRequest]>('control');

/**
 * A gate verb (`resume` or `abort`) from the fleet rollout a halted site
 * run is the child of: the fleet's own `resume` or `abort` reaching the
 * site's run. A workflow cannot send an Update, so the fleet signals; a
 * verb the run's gate does not wait for is ignored (a signal cannot be
 * refused).
 */
export const fleetDecisionSignal = defineSignal<[ControlRequest]>('fleetDecision');
