/**
 * The one facade over update runs shared by the CLI and the HTTP API: start
 * (with the same checks the workflow makes, so bad requests fail before
 * anything starts), status, wait, retry and cancel. Entry points stay thin.
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/failure-types.ts';
import { formatError } from '../core/site-error.ts';
import { normalizeTargets } from '../core/targets.ts';
import { runnableRevision, validateDocuments } from '../store/revision-checks.ts';
import type { RevisionStore } from '../store/revision-store.ts';
import type { Progress, UpdateLabelsInput, UpdateLabelsResult } from '../workflows/messages.ts';
import { nodeResultsQuery, progressQuery } from '../workflows/messages.ts';
import { updateLabels } from '../workflows/update-labels.ts';
import { RelabelError } from './relabel-error.ts';

/** What the facade needs. */
export interface RunsDeps {
  client: Client;
  store: RevisionStore;
  taskQueue: string;
  namespace: string;
  /** Base URL of the Temporal Web UI, for links. */
  uiUrl?: string;
  /** Whether the server has relabel's search attributes registered. */
  searchAttributes?: boolean;
}

/** A run as the facade names it. */
export interface RunRef {
  workflowId: string;
  runId: string;
  /** Link to the run in the Temporal Web UI, when its URL is known. */
  uiLink?: string;
}

/** Options of a new update run. */
export interface StartOptions {
  targets: unknown;
  revision?: number;
  concurrency?: number;
  dryRun?: boolean;
  continueAsNewAfter?: number;
  retryOf?: { workflowId: string; runId: string };
  /** The action name the run was asked for (Shipyard's `update_labels` or `relabel_nodes`), kept in its memo. */
  action?: string;
}

/** A run as Temporal's visibility store lists it. */
export interface RunListing {
  workflowId: string;
  runId: string;
  /** The action name kept in the run's memo, when it was started with one. */
  action?: string;
  execution: string;
  startTime: string;
  closeTime?: string;
}

/** A run's state as reported by `status`. */
export interface RunStatusReport extends RunRef {
  /** The action name kept in the run's memo, when it was started with one. */
  action?: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT */
  execution: string;
  startTime: string;
  closeTime?: string;
  progress?: Progress;
  result?: UpdateLabelsResult;
  /** Why the run failed (a rejection): its failure type and message. */
  failure?: { type: string; message: string };
}

/** How long a progress query may take before status reports none (no worker polling). */
export const QUERY_TIMEOUT_MS = 3000;

/** Rejects when `promise` has not settled within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `{action}` from a run's memo, or nothing. Continue-as-new carries the memo along. */
function memoAction(memo: Record<string, unknown> | undefined): { action?: string } {
  return typeof memo?.action === 'string' ? { action: memo.action } : {};
}

/** Prefix of every update run's workflow ID. */
export const RUN_ID_PREFIX = 'update-labels';

