/**
 * The fleet survey's contract: one question asked of every site's worker,
 * on the site's own task queue, and the answers summed up. Two questions:
 * `plan` (each site's dry run of a revision, computed in that site, nothing
 * written), `state` (each site's last run, drift counts and join
 * watcher, with the docs/deploy.md alerts its state raises) and `check`
 * (whether the site would start a run of the revision: a rollout's
 * preflight). An answer is
 * bounded (top keys, clipped texts), so the survey's history grows with
 * the number of sites (at most MAX_FLEET_SITES), never with their nodes;
 * the answers are read a page at a time through a Query.
 */
import { defineQuery } from '@temporalio/workflow';
import type { DriftCounts } from '../core/plan/drift.ts';
import type { FleetSite } from '../core/fleet/sites.ts';
import type { SiteAlert } from '../core/fleet/site-alerts.ts';

/** Prefix of a fleet survey's workflow ID: `fleet-survey/<kind>/<id>`. */
export const FLEET_SURVEY_ID_PREFIX = 'fleet-survey';

/** The workflow ID of a survey of `kind` named `id`. */
export function fleetSurveyWorkflowId(kind: SurveyKind, id: string): string {
  return `${FLEET_SURVEY_ID_PREFIX}/${kind}/${id}`;
}

/** What a survey asks each site. */
export const SurveyKind = {
  /** The site's dry run of a revision: what an update run would change. */
  plan: 'plan',
  /** The site's last run, drift and joins. */
  state: 'state',
  /** Whether the site would start a run of the revision (its checks only: documents valid, revision there): a rollout's preflight. */
  check: 'check',
} as const;
/** One of the {@link SurveyKind} strings. */
export type SurveyKind = (typeof SurveyKind)[keyof typeof SurveyKind];

/** Input of the `fleetSurvey` workflow. */
export interface FleetSurveyInput {
  kind: SurveyKind;
  sites: FleetSite[];
  /** For `plan`: the revision each site plans; absent, each site's latest committed one. */
  revision?: number;
  /** Sites asked at once (default {@link DEFAULT_SURVEY_CONCURRENCY}). */
  siteConcurrency?: number;
  /** Seconds a site's worker gets to take the question before the site is `unreachable` (default {@link DEFAULT_SURVEY_WAIT_SECONDS}). */
  siteWaitSeconds?: number;
}

/** Sites a survey asks at once by default. */
export const DEFAULT_SURVEY_CONCURRENCY = 10;
/** Seconds a site's worker gets to take a survey's question by default. */
export const DEFAULT_SURVEY_WAIT_SECONDS = 60;
/** Label keys each site's plan answer lists at most (those with the most changes). */
export const SITE_PLAN_KEYS = 10;
/** Label keys the survey's result lists at most, summed over the sites' listed keys. */
export const FLEET_PLAN_KEYS = 50;
/** Sources a listed key names at most. */
export const SITE_KEY_SOURCES = 3;
/** Longest source name a listed key keeps. */
export const MAX_SOURCE_TEXT = 120;
/** Warnings a site's answer keeps at most, each clipped to {@link MAX_WARNING_TEXT}. */
export const SITE_WARNINGS = 3;
/** Longest warning an answer keeps. */
export const MAX_WARNING_TEXT = 200;
/** Longest text (a reason, a warning) an answer keeps. */
export const MAX_SURVEY_TEXT = 300;
/**
 * Most bytes of JSON one site's answer takes: a plan answer drops its
 * listed keys from the least changed on until it fits (counted in
 * `moreKeys`), so the answers of MAX_FLEET_SITES sites stay within 4 MB of
 * history (Temporal refuses 50 MB), whatever their label keys.
 */
export const MAX_SITE_ANSWER_BYTES = 4096;
/** Most answers one page of the survey's Query returns. */
export const MAX_SURVEY_PAGE = 200;
/** Failed and unreachable sites the result lists at most. */
export const SURVEY_FAILURE_SAMPLE = 20;

/** What the site asks for: the site the survey means (a worker of another site refuses it). */
export interface SiteQuestion {
  site: string;
  kind: SurveyKind;
  revision?: number;
}

/** One label key's changes at a site: node counts, with where the key comes from. */
export interface SiteKeyChange {
  key: string;
  gain: number;
  change: number;
  lose: number;
  adopt: number;
  /** The key's most common sources (`BaremetalNode/n1`, `HostProfile/cp`, `plugin:nfd`...), at most {@link SITE_KEY_SOURCES}. */
  sources: string[];
  moreSources: number;
}

