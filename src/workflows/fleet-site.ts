/**
 * One site's part of a fleet rollout, all of it on that site's task queue:
 * the site's worker prepares a numbered run in its own store (the fleet
 * never touches a site's store or cluster), the fleet starts that run as
 * its child on the same queue, and waits for it. A site whose worker takes
 * no work within the rollout's site wait (Temporal's schedule-to-start
 * timeout on the prepare activity) is `unreachable`, never silently
 * skipped. A worker killed while its run goes on only delays the child:
 * the run goes on where it was when a worker polls again.
 * Workflow code: deterministic.
 */
import {
  ActivityFailure,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  TimeoutFailure,
  isCancellation,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { FleetSite } from '../core/fleet/sites.ts';
import { clip } from '../core/plan/text.ts';
import {
  MAX_SITE_REASON,
  SiteState,
  type FleetSiteActivities,
  type FleetSiteRunOptions,
  type PreparedSiteRun,
  type SiteOutcome,
} from '../contracts/fleet-messages.ts';
import { RunStatus } from '../contracts/messages.ts';
import type { RunAudit } from '../core/plan/run-audit.ts';
import { failureInfo } from './failure.ts';
import { updateLabels } from './update-labels.ts';

/** What a site's part needs of the rollout. */
export interface SiteRunContext {
  /** The fleet rollout's workflow ID. */
  fleet: string;
  run: FleetSiteRunOptions;
  audit?: RunAudit;
  /** Seconds the site's worker gets to take the prepare activity before the site is unreachable. */
  siteWaitSeconds: number;
}

/** The site activities on `site`'s own task queue. */
function siteActivities(site: FleetSite, waitSeconds: number): FleetSiteActivities {
  return proxyActivities<FleetSiteActivities>({
    taskQueue: site.taskQueue,
    // Unset (0) would wait forever for a worker that is gone; a schedule-to-start timeout is not retried.
    scheduleToStartTimeout: `${Math.max(1, waitSeconds)}s`,
    startToCloseTimeout: '2m',
    retry: { maximumAttempts: 5, maximumInterval: '30s' },
    summary: `site ${site.name}`,
  });
}

const reason = (text: string) => clip(text, MAX_SITE_REASON);

/** Whether `err` is an activity that no worker took in time. */
function notTaken(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START;
}

/** Prepares the site's run on its worker: the run, or the outcome that ends the site's part. */
async function prepare(site: FleetSite, context: SiteRunContext, activities: FleetSiteActivities): Promise<PreparedSiteRun | SiteOutcome> {
  try {
    return await activities.prepareSiteRun({
      site: site.name,
      fleet: context.fleet,
      run: context.run,
      ...(context.audit ? { audit: context.audit } : {}),
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    if (notTaken(err)) {
      return {
        site: site.name,
        state: SiteState.unreachable,
        reason: reason(`no worker took site ${site.name}'s work on task queue ${site.taskQueue} within ${context.siteWaitSeconds} s`),
      };
    }
    const info = failureInfo(err);
    return { site: site.name, state: SiteState.failed, reason: reason(`${info.type}: ${info.message}`) };
  }
}

/**
 * Runs `site`'s part to its end; never throws but for the rollout's own
 * cancellation. `started` hears the site run's workflow ID once it started.
 */
export async function runSite(site: FleetSite, context: SiteRunContext, started: (workflowId: string) => void): Promise<SiteOutcome> {
  const activities = siteActivities(site, context.siteWaitSeconds);
  const prepared = await prepare(site, context, activities);
  if ('state' in prepared) return prepared;
  let child;
  try {
    child = await startChild(updateLabels, {
      workflowId: prepared.workflowId,
      taskQueue: site.taskQueue,
      args: [{ ...prepared.input, fleet: context.fleet }],
      memo: prepared.memo,
      staticSummary: prepared.staticSummary,
      staticDetails: prepared.staticDetails,
      // An aborted or cancelled rollout asks each running site run to stop: it settles its nodes as a stopped run does.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
  } catch (err) {
    await activities.settleSiteRun({ site: site.name, run: prepared.run });
    const info = failureInfo(err);
    return { site: site.name, state: SiteState.failed, run: prepared.run, reason: reason(`the site's run did not start: ${info.message}`) };
  }
  started(prepared.workflowId);
  await activities.settleSiteRun({ site: site.name, run: prepared.run, runId: child.firstExecutionRunId });
  try {
    const result = await child.result();
    const ok = result.status === RunStatus.success;
    return {
      site: site.name,
      state: ok ? SiteState.succeeded : SiteState.failed,
      run: result.run,
      status: result.status,
      counts: result.counts,
      ...(ok ? {} : { reason: reason(`${result.counts.failure} of ${result.counts.total} node(s) failed`) }),
    };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const info = failureInfo(err);
    return { site: site.name, state: SiteState.failed, run: prepared.run, reason: reason(`${info.type}: ${info.message}`) };
  }
}
