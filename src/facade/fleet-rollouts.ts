/**
 * Fleet rollouts as the CLI and the API see them: started over the
 * registered sites (all, or those a label selector picks), their progress
 * read from the running rollout, their gates and pause driven by its
 * control Update. The rollout itself runs at the centre, on the centre's
 * task queue; each site's run runs on the site's own.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { assignFleetWaves, effectiveFleetRollout, fleetRolloutErrors, rolloutSites, type FleetRollout } from '../core/fleet/fleet-waves.ts';
import { siteNameErrors } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import type { LabelSelector } from '../core/plan/label-selector.ts';
import { rolloutErrors } from '../core/plan/waves.ts';
import { runAudit, StartedVia } from '../core/plan/run-audit.ts';
import {
  fleetControlUpdate,
  fleetProgressQuery,
  fleetRolloutWorkflowId,
  type FleetControlAnswer,
  type FleetProgress,
  type FleetRolloutInput,
  type FleetRolloutResult,
  type FleetSiteRunOptions,
} from '../contracts/fleet-messages.ts';
import type { ControlVerb } from '../contracts/messages.ts';
import { fleetRollout } from '../workflows/fleet-rollout.ts';
import { chooseSites, type Fleet } from './fleet.ts';
import type { FleetSurveys } from './fleet-survey.ts';
import { idleTaskQueueWarning, QUERY_TIMEOUT_MS } from './idle-task-queue.ts';
import { RelabelError, relabelErrorOf } from './relabel-error.ts';

/** What a new fleet rollout is asked to do. */
export interface FleetRolloutRequest {
  /** Its name: one rollout of that name runs at a time. */
  name: string;
  /** The registered sites it covers: those matching this selector on their labels (absent: all). */
  select?: LabelSelector;
  rollout: FleetRollout;
  run: FleetSiteRunOptions;
  siteConcurrency?: number;
  /**
   * Seconds each site's worker gets to answer the preflight (does the site
   * accept the run: documents valid, revision there?) before the rollout
   * starts; 0 skips it. Default {@link DEFAULT_PREFLIGHT_WAIT_SECONDS}.
   */
  preflightWaitSeconds?: number;
  by: string;
  via?: StartedVia;
}

/** A fleet rollout just started. */
export interface StartedFleetRollout {
  workflowId: string;
  runId: string;
  sites: number;
  waves: { name: string; sites: number }[];
}

/** Where a rollout stands: running with its progress, or ended with its result. */
export type FleetRolloutStatus =
  | { workflowId: string; runId: string; execution: 'RUNNING'; progress?: FleetProgress; unanswered?: string }
  | { workflowId: string; runId: string; execution: string; result?: FleetRolloutResult };

/** The fleet rollouts facade. */
export interface FleetRollouts {
  /** Starts a rollout; InvalidRequest (nothing started) for a bad rollout, no site selected, or a canary naming an unselected site; RunInProgress when one of that name runs. */
  start(request: FleetRolloutRequest): Promise<StartedFleetRollout>;
  status(name: string): Promise<FleetRolloutStatus>;
  /** Applies a control verb; refused (NotRunning, naming why) for a gate verb the rollout does not wait for or an ended rollout. */
  control(name: string, verb: ControlVerb, by: string): Promise<FleetControlAnswer>;
}

/** What the rollouts need: the client, the fleet task queue (the centre worker's, which runs the rollout), and the registry. */
export interface FleetRolloutDeps {
  client: Client;
  taskQueue: string;
  fleet: Fleet;
  /** The surveys the preflight asks the sites through; without them, no preflight. */
  surveys?: Pick<FleetSurveys, 'preflight'>;
}

/** Seconds each site's worker gets to answer a rollout's preflight, by default. */
export const DEFAULT_PREFLIGHT_WAIT_SECONDS = 30;

