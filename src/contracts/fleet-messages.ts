/**
 * The fleet rollout's contract: its input, result, progress Query and
 * control Update, and the activities it asks of each site's worker, on
 * that site's own task queue. Bounded by the number of sites (at most
 * MAX_FLEET_SITES), never by their nodes: a site's nodes, plans and
 * per-node results stay in that site's store.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FleetRollout, EffectiveFleetRollout } from '../core/fleet/fleet-waves.ts';
import type { FleetSite } from '../core/fleet/sites.ts';
import type { RunAudit } from '../core/plan/run-audit.ts';
import type { Rollout } from '../core/plan/waves.ts';
import type { ControlVerb, RunCounts, RunStatus, UpdateLabelsInput } from './messages.ts';

/** Prefix of a fleet rollout's workflow ID: `fleet-rollout/<name>`. */
export const FLEET_ROLLOUT_ID_PREFIX = 'fleet-rollout';

/** The workflow ID of the fleet rollout named `name`. */
export function fleetRolloutWorkflowId(name: string): string {
  return `${FLEET_ROLLOUT_ID_PREFIX}/${name}`;
}

/** What each site's update run does. */
export interface FleetSiteRunOptions {
  /** Revision each site applies; absent: each site's latest committed revision. */
  revision?: number;
  /** Nodes each site relabels at once; its policy's default when absent. */
  concurrency?: number;
  /** Go past each site's mass-removal brake. */
  allowMassRemoval?: boolean;
  /** Each site's own waves (over its policy's rollout). */
  rollout?: Rollout;
}

/** Input of the `fleetRollout` workflow. */
export interface FleetRolloutInput {
  /** The rollout's name: its workflow ID is {@link fleetRolloutWorkflowId} of it. */
  name: string;
  /**
   * The sites it covers, each with only the label the rollout groups by
   * (`rolloutSites`): at most MAX_FLEET_SITES, each entry a few hundred
   * bytes at most, so the input stays well inside Temporal's payload limit.
   */
  sites: FleetSite[];
  rollout: FleetRollout;
  run: FleetSiteRunOptions;
  audit?: RunAudit;
  /** Sites of a wave run at once (default {@link DEFAULT_SITE_CONCURRENCY}). */
  siteConcurrency?: number;
  /** Continue-as-new once this many sites have ended in one execution (keeps history bounded). */
  continueAsNewAfterSites?: number;
  /** Set only by continue-as-new. */
  carried?: CarriedFleet;
}

/** Sites of a wave run at once by default. */
export const DEFAULT_SITE_CONCURRENCY = 10;
/** Sites one execution runs before it continues as new, by default: about ten events each. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER_SITES = 200;

/** How one site's part of a rollout ended. */
export const SiteState = {
  /** Its run ended with every node as desired. */
  succeeded: 'succeeded',
  /** Its run could not start, or ended with failed nodes. */
  failed: 'failed',
  /** No worker took the site's work within the rollout's site wait. */
  unreachable: 'unreachable',
  /** Never started: the rollout was aborted first. */
  skipped: 'skipped',
} as const;
/** One of the {@link SiteState} strings. */
export type SiteState = (typeof SiteState)[keyof typeof SiteState];

/** One site's outcome: bounded (a reason is clipped). */
export interface SiteOutcome {
  site: string;
  state: SiteState;
  /** The site's run number in its own store, and its counts, once it ran. */
  run?: number;
  status?: RunStatus;
  counts?: RunCounts;
  /** Why it failed, was unreachable or skipped. */
  reason?: string;
}

/** Longest reason a site outcome keeps. */
export const MAX_SITE_REASON = 300;

/** The letter {@link CarriedFleet.ended} keeps for each site state, and for a site not ended. */
export const SITE_STATE_LETTER: Record<SiteState | 'pending', string> = {
  succeeded: 's',
  failed: 'f',
  unreachable: 'u',
  skipped: 'k',
  pending: '-',
};

/** Approvals continue-as-new carries, the newest: as many as the progress shows. */
export const CARRIED_APPROVALS = 20;

/**
 * What continue-as-new carries: the wave reached, each site's state in one
 * letter, and only the failure sample's outcomes. Bounded by the number of
 * sites (one byte each), not by what each site's run said.
 */
export interface CarriedFleet {
  /** The wave to go on with (from 0). */
  wave: number;
  /** Each site's state, the sites in the input's order: a {@link SITE_STATE_LETTER} each. */
  ended?: string;
  /** The first failed and unreachable sites' outcomes: at most {@link FLEET_FAILURE_SAMPLE}. */
  failures?: SiteOutcome[];
  /**
   * Every ended site's outcome, as executions continued before `ended` was
   * carried hold it: read when `ended` is absent, never written.
   */
  outcomes?: SiteOutcome[];
  paused: boolean;
  /** Who approved which gate, newest last (at most one per wave; the last {@link CARRIED_APPROVALS}). */
  approvals: { wave: number; by: string | null }[];
  /** Whether a halted gate was resumed past these failures: the count it was resumed at. */
  resumedAt?: number;
}