/** A site's plan, summed up: bounded whatever its number of nodes. */
export interface SitePlanAnswer {
  revision: number;
  /** The dry run's number in the site's store and its workflow, to read it whole at the site (`relabel status <workflowId> --summary`). */
  run: number;
  workflowId: string;
  targets: number;
  planned: number;
  /** Targets not planned (not in the design, not in the cluster), by failure type. */
  notPlanned: Record<string, number>;
  /** Planned nodes a run would write (labels, annotations, taints or their records change). */
  changing: number;
  /** Label key × node counts over every key the plan lists. */
  gain: number;
  change: number;
  lose: number;
  adopt: number;
  /** The keys with the most changes, at most {@link SITE_PLAN_KEYS}. */
  keys: SiteKeyChange[];
  moreKeys: number;
  /** The site's mass-removal brake: owned labels, those the run would remove, its policy's fraction and whether it would refuse. */
  brake: { owned: number; removed: number; maxFraction: number; exceeded: boolean } | null;
  warnings: string[];
}

/** A site's state: its latest revision, its last update run, its last drift detection and its join watcher. */
export interface SiteStateAnswer {
  /** The site's latest committed revision; absent when none is. */
  revision?: number;
  /** The latest update run that is not a dry run. */
  lastRun?: {
    run: number;
    workflowId: string;
    revision: number | null;
    /** How it ended (`success`, `partial_success`, `failure`, `rejected`, `cancelled`); null while it runs. */
    outcome: string | null;
    startedBy: string | null;
    startedVia: string | null;
    createdAt: string;
    /** When its workflow closed, as Temporal lists it. */
    endedAt?: string;
  };
  /** The latest finished drift detection. */
  drift?: { report: number; at: string; revision: number; action: string; counts: DriftCounts };
  joins: { enabled: boolean; pending?: number; oldestPendingSeconds?: number; failed?: number; warning?: string };
  /** The docs/deploy.md alerts this state raises. */
  alerts: SiteAlert[];
}

/** A site's checks passed: the revision its run would apply and the nodes it would target. */
export interface SiteCheckAnswer {
  revision: number;
  targets: number;
}

/** How a site answered. */
export const AnswerState = {
  answered: 'answered',
  /** The site's worker refused or failed the question (the reason says why). */
  failed: 'failed',
  /** No worker took the question within the survey's site wait. */
  unreachable: 'unreachable',
} as const;
/** One of the {@link AnswerState} strings. */
export type AnswerState = (typeof AnswerState)[keyof typeof AnswerState];

/** One site's answer. */
export interface SiteAnswer {
  site: string;
  state: AnswerState;
  reason?: string;
  plan?: SitePlanAnswer;
  status?: SiteStateAnswer;
  check?: SiteCheckAnswer;
}

/** The plan summed over the sites that answered. */
export interface FleetPlanTotals {
  /** Sites whose plan writes at least one node. */
  reached: number;
  targets: number;
  planned: number;
  changing: number;
  gain: number;
  change: number;
  lose: number;
  adopt: number;
  /** Owned labels and those removed over the sites, and the sites whose brake would refuse. */
  brake: { owned: number; removed: number; sitesExceeded: number };
  /** Keys summed over each site's listed keys, most changes first: at most {@link FLEET_PLAN_KEYS}. */
  keys: (Omit<SiteKeyChange, 'moreSources'> & { sites: number })[];
  moreKeys: number;
}

/** How a survey ended: counts, sums and a sample; each site's answer is read through {@link fleetSurveyPageQuery}. */
export interface FleetSurveyResult {
  kind: SurveyKind;
  sites: number;
  answered: number;
  failed: number;
  unreachable: number;
  /** For `plan`. */
  plan?: FleetPlanTotals;
  /** For `state`: sites raising each alert. */
  alerts?: Partial<Record<SiteAlert, number>>;
  failures: SiteAnswer[];
}

/** Where a survey stands while it asks. */
export interface FleetSurveyProgress {
  kind: SurveyKind;
  sites: number;
  answered: number;
  failed: number;
  unreachable: number;
  asking: string[];
}

/** Which answers a page holds. */
export interface SurveyPageRequest {
  offset?: number;
  limit?: number;
  /** `site` (by name, the default) or `changes` (plans writing the most nodes first; unanswered sites last). */
  order?: 'site' | 'changes';
}

/** A page of answers. */
export interface SurveyPage {
  total: number;
  offset: number;
  items: SiteAnswer[];
}

/** Each site's answer, a page at a time (also once the survey has ended). */
export const fleetSurveyPageQuery = defineQuery<SurveyPage, [SurveyPageRequest]>('fleetSurveyPage');
/** The survey's progress. */
export const fleetSurveyProgressQuery = defineQuery<FleetSurveyProgress>('fleetSurveyProgress');

/** The activity a site's worker runs for a survey, on the site's task queue. */
export interface FleetSurveyActivities {
  answerSite(question: SiteQuestion): Promise<SiteAnswer>;
}
