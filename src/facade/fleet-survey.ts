/**
 * Fleet surveys as the CLI and the API see them: `relabel fleet plan`
 * (each site's dry run, computed in that site) and `relabel fleet status`
 * without a rollout name (each site's last run, drift and joins). A survey
 * is the `fleetSurvey` workflow on the centre's task queue, asking each
 * registered site (all, named ones, or those a label selector picks) on its
 * own queue; this waits for it and reads its answers a page at a time.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import type { LabelSelector } from '../core/plan/label-selector.ts';
import type { FleetSite } from '../core/fleet/sites.ts';
import {
  fleetSurveyPageQuery,
  fleetSurveyProgressQuery,
  fleetSurveyWorkflowId,
  MAX_SURVEY_PAGE,
  type FleetSurveyInput,
  type FleetSurveyProgress,
  type FleetSurveyResult,
  SurveyKind,
  type SurveyPage,
  type SurveyPageRequest,
} from '../contracts/fleet-survey.ts';
import { fleetSurvey } from '../workflows/fleet-survey.ts';
import { chooseSites, type Fleet } from './fleet.ts';
import { idleTaskQueueWarning, QUERY_TIMEOUT_MS } from './idle-task-queue.ts';
import { RelabelError, relabelErrorOf } from './relabel-error.ts';

/** How often a waiting survey's progress is read. */
const PROGRESS_EVERY_MS = 1000;

/** Which sites to ask, and what. */
export interface SurveyRequest {
  kind: SurveyKind;
  /** Registered sites by name; each must be registered. */
  sites?: string[];
  /** Registered sites whose labels match. */
  select?: LabelSelector;
  /** For `plan`: the revision each site plans (absent: each site's latest committed). */
  revision?: number;
  siteConcurrency?: number;
  siteWaitSeconds?: number;
  /** Called about every second with the survey's progress. */
  onProgress?: (progress: FleetSurveyProgress) => void;
}

/** An ended survey: its result, and its answers' first page. */
export interface EndedSurvey {
  workflowId: string;
  runId: string;
  result: FleetSurveyResult;
  page: SurveyPage;
}

/** The fleet surveys facade. */
export interface FleetSurveys {
  /**
   * Asks the chosen sites and waits for every answer. InvalidRequest,
   * nothing started, when no site is registered, a named site is not, or
   * the selection is empty.
   */
  ask(request: SurveyRequest, page?: SurveyPageRequest): Promise<EndedSurvey>;
  /** A page of an ended (or running) survey's answers, by its workflow ID. */
  page(workflowId: string, request: SurveyPageRequest): Promise<SurveyPage>;
  /**
   * A rollout's preflight: asks each of `sites` whether it would start a
   * run of `revision` (its latest committed when absent) and refuses
   * (InvalidRequest), naming each site that would not or whose worker did
   * not answer within `waitSeconds`, and why. Writes nothing.
   */
  preflight(sites: FleetSite[], options: { revision?: number; waitSeconds: number; siteConcurrency?: number }): Promise<void>;
}

/** What the surveys need: the client, the centre's task queue, and the registry. */
export interface FleetSurveyDeps {
  client: Client;
  taskQueue: string;
  fleet: Fleet;
}

/** The survey's static details in the Temporal UI, by kind. */
const DETAILS: Record<SurveyKind, (revision?: number) => string> = {
  plan: (revision) => `Each site's dry run${revision !== undefined ? ` of revision ${revision}` : ''}, computed by its own worker: nothing written.`,
  state: () => "Each site's last run, drift and join watcher, read by its own worker.",
  check: (revision) => `Whether each site would start a run${revision !== undefined ? ` of revision ${revision}` : ''}: its checks only, nothing written.`,
};

/** Builds the fleet surveys facade. */
export function createFleetSurveys(deps: FleetSurveyDeps): FleetSurveys {
  const { client } = deps;
  const page = async (workflowId: string, request: SurveyPageRequest): Promise<SurveyPage> => {
    const limit = Math.min(MAX_SURVEY_PAGE, Math.max(1, request.limit ?? 50));
    try {
      return await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
        client.workflow.getHandle(workflowId).query(fleetSurveyPageQuery, { ...request, limit }),
      );
    } catch (err) {
      throw (
        relabelErrorOf(err) ??
        new RelabelError(
          FailureType.Unavailable,
          `fleet survey ${workflowId} did not answer within ${QUERY_TIMEOUT_MS / 1000} s: is the centre worker polling the fleet task queue ${deps.taskQueue} (relabel-worker --role centre)?`,
        )
      );
    }
  };
  /** Runs a survey of `sites` to its end. */
  async function askSites(request: SurveyRequest, sites: FleetSite[]): Promise<{ workflowId: string; runId: string; result: FleetSurveyResult }> {
    const input: FleetSurveyInput = {
      kind: request.kind,
      sites,
      ...(request.revision !== undefined ? { revision: request.revision } : {}),
      ...(request.siteConcurrency !== undefined ? { siteConcurrency: request.siteConcurrency } : {}),
      ...(request.siteWaitSeconds !== undefined ? { siteWaitSeconds: request.siteWaitSeconds } : {}),
    };
    // The survey is run by the centre worker: with none polling the fleet queue it would wait for ever.
    if ((await idleTaskQueueWarning(client, client.options.namespace, deps.taskQueue)) !== undefined) {
      throw new RelabelError(
        FailureType.Unavailable,
        `no centre worker is polling the fleet task queue ${deps.taskQueue}, so no site can be asked and nothing started: start one with \`relabel-worker --role centre --fleet-task-queue ${deps.taskQueue}\``,
      );
    }
    const workflowId = fleetSurveyWorkflowId(request.kind, randomUUID().slice(0, 8));
    const handle = await client.workflow.start(fleetSurvey, {
      workflowId,
      taskQueue: deps.taskQueue,
      args: [input],
      staticSummary: `Fleet ${request.kind}: ${sites.length} site(s)`,
      staticDetails: DETAILS[request.kind](request.revision),
    });
    let timer: NodeJS.Timeout | undefined;
    if (request.onProgress) {
      const report = request.onProgress;
      timer = setInterval(() => {
        handle
          .query(fleetSurveyProgressQuery)
          .then(report)
          .catch(() => undefined);
      }, PROGRESS_EVERY_MS);
    }
    try {
      return { workflowId, runId: handle.firstExecutionRunId, result: await handle.result() };
    } catch (err) {
      throw relabelErrorOf(err) ?? err;
    } finally {
      if (timer) clearInterval(timer);
    }
  }

  return {
    async ask(request, first = {}) {
      const ended = await askSites(request, await chooseSites(deps.fleet, request));
      return { ...ended, page: await page(ended.workflowId, first) };
    },
    async preflight(sites, options) {
      const ended = await askSites(
        {
          kind: SurveyKind.check,
          ...(options.revision !== undefined ? { revision: options.revision } : {}),
          siteWaitSeconds: options.waitSeconds,
          ...(options.siteConcurrency !== undefined ? { siteConcurrency: options.siteConcurrency } : {}),
        },
        sites,
      );
      const { result } = ended;
      const refused = result.failed + result.unreachable;
      if (refused === 0) return;
      const named = result.failures.slice(0, 10).map((f) => `${f.site} (${f.state}: ${f.reason ?? 'no reason given'})`);
      throw new RelabelError(
        FailureType.InvalidRequest,
        `${refused} of ${result.sites} site(s) would not start the rollout's run, so nothing started: ${named.join('; ')}` +
          `${refused > named.length ? ` and ${refused - named.length} more (${ended.workflowId})` : ''}`,
      );
    },
    page,
  };
}
