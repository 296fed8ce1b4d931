/**
 * A site's answers to a fleet survey, computed by the site's own worker
 * over its own store and cluster: its plan (the facade's plan of every
 * node of the site, a dry run: nothing written) and its state (latest
 * revision, last update run, last drift detection, join watcher, and the
 * alerts they raise), each summed up to a bounded answer. A question for
 * another site is refused before anything is computed.
 */
import type { Client } from '@temporalio/client';
import { siteAlerts } from '../core/fleet/site-alerts.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { byText } from '../core/plan/label-plan.ts';
import { formatLabelSource } from '../core/site/label-provenance.ts';
import { clip } from '../core/plan/text.ts';
import {
  AnswerState,
  MAX_SITE_ANSWER_BYTES,
  MAX_SOURCE_TEXT,
  MAX_SURVEY_TEXT,
  MAX_WARNING_TEXT,
  SITE_KEY_SOURCES,
  SITE_PLAN_KEYS,
  SITE_WARNINGS,
  SurveyKind,
  type SiteAnswer,
  type SitePlanAnswer,
  type SiteQuestion,
  type SiteStateAnswer,
} from '../contracts/fleet-survey.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import { storeSite } from './documents/store-site.ts';
import { createJoins } from './joins.ts';
import { createPlans, type FleetPlan } from './plan.ts';
import { RelabelError } from './relabel-error.ts';
import type { Runs } from './runs/runs.ts';

/** Update runs the state looks back over for the latest that is not a dry run. */
const RUNS_LOOKED_AT = 20;

/** What the answers need: the site's runs facade (on the activity's client), store and designs, and where its workflows run. */
export interface SiteAnswerDeps {
  client: Client;
  runs: Runs;
  store: Store;
  designs: DesignCache;
  taskQueue: string;
  namespace: string;
}

/** A plan summed up to its bounded answer. */
export function planAnswer(plan: FleetPlan): SitePlanAnswer {
  const entries = Object.entries(plan.labels);
  const sum = (pick: (e: (typeof entries)[number][1]) => number) => entries.reduce((n, [, e]) => n + pick(e), 0);
  const changes = (e: { gain: number; change: number; lose: number; adopt: number }) => e.gain + e.change + e.lose + e.adopt;
  const keys = entries
    .filter(([, e]) => changes(e) > 0)
    .sort(([a, x], [b, y]) => changes(y) - changes(x) || byText(a, b))
    .map(([key, e]) => ({
      key,
      gain: e.gain,
      change: e.change,
      lose: e.lose,
      adopt: e.adopt,
      sources: e.sources.slice(0, SITE_KEY_SOURCES).map((s) => clip(formatLabelSource(s.source), MAX_SOURCE_TEXT)),
      moreSources: Math.max(0, e.sources.length - SITE_KEY_SOURCES) + e.moreSources,
    }));
  const answer: SitePlanAnswer = {
    revision: plan.revision,
    run: plan.run,
    workflowId: plan.workflowId,
    targets: plan.targets,
    planned: plan.statuses['success'] ?? 0,
    notPlanned: plan.failureTypes,
    changing: plan.changing,
    gain: sum((e) => e.gain),
    change: sum((e) => e.change),
    lose: sum((e) => e.lose),
    adopt: sum((e) => e.adopt),
    keys: keys.slice(0, SITE_PLAN_KEYS),
    moreKeys: Math.max(0, keys.length - SITE_PLAN_KEYS) + plan.moreLabelKeys,
    brake: plan.removal
      ? { owned: plan.removal.owned, removed: plan.removal.removed, maxFraction: plan.removal.maxFraction, exceeded: plan.removal.exceeded }
      : null,
    warnings: plan.warnings.slice(0, SITE_WARNINGS).map((w) => clip(w, MAX_WARNING_TEXT)),
  };
  // The answer lands in the survey's history: the least changed keys give way until it fits.
  while (answer.keys.length > 0 && Buffer.byteLength(JSON.stringify(answer)) > MAX_SITE_ANSWER_BYTES) {
    answer.keys.pop();
    answer.moreKeys++;
  }
  return answer;
}