/** Builds the facade. */
export function createRuns(deps: RunsDeps) {
  const { client, store } = deps;
  const link = (workflowId: string, runId: string) =>
    deps.uiUrl ? `${deps.uiUrl}/namespaces/${deps.namespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history` : undefined;

  /**
   * The checks the workflow makes, in Shipyard's order, against the store:
   * invalid targets, no committed revision, unknown revision, no revision that
   * took part in a site action, invalid documents. Returns the revision and
   * site. Throws a {@link RelabelError}; reads only.
   */
  async function preflight(options: Pick<StartOptions, 'targets' | 'revision'>): Promise<{ targets: string[]; revision: number; site: string }> {
    const parsed = normalizeTargets(options.targets);
    if (!parsed.ok) throw new RelabelError(FailureType.InvalidTargets, parsed.message);
    const checked = await runnableRevision(store, options.revision);
    if (!checked.ok) throw new RelabelError(checked.type, checked.message);
    const revision = checked.revision;
    const validation = validateDocuments(await store.documents(revision));
    if (!validation.ok) {
      throw new RelabelError(
        FailureType.DocumentValidationFailed,
        `revision ${revision} has ${validation.errors.length} document error(s):\n${validation.errors.map(formatError).join('\n')}`,
        validation.errors,
      );
    }
    return { targets: parsed.targets, revision, site: validation.design.site ?? 'default' };
  }

  /**
   * Starts an update run after {@link preflight}. One real run per site at a
   * time: the workflow ID is `update-labels/<site>`, and a second start while
   * one runs fails with RunInProgress. Dry runs get IDs of their own.
   */
  async function start(options: StartOptions): Promise<RunRef & { revision: number; site: string; targets: string[] }> {
    const { targets, revision, site } = await preflight(options);
    const dryRun = options.dryRun ?? false;
    const workflowId = dryRun ? `${RUN_ID_PREFIX}/${site}/dry-run/${randomUUID().slice(0, 8)}` : `${RUN_ID_PREFIX}/${site}`;
    const input: UpdateLabelsInput = {
      targets,
      revision,
      dryRun,
      searchAttributes: deps.searchAttributes !== false,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.continueAsNewAfter !== undefined ? { continueAsNewAfter: options.continueAsNewAfter } : {}),
      ...(options.retryOf ? { retryOf: options.retryOf } : {}),
    };
    const shown = targets.length <= 5 ? targets.join(', ') : `${targets.slice(0, 5).join(', ')} and ${targets.length - 5} more`;
    try {
      const handle = await client.workflow.start(updateLabels, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        ...(options.action ? { memo: { action: options.action } } : {}),
        staticSummary: `${dryRun ? 'Dry run: plan' : 'Update'} labels of ${targets.length} node(s) to revision ${revision}`,
        staticDetails:
          `update_labels on site **${site}**, revision ${revision}${dryRun ? ' (dry run: nothing written)' : ''}.\n\n` +
          `Targets: ${shown}.` +
          (options.retryOf ? `\n\nRetry of ${options.retryOf.workflowId} run ${options.retryOf.runId}.` : ''),
      });
      const runId = handle.firstExecutionRunId;
      return { workflowId, runId, uiLink: link(workflowId, runId), revision, site, targets };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new RelabelError(FailureType.RunInProgress, `an update_labels run is already in progress for site ${site} (${workflowId}); wait for it or cancel it`);
      }
      throw err;
    }
  }

  /**
   * Describes a run. A run that continued as new is followed down its chain
   * to the execution that carries it on, so a run is known by its first run
   * ID for its whole life.
   */
  async function describe(workflowId: string, runId?: string): Promise<WorkflowExecutionDescription> {
    try {
      let d = await client.workflow.getHandle(workflowId, runId).describe();
      while (d.status.name === 'CONTINUED_AS_NEW') {
        const history = await client.workflow.getHandle(workflowId, d.runId).fetchHistory();
        const last = history.events?.at(-1);
        const next = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        if (!next) break;
        d = await client.workflow.getHandle(workflowId, next).describe();
      }
      return d;
    } catch (err) {
      if ((err as Error).name === 'WorkflowNotFoundError') throw new RelabelError('RunNotFound', `no run ${workflowId}${runId ? ` (${runId})` : ''}`);
      throw err;
    }
  }

  /** A run's status, progress and (when finished) result or rejection. */
  async function status(workflowId: string, runId?: string): Promise<RunStatusReport> {
    const d = await describe(workflowId, runId);
    const handle = client.workflow.getHandle(workflowId, d.runId);
    const report: RunStatusReport = {
      workflowId,
      runId: d.runId,
      uiLink: link(workflowId, d.runId),
      ...memoAction(d.memo),
      execution: d.status.name,
      startTime: d.startTime.toISOString(),
      ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    };
    if (d.status.name === 'COMPLETED') {
      report.result = (await handle.result()) as UpdateLabelsResult;
    } else if (d.status.name === 'FAILED') {
      try {
        await handle.result();
      } catch (err) {
        const cause = err instanceof WorkflowFailedError ? err.cause : err;
        report.failure = cause instanceof ApplicationFailure ? { type: cause.type ?? 'Error', message: cause.message } : { type: 'Error', message: String((cause as Error)?.message ?? cause) };
      }
    }
    if (d.status.name === 'RUNNING' || d.status.name === 'COMPLETED') {
      // A query needs a worker; without one, report no progress rather than hang.
      report.progress = await withTimeout(handle.query(progressQuery), QUERY_TIMEOUT_MS).catch(() => undefined);
    }
    return report;
  }

  /**
   * Waits for a run to close, calling `onProgress` about every `everyMs`
   * while it runs (continue-as-new is followed). Returns the final status.
   */
  async function wait(ref: { workflowId: string; runId?: string }, onProgress?: (p: Progress) => void, everyMs = 500): Promise<RunStatusReport> {
    const handle = client.workflow.getHandle(ref.workflowId, ref.runId);
    const done = handle.result().then(
      () => true,
      () => true,
    );
    let finished = false;
    void done.then(() => (finished = true));
    while (!finished) {
      if (onProgress) {
        const p = await client.workflow.getHandle(ref.workflowId).query(progressQuery).catch(() => undefined);
        if (p) onProgress(p);
      }
      await Promise.race([done, new Promise((r) => setTimeout(r, everyMs))]);
    }
    return status(ref.workflowId, ref.runId);
  }

  /**
   * Starts a run over exactly the failed nodes of a finished run, against the
   * same revision, linked to it. Throws NothingToRetry when none failed.
   */
  async function retry(workflowId: string, runId?: string, options: { concurrency?: number } = {}) {
    const previous = await status(workflowId, runId);
    if (!previous.result) {
      throw new RelabelError('NotRetryable', `run ${workflowId} (${previous.runId}) has no per-node result to retry (it is ${previous.execution})`);
    }
    const failed = previous.result.nodes.filter((n) => n.status === 'failure').map((n) => n.node);
    if (failed.length === 0) throw new RelabelError('NothingToRetry', `run ${workflowId} (${previous.runId}) has no failed nodes`);
    return start({
      targets: failed,
      revision: previous.result.revision,
      ...(previous.action ? { action: previous.action } : {}),
      ...options,
      retryOf: { workflowId, runId: previous.runId },
    });
  }

  /** Requests cancellation of a running run; nodes already done stay done. NotRunning when it has ended. */
  async function cancel(workflowId: string, runId?: string): Promise<RunRef> {
    const d = await describe(workflowId, runId);
    if (d.status.name !== 'RUNNING') throw new RelabelError('NotRunning', `run ${workflowId} (${d.runId}) is not running (it is ${d.status.name})`);
    await client.workflow.getHandle(workflowId, d.runId).cancel();
    return { workflowId, runId: d.runId, uiLink: link(workflowId, d.runId) };
  }

  /** A page of per-node outcomes of a run (running or finished); bounded like the progress query. */
  async function nodeResults(workflowId: string, runId?: string, page: { offset?: number; limit?: number } = {}) {
    return withTimeout(client.workflow.getHandle(workflowId, runId).query(nodeResultsQuery, page), QUERY_TIMEOUT_MS);
  }

  /** The most recent `limit` update runs on this task queue, most recent first. */
  async function list(limit: number): Promise<RunListing[]> {
    const query = `WorkflowType = 'updateLabels' AND TaskQueue = '${deps.taskQueue.replaceAll("'", "\\'")}'`;
    const found: RunListing[] = [];
    for await (const w of client.workflow.list({ query, pageSize: limit })) {
      found.push({
        workflowId: w.workflowId,
        runId: w.runId,
        ...memoAction(w.memo),
        execution: w.status.name,
        startTime: w.startTime.toISOString(),
        ...(w.closeTime ? { closeTime: w.closeTime.toISOString() } : {}),
      });
      if (found.length >= limit) break;
    }
    return found;
  }

  return { preflight, start, status, wait, retry, cancel, nodeResults, list, link };
}

/** The facade's type. */
export type Runs = ReturnType<typeof createRuns>;
