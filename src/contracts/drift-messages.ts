/**
 * Input and result of the `detectDrift` workflow: the contract shared by the
 * worker, the schedules and the CLI. Bounded by design: counts, a capped
 * sample and at most {@link MAX_HEAL_GROUPS} heal runs, whatever the number
 * of nodes; every node's row is in the store under the report number.
 */
import type { DriftAction, DriftCounts, DriftState, OrphanAction } from '../core/plan/drift.ts';
import type { RunAudit } from '../core/plan/run-audit.ts';

/** Prefix of drift detections' workflow IDs (and their schedules' IDs): `relabel-drift/<site>`. */
export const DRIFT_ID_PREFIX = 'relabel-drift';

/** Most nodes in a result's sample. */
export const DRIFT_SAMPLE_LIMIT = 20;

/** Most revisions healed by one detection (one run each); drifted nodes of further revisions wait for the next. */
export const MAX_HEAL_GROUPS = 10;

/** Input of `detectDrift`. */
export interface DetectDriftInput {
  /** The site expected; the detection is refused (InvalidArgument) when the store's latest revision is of another. */
  site?: string;
  /** Who asked for the detection (`relabel drift`): its heal runs record them. A Schedule's detection has none; its heal runs record the Schedule. */
  audit?: RunAudit;
}

/** One node of the sample: its state, the revision it carries and, drifted, what differs (bounded text). */
export interface DriftSampleNode {
  node: string;
  state: DriftState;
  revision: number | null;
  /** The node set the node is a member of, when no BaremetalNode names it. */
  nodeSet?: string;
  /** Moved or orphaned: the node set its record says it was written as a member of. */
  lastSet?: string;
  detail?: string;
}

/** Drifted nodes carrying one revision: healed by one run against it. */
export interface HealGroup {
  revision: number;
  nodes: number;
}

/** What the detection activity found. */
export interface DriftDetection {
  report: number;
  site: string;
  /** The latest committed revision. */
  revision: number;
  action: DriftAction;
  counts: DriftCounts;
  sample: DriftSampleNode[];
  /** Drifted nodes by the revision they carry, oldest revision first, at most {@link MAX_HEAL_GROUPS}. */
  groups: HealGroup[];
  /** Drifted nodes of revisions beyond the groups. */
  ungrouped: number;
  /** The policy's orphans setting (absent in detections of earlier versions: keep). */
  orphans?: OrphanAction;
}

/** One heal run: the revision, how many nodes, the run, and how it ended. */
export interface HealRun {
  revision: number;
  nodes: number;
  workflowId: string;
  runId: string;
  run: number;
  /** success, partial_success, failure; or `rejected` with the reason in `message`. */
  status: string;
  written?: number;
  failed?: number;
  message?: string;
}

/** What healing did (and releasing, with the policy's `orphans: release`). */
export interface HealOutcome {
  runs: HealRun[];
  /** Why healing stopped before every group was healed (a run of the site already going), when it did. */
  skipped?: string;
  /** The release of the orphaned nodes, when one was tried. */
  release?: ReleaseOutcome;
}

/** What releasing the orphaned nodes did: the run (its `revision` the one it was started at), or why none started. */
export interface ReleaseOutcome {
  run?: HealRun;
  skipped?: string;
}

/** Result of `detectDrift`. */
export interface DetectDriftResult extends Omit<DriftDetection, 'groups'> {
  groups: HealGroup[];
  heal?: HealOutcome;
  /** With the policy's `orphans: release` and orphaned nodes: the release run started over them. */
  release?: ReleaseOutcome;
}
