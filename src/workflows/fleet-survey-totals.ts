/**
 * What a fleet survey sums and shows of its sites' answers: the plan's
 * totals over the sites, the alerts by site count, the failure sample and
 * the pages of answers. Bounded whatever the number of sites.
 * Workflow code: deterministic.
 */
import { byText } from '../core/plan/label-plan.ts';
import {
  AnswerState,
  FLEET_PLAN_KEYS,
  MAX_SURVEY_PAGE,
  SITE_KEY_SOURCES,
  SURVEY_FAILURE_SAMPLE,
  type FleetPlanTotals,
  type FleetSurveyResult,
  type SiteAnswer,
  type SurveyKind,
  type SurveyPage,
  type SurveyPageRequest,
} from '../contracts/fleet-survey.ts';

const changesOf = (k: { gain: number; change: number; lose: number }) => k.gain + k.change + k.lose;

/** The plans of the answered sites, summed. */
export function planTotals(answers: Iterable<SiteAnswer>): FleetPlanTotals {
  const totals: FleetPlanTotals = {
    reached: 0,
    targets: 0,
    planned: 0,
    changing: 0,
    gain: 0,
    change: 0,
    lose: 0,
    adopt: 0,
    brake: { owned: 0, removed: 0, sitesExceeded: 0 },
    keys: [],
    moreKeys: 0,
  };
  const keys = new Map<string, FleetPlanTotals['keys'][number] & { allSources: Set<string> }>();
  for (const answer of answers) {
    const plan = answer.plan;
    if (!plan) continue;
    if (plan.changing > 0) totals.reached++;
    totals.targets += plan.targets;
    totals.planned += plan.planned;
    totals.changing += plan.changing;
    totals.gain += plan.gain;
    totals.change += plan.change;
    totals.lose += plan.lose;
    totals.adopt += plan.adopt;
    if (plan.brake) {
      totals.brake.owned += plan.brake.owned;
      totals.brake.removed += plan.brake.removed;
      if (plan.brake.exceeded) totals.brake.sitesExceeded++;
    }
    for (const k of plan.keys) {
      let entry = keys.get(k.key);
      if (!entry) keys.set(k.key, (entry = { key: k.key, gain: 0, change: 0, lose: 0, adopt: 0, sources: [], sites: 0, allSources: new Set() }));
      entry.gain += k.gain;
      entry.change += k.change;
      entry.lose += k.lose;
      entry.adopt += k.adopt;
      entry.sites++;
      for (const s of k.sources) entry.allSources.add(s);
    }
  }
  const sorted = [...keys.values()].sort((a, b) => changesOf(b) - changesOf(a) || byText(a.key, b.key));
  totals.keys = sorted.slice(0, FLEET_PLAN_KEYS).map(({ allSources, ...k }) => ({ ...k, sources: [...allSources].sort(byText).slice(0, SITE_KEY_SOURCES) }));
  totals.moreKeys = Math.max(0, sorted.length - FLEET_PLAN_KEYS);
  return totals;
}

/** How the survey ended, from its answers. */
export function surveyResult(kind: SurveyKind, sites: number, answers: readonly SiteAnswer[]): FleetSurveyResult {
  const count = (state: AnswerState) => answers.filter((a) => a.state === state).length;
  const result: FleetSurveyResult = {
    kind,
    sites,
    answered: count(AnswerState.answered),
    failed: count(AnswerState.failed),
    unreachable: count(AnswerState.unreachable),
    failures: answers.filter((a) => a.state !== AnswerState.answered).slice(0, SURVEY_FAILURE_SAMPLE),
  };
  if (kind === 'plan') result.plan = planTotals(answers);
  else if (kind === 'state') {
    const alerts: NonNullable<FleetSurveyResult['alerts']> = {};
    for (const a of answers) for (const alert of a.status?.alerts ?? []) alerts[alert] = (alerts[alert] ?? 0) + 1;
    result.alerts = alerts;
  }
  return result;
}

/** A page of answers in the order asked: by site name, or plans writing the most nodes first (unanswered sites last). */
export function surveyPage(answers: readonly SiteAnswer[], request: SurveyPageRequest = {}): SurveyPage {
  const offset = Math.max(0, Math.trunc(Number(request.offset ?? 0)) || 0);
  const limit = Math.min(MAX_SURVEY_PAGE, Math.max(1, Math.trunc(Number(request.limit ?? 50)) || 50));
  const ordered = [...answers].sort(
    request.order === 'changes' ? (a, b) => (b.plan?.changing ?? -1) - (a.plan?.changing ?? -1) || byText(a.site, b.site) : (a, b) => byText(a.site, b.site),
  );
  return { total: answers.length, offset, items: ordered.slice(offset, offset + limit) };
}
