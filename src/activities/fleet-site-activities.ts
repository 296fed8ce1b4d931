/**
 * The activities a site's worker runs for the fleet, on the site's own
 * task queue: prepare a run of its site in its own store, and settle it
 * once the rollout started it as its child (or could not); answer a fleet
 * survey's question (the site's plan, its state). They go
 * through the site run preparer the worker's entry point injects (the
 * facade's start, in two halves), so a fleet's site run is an ordinary
 * numbered run with the same checks as any other.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType, isFailureType } from '../core/plan/failure-types.ts';
import type { FleetSiteActivities } from '../contracts/fleet-messages.ts';
import type { FleetSurveyActivities } from '../contracts/fleet-survey.ts';
import type { SiteRunPreparer } from '../temporal/run-starter.ts';

/** A refusal the preparer made on purpose (a RelabelError's type) as a failure the rollout reports, never retried. */
function refusal(err: unknown): unknown {
  const type = (err as { type?: unknown }).type;
  return isFailureType(type) ? ApplicationFailure.nonRetryable((err as Error).message, type) : err;
}

/** The fleet's site activities over `preparer`; without one, they refuse (the worker was started without it). */
export function createFleetSiteActivities(preparer: SiteRunPreparer | undefined): FleetSiteActivities & FleetSurveyActivities {
  const needed = (): SiteRunPreparer => {
    if (!preparer) throw ApplicationFailure.nonRetryable('this worker cannot prepare fleet runs (no site run preparer)', FailureType.InternalError);
    return preparer;
  };
  return {
    async prepareSiteRun(input) {
      try {
        const { info, client } = Context.current();
        const rollout = info.workflowExecution;
        // One key for every attempt of this activity: its rollout's execution and its activity ID.
        return await needed().prepare(client, input, `fleet:${rollout?.workflowId ?? ''}/${rollout?.runId ?? ''}/${info.activityId}`);
      } catch (err) {
        throw refusal(err);
      }
    },
    async settleSiteRun(input) {
      await needed().settle(Context.current().client, input);
    },
    async answerSite(question) {
      const context = Context.current();
      // Beats also between the plan's progress reports, so a site computing a long dry run is not taken for dead.
      const beat = setInterval(() => context.heartbeat(), 10_000);
      try {
        return await needed().answer(context.client, question, () => context.heartbeat());
      } catch (err) {
        throw refusal(err);
      } finally {
        clearInterval(beat);
      }
    },
  };
}