/** The site's latest update run that is not a dry run, from Temporal's list of runs and the store's records. */
async function lastRun(deps: SiteAnswerDeps, site: string): Promise<SiteStateAnswer['lastRun']> {
  for (const listed of await deps.runs.list(RUNS_LOOKED_AT, { site })) {
    if (listed.run === undefined) continue;
    const record = await deps.store.runs.get(listed.run).catch(() => undefined);
    if (!record || record.dryRun) continue;
    return {
      run: record.id,
      workflowId: listed.workflowId,
      revision: record.revision,
      outcome: record.outcome,
      startedBy: record.startedBy,
      startedVia: record.startedVia,
      createdAt: record.createdAt.toISOString(),
      ...(listed.closeTime ? { endedAt: listed.closeTime } : {}),
    };
  }
  return undefined;
}

/** The site's state: what `relabel runs`, `relabel drift` and `relabel join status` would show of it, summed up. */
async function stateAnswer(deps: SiteAnswerDeps, site: string, revision: number, now: Date): Promise<SiteStateAnswer> {
  const run = await lastRun(deps, site);
  const report = await deps.store.drift.latestReport(site);
  const joins = await createJoins(deps).status(site);
  const watcher = joins.watcher;
  const answer: SiteStateAnswer = {
    revision,
    ...(run ? { lastRun: run } : {}),
    ...(report?.counts && report.finishedAt
      ? { drift: { report: report.id, at: report.finishedAt.toISOString(), revision: report.revision, action: report.action, counts: report.counts } }
      : {}),
    joins: {
      enabled: joins.enabled,
      ...(watcher
        ? { pending: watcher.pending, oldestPendingSeconds: watcher.oldestPendingSeconds, ...(watcher.failed !== undefined ? { failed: watcher.failed } : {}) }
        : {}),
      ...(joins.warning ? { warning: clip(joins.warning, MAX_SURVEY_TEXT) } : {}),
    },
    alerts: [],
  };
  const ended = run?.endedAt !== undefined ? new Date(run.endedAt) : undefined;
  answer.alerts = siteAlerts(
    {
      ...(run ? { lastRun: { outcome: run.outcome, ...(ended ? { endedAt: ended } : {}) } } : {}),
      ...(answer.drift ? { drift: { drifted: answer.drift.counts.drifted, at: new Date(answer.drift.at) } } : {}),
      joins: { enabled: joins.enabled, ...(watcher ? { oldestPendingSeconds: watcher.oldestPendingSeconds } : {}) },
    },
    now,
  );
  return answer;
}

/**
 * The site's answer to `question`: InvalidRequest when it means another
 * site; the store's own refusals (no committed revision, invalid
 * documents, an unknown revision) as they are.
 */
export async function answerSite(deps: SiteAnswerDeps, question: SiteQuestion, alive: () => void): Promise<SiteAnswer> {
  const { site, revision: latest } = await storeSite(deps.store, deps.designs);
  if (site !== question.site) {
    throw new RelabelError(
      FailureType.InvalidRequest,
      `this worker serves site ${site}, not site ${clip(question.site, 80)}: check the fleet registry's task queue for ${clip(question.site, 80)}`,
    );
  }
  if (question.kind === SurveyKind.plan) {
    const plan = await createPlans(deps.runs).plan({
      select: { all: true },
      ...(question.revision !== undefined ? { revision: question.revision } : {}),
      onProgress: alive,
    });
    return { site, state: AnswerState.answered, plan: planAnswer(plan) };
  }
  if (question.kind === SurveyKind.check) {
    // The checks an update run of every node of the site makes before it writes anything.
    const checked = await deps.runs.preflight({
      targets: undefined,
      select: { all: true },
      ...(question.revision !== undefined ? { revision: question.revision } : {}),
    });
    return { site, state: AnswerState.answered, check: { revision: checked.revision, targets: checked.targets.length } };
  }
  return { site, state: AnswerState.answered, status: await stateAnswer(deps, site, latest, new Date()) };
}