/** Builds the fleet rollouts facade. */
export function createFleetRollouts(deps: FleetRolloutDeps): FleetRollouts {
  const { client } = deps;
  const idOf = (name: string) => {
    const wrong = siteNameErrors(name);
    if (wrong.length > 0) throw new RelabelError(FailureType.InvalidName, wrong[0]?.replace('site name', 'rollout name') ?? 'bad name');
    return fleetRolloutWorkflowId(name);
  };
  return {
    async start(request) {
      const workflowId = idOf(request.name);
      const wrong = fleetRolloutErrors(request.rollout);
      if (wrong.length > 0) throw new RelabelError(FailureType.InvalidRequest, `invalid fleet rollout: ${wrong.join('; ')}`);
      const siteRollout = request.run.rollout ? rolloutErrors(request.run.rollout) : [];
      if (siteRollout.length > 0) throw new RelabelError(FailureType.InvalidRequest, `invalid site rollout: ${siteRollout.join('; ')}`);
      const sites = await chooseSites(deps.fleet, request.select ? { select: request.select } : {});
      const waves = assignFleetWaves(sites, effectiveFleetRollout(request.rollout));
      if (!waves.ok) throw new RelabelError(FailureType.InvalidRequest, waves.message);
      // Every site must take the run before any starts: a site with no worker, or whose documents refuse the revision, is named now.
      const wait = request.preflightWaitSeconds ?? DEFAULT_PREFLIGHT_WAIT_SECONDS;
      if (deps.surveys && wait > 0) {
        // The preflight is a survey run by the centre worker: with none polling, it would wait for ever.
        if ((await idleTaskQueueWarning(client, client.options.namespace, deps.taskQueue)) !== undefined) {
          throw new RelabelError(
            FailureType.Unavailable,
            `no centre worker is polling the fleet task queue ${deps.taskQueue}, so the sites cannot be asked before the rollout and nothing started: start one with \`relabel-worker --role centre --fleet-task-queue ${deps.taskQueue}\` (or skip the check with --preflight-wait 0)`,
          );
        }
        await deps.surveys.preflight(sites, {
          ...(request.run.revision !== undefined ? { revision: request.run.revision } : {}),
          waitSeconds: wait,
          ...(request.siteConcurrency !== undefined ? { siteConcurrency: request.siteConcurrency } : {}),
        });
      }
      const input: FleetRolloutInput = {
        name: request.name,
        sites: rolloutSites(sites, request.rollout),
        rollout: request.rollout,
        run: request.run,
        audit: runAudit(request.by, request.via ?? StartedVia.cli),
        ...(request.siteConcurrency !== undefined ? { siteConcurrency: request.siteConcurrency } : {}),
      };
      try {
        const handle = await client.workflow.start(fleetRollout, {
          workflowId,
          taskQueue: deps.taskQueue,
          args: [input],
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
          staticSummary: `Fleet rollout ${request.name}: ${sites.length} site(s) in ${waves.value.length} wave(s)`,
          staticDetails: `Started by **${request.by}**. Waves: ${waves.value
            .slice(0, 10)
            .map((w) => `${w.name} (${w.sites.length})`)
            .join(', ')}${waves.value.length > 10 ? ` and ${waves.value.length - 10} more` : ''}.`,
        });
        return { workflowId, runId: handle.firstExecutionRunId, sites: sites.length, waves: waves.value.map((w) => ({ name: w.name, sites: w.sites.length })) };
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw new RelabelError(FailureType.RunInProgress, `fleet rollout ${request.name} is already running (${workflowId})`);
        throw err;
      }
    },

    async status(name) {
      const handle = client.workflow.getHandle(idOf(name));
      const described = await handle.describe().catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw new RelabelError(FailureType.RunNotFound, `no fleet rollout ${name}`);
        throw err;
      });
      const base = { workflowId: described.workflowId, runId: described.runId };
      if (described.status.name !== 'RUNNING') {
        const result = described.status.name === 'COMPLETED' ? ((await handle.result()) as FleetRolloutResult) : undefined;
        return { ...base, execution: described.status.name, ...(result ? { result } : {}) };
      }
      try {
        const progress = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle.query(fleetProgressQuery));
        return { ...base, execution: 'RUNNING' as const, progress };
      } catch {
        return {
          ...base,
          execution: 'RUNNING' as const,
          // Only the centre worker runs the rollout: a site's worker never polls the fleet queue, so name the one that does.
          unanswered: `the rollout did not answer within ${QUERY_TIMEOUT_MS / 1000} s: is the centre worker polling the fleet task queue ${deps.taskQueue}? Start one with \`relabel-worker --role centre --fleet-task-queue ${deps.taskQueue}\``,
        };
      }
    },

    async control(name, verb, by) {
      const handle = client.workflow.getHandle(idOf(name));
      try {
        return await handle.executeUpdate(fleetControlUpdate, { args: [{ verb, by }] });
      } catch (err) {
        const refused = err instanceof WorkflowUpdateFailedError ? relabelErrorOf(err, (m) => `cannot ${verb} fleet rollout ${name}: ${m}`) : undefined;
        if (refused) throw refused;
        if (err instanceof WorkflowNotFoundError) throw new RelabelError(FailureType.NotRunning, `cannot ${verb} fleet rollout ${name}: it is not running`);
        throw err;
      }
    },
  };
}
