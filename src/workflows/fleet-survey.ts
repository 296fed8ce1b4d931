/**
 * `fleetSurvey`: one question asked of every site of a fleet, each answer
 * computed by that site's worker on its own task queue (a plan is that
 * site's dry run, in its own store and cluster; the centre reads neither),
 * `concurrency` sites at a time. A site whose worker takes the question
 * within the site wait answers or fails with its reason; one whose worker
 * does not is `unreachable`, never left out. The result sums the answers;
 * each site's answer is read a page at a time through the page Query, also
 * once the survey has ended. Each answer is bounded, so the history grows
 * with the sites (at most MAX_FLEET_SITES), not with their nodes.
 * Workflow code: deterministic.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { fleetErrors, type FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { clip } from '../core/plan/text.ts';
import {
  AnswerState,
  DEFAULT_SURVEY_CONCURRENCY,
  DEFAULT_SURVEY_WAIT_SECONDS,
  MAX_SURVEY_TEXT,
  SurveyKind,
  fleetSurveyPageQuery,
  fleetSurveyProgressQuery,
  type FleetSurveyActivities,
  type FleetSurveyInput,
  type FleetSurveyResult,
  type SiteAnswer,
} from '../contracts/fleet-survey.ts';
import { failureInfo } from './failure.ts';
import { surveyPage, surveyResult } from './fleet-survey-totals.ts';

/** What is wrong with the input: empty when it can be asked. */
function inputErrors(input: FleetSurveyInput): string[] {
  const wrong = [...fleetErrors(input.sites)];
  if (input.sites.length === 0) wrong.push('no sites: a fleet survey needs at least one');
  if (!Object.values(SurveyKind).includes(input.kind))
    wrong.push(`unknown question ${JSON.stringify(clip(String(input.kind), 40))}: expected plan, state or check`);
  if (input.revision !== undefined && !(Number.isSafeInteger(input.revision) && input.revision > 0)) wrong.push('revision: expected a positive integer');
  return wrong;
}

/** The site activity on `site`'s own queue. */
function siteActivity(site: FleetSite, waitSeconds: number, kind: SurveyKind): FleetSurveyActivities {
  return proxyActivities<FleetSurveyActivities>({
    taskQueue: site.taskQueue,
    // Unset would wait forever for a worker that is gone; a schedule-to-start timeout is not retried.
    scheduleToStartTimeout: `${Math.max(1, waitSeconds)}s`,
    // A plan is a dry run of every node of the site: it heartbeats while the site computes it.
    startToCloseTimeout: kind === SurveyKind.plan ? '30m' : '2m',
    heartbeatTimeout: '1m',
    retry: { maximumAttempts: 3, maximumInterval: '30s' },
    summary: `site ${site.name}`,
  });
}

/** Asks `site`; never throws but for the survey's own cancellation. */
async function ask(site: FleetSite, input: FleetSurveyInput, waitSeconds: number): Promise<SiteAnswer> {
  try {
    const answer = await siteActivity(site, waitSeconds, input.kind).answerSite({
      site: site.name,
      kind: input.kind,
      ...(input.revision !== undefined ? { revision: input.revision } : {}),
    });
    return { ...answer, site: site.name };
  } catch (err) {
    if (isCancellation(err)) throw err;
    if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START) {
      return {
        site: site.name,
        state: AnswerState.unreachable,
        reason: `no worker took site ${site.name}'s question on task queue ${site.taskQueue} within ${waitSeconds} s`,
      };
    }
    const info = failureInfo(err);
    return { site: site.name, state: AnswerState.failed, reason: clip(`${info.type}: ${info.message}`, MAX_SURVEY_TEXT) };
  }
}

/** Asks every site (see the module's comment). */
export async function fleetSurvey(input: FleetSurveyInput): Promise<FleetSurveyResult> {
  const wrong = inputErrors(input);
  if (wrong.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `invalid fleet survey: ${wrong.slice(0, 10).join('; ')}${wrong.length > 10 ? ` and ${wrong.length - 10} more` : ''}`,
      FailureType.InvalidRequest,
    );
  }
  const concurrency = Math.max(1, Math.trunc(input.siteConcurrency ?? DEFAULT_SURVEY_CONCURRENCY));
  const waitSeconds = Math.max(1, Math.trunc(input.siteWaitSeconds ?? DEFAULT_SURVEY_WAIT_SECONDS));
  const answers: SiteAnswer[] = [];
  const asking = new Set<string>();
  setHandler(fleetSurveyPageQuery, (request) => surveyPage(answers, request ?? {}));
  setHandler(fleetSurveyProgressQuery, () => {
    const r = surveyResult(input.kind, input.sites.length, answers);
    return {
      kind: input.kind,
      sites: r.sites,
      answered: r.answered,
      failed: r.failed,
      unreachable: r.unreachable,
      asking: [...asking].sort().slice(0, concurrency),
    };
  });
  setCurrentDetails(`**Asking** ${input.sites.length} site(s) for their ${input.kind}, ${concurrency} at a time`);
  const asked: Promise<void>[] = [];
  for (const site of input.sites) {
    await condition(() => asking.size < concurrency);
    asking.add(site.name);
    asked.push(
      ask(site, input, waitSeconds).then((answer) => {
        asking.delete(site.name);
        answers.push(answer);
      }),
    );
  }
  await Promise.all(asked);
  const result = surveyResult(input.kind, input.sites.length, answers);
  setCurrentDetails(`**Done**: ${result.answered} of ${result.sites} site(s) answered, ${result.failed} failed, ${result.unreachable} unreachable`);
  return result;
}