/** What a fleet rollout waits for now. */
export const FleetGate = {
  /** `approve` (or `abort`) after a wave. */
  approval: 'approval',
  /** More sites failed than allowed: `resume` or `abort`. */
  halted: 'halted',
} as const;
/** One of the {@link FleetGate} strings. */
export type FleetGate = (typeof FleetGate)[keyof typeof FleetGate];

/** Sites by state, with those not ended yet. */
export type FleetCounts = Record<SiteState, number> & { sites: number; running: number; pending: number };

/** Where a fleet rollout stands: bounded whatever the number of sites. */
export interface FleetProgress {
  name: string;
  rollout: EffectiveFleetRollout;
  /** The current wave (from 0), its name and number of sites; waves in all. */
  wave: { index: number; name: string; sites: number; count: number };
  counts: FleetCounts;
  /** Sites running now: at most the site concurrency. */
  running: string[];
  paused: boolean;
  aborted: boolean;
  waiting?: FleetGate;
  reason?: string;
  /** The failed and unreachable sites, first ones first: at most {@link FLEET_FAILURE_SAMPLE}. */
  failures: SiteOutcome[];
  /** Running sites whose run is halted at one of its gates, with why: at most the site concurrency. */
  halted?: { site: string; reason: string }[];
  approvals: { wave: number; by: string | null }[];
}

/** Most failed sites the progress and the result list. */
export const FLEET_FAILURE_SAMPLE = 50;

/** The progress Query of a fleet rollout. */
export const fleetProgressQuery = defineQuery<FleetProgress>('fleetProgress');

/** What the fleet control Update asks. */
export interface FleetControlRequest {
  verb: ControlVerb;
  by?: string;
}

/** The control Update's answer: the rollout once the verb took effect. */
export interface FleetControlAnswer {
  paused: boolean;
  aborted: boolean;
  changed: boolean;
  waiting?: FleetGate;
}

/**
 * Pauses (no site starts; running sites go on) or unpauses a fleet
 * rollout; approves the gate after a wave; resumes a halted rollout; aborts
 * (no more sites start; running site runs are asked to stop). Refused for a
 * gate verb the rollout is not waiting for.
 */
export const fleetControlUpdate = defineUpdate<FleetControlAnswer, [FleetControlRequest]>('fleetControl');

/** What a site's run tells the fleet rollout it is the child of when it halts at a gate, and when it goes on. */
export interface SiteGateNotice {
  /** The site run's workflow ID: the fleet knows which site's child it is. */
  workflowId: string;
  /** Whether the run is halted now. */
  halted: boolean;
  /** Why it halted: clipped to {@link MAX_SITE_REASON}. */
  reason?: string;
}

/** Sent by a site's run to its fleet rollout on halting and on going on again. */
export const siteGateSignal = defineSignal<[SiteGateNotice]>('fleetSiteGate');

/** How a fleet rollout ended. */
export interface FleetRolloutResult {
  name: string;
  /** success: every site succeeded; partial_success: some did; failure: none did. */
  status: RunStatus;
  aborted: boolean;
  counts: FleetCounts;
  waves: number;
  failures: SiteOutcome[];
}

/** What the fleet asks a site's worker to prepare: a numbered run in that site's store, not yet started. */
export interface PrepareSiteRunInput {
  /** The site the fleet means: a worker of another site refuses it. */
  site: string;
  /** The fleet rollout's workflow ID, recorded with the run. */
  fleet: string;
  run: FleetSiteRunOptions;
  audit?: RunAudit;
}

/** A prepared site run: what the fleet starts as its child on the site's task queue. */
export interface PreparedSiteRun {
  run: number;
  workflowId: string;
  input: UpdateLabelsInput;
  memo: Record<string, unknown>;
  staticSummary: string;
  staticDetails: string;
}

/** What the fleet tells a site's worker once the child started, or failed to start. */
export interface SettleSiteRunInput {
  site: string;
  run: number;
  /** The child's first execution: the run's action finds it by this. Absent: the start failed, the run is discarded. */
  runId?: string;
}

/** The activities a site's worker runs for the fleet, on the site's task queue. */
export interface FleetSiteActivities {
  prepareSiteRun(input: PrepareSiteRunInput): Promise<PreparedSiteRun>;
  settleSiteRun(input: SettleSiteRunInput): Promise<void>;
}
