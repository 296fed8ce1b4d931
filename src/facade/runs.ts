/**
 * The one facade over update runs shared by the CLI and the HTTP API: start
 * (with the same checks the workflow makes, so bad requests fail before
 * anything starts), status, wait, retry and cancel. Entry points stay thin.
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { failureSummary } from '../temporal/failure.ts';
import { timestampMs } from '../temporal/timestamp.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { auditFrom, runAudit, StartedVia, type RunAudit } from '../core/plan/run-audit.ts';
import { normalizeTargets } from '../core/plan/targets.ts';
import type { PluginEntry } from '../core/plan/node-wants.ts';
import { selectNodes, type NodeFilterSet } from '../core/site/node-filter.ts';
import { runnableRevision } from '../store/revision-checks.ts';
import { isStoreError, StoreErrorCode } from '../store/store-error.ts';
import { createDesignCache } from '../store/design-cache.ts';
import type { RevisionStore } from '../store/revision-store.ts';
import type { Progress, UpdateLabelsInput, UpdateLabelsResult } from '../workflows/messages.ts';
import { progressQuery, runWorkflowId } from '../workflows/messages.ts';
import { MAX_RUN_PAGE, type RunNodeStatus } from '../store/run-store.ts';
import { createSummary, MAX_NODE_PAGE, nodeOutcome, type NodePage, type RunSummary } from './run-results.ts';

export { MAX_NODE_PAGE, nodeOutcome, type NodeOutcome, type NodePage } from './run-results.ts';
import { updateLabels } from '../workflows/update-labels.ts';
import { RelabelStatus, RelabelStatusValue, TemporalScheduledById } from '../workflows/search-attributes.ts';
import { documentValidationError, RelabelError } from './relabel-error.ts';
import { createRunControl } from './run-control.ts';
import { createRunActions } from './run-actions.ts';

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
  /** Run number in the revision store (where its targets and per-node results are), when known. */
  run?: number;
  /** Link to the run in the Temporal Web UI, when its URL is known. */
  uiLink?: string;
  /** The run's Shipyard action id (a ULID), when it was started with one. */
  actionId?: string;
}

/** A run just started. */
export interface StartedRun extends RunRef {
  run: number;
  revision: number;
  site: string;
  targets: string[];
}

/**
 * Targets chosen from the design of the revision a run applies, instead of
 * named: every node, or the nodes a Drydock node filter selects.
 */
export type TargetSelection = { all: true } | { filter: NodeFilterSet };

/** Options of a new update run. */
export interface StartOptions {
  /** Node names; leave undefined when `select` chooses the targets. */
  targets: unknown;
  /** Choose the targets from the design instead (not together with `targets`). */
  select?: TargetSelection;
  revision?: number;
  concurrency?: number;
  dryRun?: boolean;
  /** Go ahead even when the run removes more owned labels than the policy allows (the mass-removal brake). */
  allowMassRemoval?: boolean;
  continueAsNewAfter?: number;
  retryOf?: { workflowId: string; runId: string };
  /** Run number of the run retried, kept on the new run's record. */
  retryOfRun?: number;
  /** The action name the run was asked for (Shipyard's `update_labels` or `relabel_nodes`), kept in its memo. */
  action?: string;
  /** The action's context marker (a UUID, as Shipyard's client sends in X-Context-Marker); a fresh one when absent. */
  contextMarker?: string;
  /** Who starts the run and how: kept with the run in the store, in the workflow's input and in its memo. */
  audit?: RunAudit;
  /** The Drydock task request that starts the run, kept in its memo (the node filter only up to {@link MAX_MEMO_FILTER} bytes of JSON). */
  task?: TaskRequestMemo;
}

/** A Drydock task's `design_ref` and `node_filter` as a run's memo keeps them; `node_filter_omitted` when the filter was too large to keep. */
export interface TaskRequestMemo {
  design_ref: string;
  node_filter: unknown;
  node_filter_omitted?: true;
}

/** Largest node filter (JSON bytes) kept in a run's memo: memos are in Temporal's history, which stays small. */
export const MAX_MEMO_FILTER = 32 * 1024;

/** The memo form of a task request: the filter dropped (and said so) when larger than {@link MAX_MEMO_FILTER}. */
function taskMemo(task: TaskRequestMemo): TaskRequestMemo {
  if (Buffer.byteLength(JSON.stringify(task.node_filter ?? null)) <= MAX_MEMO_FILTER) return task;
  return { design_ref: task.design_ref, node_filter: null, node_filter_omitted: true };
}

/** A task request read back from a memo, when it has one of the right shape. */
function taskFrom(value: unknown): TaskRequestMemo | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { design_ref: ref, node_filter: filter, node_filter_omitted: omitted } = value as Record<string, unknown>;
  if (typeof ref !== 'string') return undefined;
  return { design_ref: ref, node_filter: filter ?? null, ...(omitted === true ? { node_filter_omitted: true as const } : {}) };
}

/** A run as Temporal's visibility store lists it. */
export interface RunListing {
  workflowId: string;
  runId: string;
  /** Run number in the revision store, when the run was started with one. */
  run?: number;
  /** The action name kept in the run's memo, when it was started with one. */
  action?: string;
  /** Who started the run (an API token's name, an OS user), from its memo; absent for runs started without it. */
  startedBy?: string;
  /** How the run was started (`cli`, `api`, `schedule`, `retry`), from its memo. */
  startedVia?: StartedVia;
  /** The Drydock task request that started the run, from its memo. */
  task?: TaskRequestMemo;
  /** The run's Shipyard action id (a ULID), from its memo; absent for runs started before it was kept. */
  actionId?: string;
  execution: string;
  /**
   * The run's status as its search attribute records it once it has ended
   * (`success`, `partial_success`, `failure`; `dry_run` for a dry run),
   * when the server has relabel's search attributes.
   */
  outcome?: string;
  startTime: string;
  closeTime?: string;
}

/** The `outcome` of a listing from the RelabelStatus search attribute: only an ended run's. */
function outcomeOf(status: string | undefined): { outcome?: string } {
  return status === undefined || status === RelabelStatusValue.running ? {} : { outcome: status };
}

/** Which runs {@link Runs.list} returns. */
export interface RunListFilter {
  /** Only runs of this site. */
  site?: string;
  /** Only runs with this status: success, partial_success, failure, running or dry_run. */
  status?: string;
  /** Only runs started at or after this time. */
  startedFrom?: Date;
  /** Only runs started before this time. */
  startedBefore?: Date;
}

/** A run's state as reported by `status`. */
export interface RunStatusReport extends RunRef {
  /** The action name kept in the run's memo, when it was started with one. */
  action?: string;
  /** Who started the run, from its memo; absent for runs started without it. */
  startedBy?: string;
  /** How the run was started (`cli`, `api`, `schedule`, `retry`), from its memo. */
  startedVia?: StartedVia;
  /** The Drydock task request that started the run, from its memo. */
  task?: TaskRequestMemo;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, CONTINUED_AS_NEW, TIMED_OUT */
  execution: string;
  startTime: string;
  closeTime?: string;
  progress?: Progress;
  result?: UpdateLabelsResult;
  /** Why the run failed (a rejection): its failure type and message. */
  failure?: { type: string; message: string };
  /** What may keep a running run from progressing, such as no worker polling its task queue. */
  warnings?: string[];
  /** The label plugin set the run applies (0: none, document labels only), once it is known. */
  pluginSet?: number;
}

/** How often waiting for a run asks whether a worker polls its task queue. */
const IDLE_CHECK_MS = 10_000;
/** How often it asks again while no worker polls. */
const IDLE_RECHECK_MS = 2_000;

/** How long a progress query may take before status reports none (no worker polling). */
export const QUERY_TIMEOUT_MS = 3000;

/** How long ago a worker last polled a task queue for it to count as polling (an idle poll lasts about a minute). */
export const POLLER_FRESH_MS = 2 * 60_000;

/**
 * A warning when no worker polls `taskQueue` for workflow tasks (none has
 * polled within {@link POLLER_FRESH_MS}): a running run then waits. None
 * when one does, or when the server cannot say.
 */
export async function idleTaskQueueWarning(client: Client, namespace: string, taskQueue: string): Promise<string | undefined> {
  const described = await client
    .withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } }))
    .catch(() => undefined);
  if (!described) return undefined;
  const polled = (described.pollers ?? []).map((p) => timestampMs(p.lastAccessTime) ?? 0);
  const last = Math.max(0, ...polled);
  if (last > Date.now() - POLLER_FRESH_MS) return undefined;
  return `no worker is polling task queue ${taskQueue}${last > 0 ? ` (the last poll was at ${new Date(last).toISOString()})` : ''}; the run waits until one starts`;
}

/**
 * `{action, run, startedBy, startedVia}` from a run's memo, or nothing; a
 * run a Temporal Schedule started (`scheduledBy`, its ID) and that has no
 * audit in its memo was started by that schedule. Continue-as-new carries
 * the memo and the search attributes along.
 */
function memoFields(
  memo: Record<string, unknown> | undefined,
  scheduledBy?: string,
): { action?: string; run?: number; startedBy?: string; startedVia?: StartedVia; task?: TaskRequestMemo; actionId?: string } {
  const audit = auditFrom(memo?.audit) ?? (scheduledBy ? runAudit(scheduledBy, StartedVia.schedule) : undefined);
  const task = taskFrom(memo?.task);
  return {
    ...(task ? { task } : {}),
    ...(typeof memo?.action === 'string' ? { action: memo.action } : {}),
    ...(typeof memo?.run === 'number' ? { run: memo.run } : {}),
    ...(typeof memo?.actionId === 'string' ? { actionId: memo.actionId } : {}),
    ...(audit ? { startedBy: audit.by, startedVia: audit.via } : {}),
  };
}


/** Builds the facade. */
export function createRuns(deps: RunsDeps) {
  const { client, store } = deps;
  // Revisions are immutable: a long-lived facade (the API server) validates each once.
  const designs = createDesignCache(store, 2);
  const link = (workflowId: string, runId: string) =>
    deps.uiUrl ? `${deps.uiUrl}/namespaces/${deps.namespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history` : undefined;

  /**
   * The checks the workflow makes, in Shipyard's order, against the store:
   * invalid targets, no committed revision, unknown revision, no revision that
   * took part in a site action, invalid documents. Returns the revision and
   * site. Throws a {@link RelabelError}; reads only.
   */
  async function preflight(options: Pick<StartOptions, 'targets' | 'revision' | 'select'>): Promise<{ targets: string[]; revision: number; site: string }> {
    const { select } = options;
    if (select && options.targets !== undefined) throw new RelabelError(FailureType.InvalidTargets, 'name the targets or select them from the design, not both');
    const named = select ? undefined : normalizeTargets(options.targets);
    if (named && !named.ok) throw new RelabelError(FailureType.InvalidTargets, named.message);
    const checked = await runnableRevision(store, options.revision);
    if (!checked.ok) throw new RelabelError(checked.type, checked.message);
    const revision = checked.revision;
    const validation = await designs.get(revision);
    if (!validation.ok) {
      throw documentValidationError(`revision ${revision}`, validation.errors);
    }
    const { design } = validation;
    let targets = named?.ok ? named.targets : [];
    if (select) {
      // Names the filter gives that the design lacks stay targets: they fail (NodeNotInDesign), never silently dropped.
      const chosen = 'all' in select ? { nodes: Object.keys(design.nodes).sort(), unknownNodeNames: [] } : selectNodes(design, select.filter);
      targets = [...chosen.nodes, ...chosen.unknownNodeNames];
      if (targets.length === 0) throw new RelabelError(FailureType.NoNodesMatched, `the selection matches no node of revision ${revision}`);
      const parsed = normalizeTargets(targets);
      if (!parsed.ok) throw new RelabelError(FailureType.InvalidTargets, parsed.message);
    }
    return { targets, revision, site: design.site };
  }

  /**
   * Starts an update run after {@link preflight}. The targets go to the
   * revision store as a numbered run (the workflow input names only the
   * run, so it stays small whatever the number of targets). One real run
   * per site at a time: the workflow ID is `update-labels/<site>`, and a
   * second start while one runs fails with RunInProgress (its run record is
   * discarded). Dry runs get IDs of their own.
   */
  async function start(options: StartOptions): Promise<StartedRun> {
    const { targets, revision, site } = await preflight(options);
    const dryRun = options.dryRun ?? false;
    const workflowId = dryRun ? `${runWorkflowId(site)}/dry-run/${randomUUID().slice(0, 8)}` : runWorkflowId(site);
    const audit = options.audit && runAudit(options.audit.by, options.audit.via);
    const record = await store.createRun({
      workflowId,
      revision,
      dryRun,
      targets,
      ...(options.retryOfRun !== undefined ? { retryOf: options.retryOfRun } : {}),
      ...(audit ? { startedBy: audit.by, startedVia: audit.via } : {}),
      ...(options.contextMarker !== undefined ? { contextMarker: options.contextMarker } : {}),
    });
    // The label plugin set the run applies: a retry keeps its run's, a new run takes the site's newest (0: none).
    const retried = options.retryOfRun !== undefined ? await store.runPluginSet(options.retryOfRun) : null;
    await store.pinRunPluginSet(record.id, retried ?? (await store.latestPluginSet(site))?.id ?? 0);
    const input: UpdateLabelsInput = {
      run: record.id,
      revision,
      dryRun,
      searchAttributes: deps.searchAttributes !== false,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.allowMassRemoval ? { allowMassRemoval: true } : {}),
      ...(options.continueAsNewAfter !== undefined ? { continueAsNewAfter: options.continueAsNewAfter } : {}),
      ...(options.retryOf ? { retryOf: options.retryOf } : {}),
      ...(audit ? { audit } : {}),
    };
    const shown = targets.length <= 5 ? targets.join(', ') : `${targets.slice(0, 5).join(', ')} and ${targets.length - 5} more`;
    try {
      const handle = await client.workflow.start(updateLabels, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        memo: { run: record.id, ...(record.actionId ? { actionId: record.actionId } : {}), ...(options.action ? { action: options.action } : {}), ...(audit ? { audit } : {}), ...(options.task ? { task: taskMemo(options.task) } : {}) },
        staticSummary: `${dryRun ? 'Dry run: plan' : 'Update'} labels of ${targets.length} node(s) to revision ${revision}`,
        staticDetails:
          `update_labels on site **${site}**, revision ${revision}, run ${record.id}${dryRun ? ' (dry run: nothing written)' : ''}.\n\n` +
          `Targets: ${shown}.` +
          (audit ? `\n\nStarted by **${audit.by}** via ${audit.via}.` : '') +
          (options.retryOf ? `\n\nRetry of ${options.retryOf.workflowId} run ${options.retryOf.runId}.` : ''),
      });
      const runId = handle.firstExecutionRunId;
      // The action id finds the run through the store: keep which execution it is.
      await store.setRunExecution(record.id, runId);
      return { workflowId, runId, run: record.id, uiLink: link(workflowId, runId), revision, site, targets, ...(record.actionId ? { actionId: record.actionId } : {}) };
    } catch (err) {
      await store.discardRun(record.id);
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
      if (err instanceof WorkflowNotFoundError) throw new RelabelError(FailureType.RunNotFound, `no run ${workflowId}${runId ? ` (${runId})` : ''}`);
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
      ...memoFields(d.memo, d.typedSearchAttributes.get(TemporalScheduledById)),
      execution: d.status.name,
      startTime: d.startTime.toISOString(),
      ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    };
    if (d.status.name === 'COMPLETED') {
      report.result = (await handle.result()) as UpdateLabelsResult;
      const pinned = await store.runPluginSet(report.result.run);
      if (pinned !== null) report.pluginSet = pinned;
    } else if (d.status.name === 'FAILED') {
      try {
        await handle.result();
      } catch (err) {
        report.failure = failureSummary(err);
      }
    }
    if (d.status.name === 'RUNNING') {
      const idle = await idleTaskQueueWarning(client, deps.namespace, d.taskQueue);
      if (idle) report.warnings = [idle];
    }
    // A query needs a worker: none when no worker polls; with one, report no progress rather than hang.
    if ((d.status.name === 'RUNNING' && !report.warnings) || d.status.name === 'COMPLETED') {
      report.progress = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle.query(progressQuery)).catch(() => undefined);
    }
    return report;
  }

  /**
   * Waits for a run to close, calling `onProgress` about every `everyMs`
   * while it runs (continue-as-new is followed). Every
   * {@link IDLE_CHECK_MS} (while none does, {@link IDLE_RECHECK_MS}) it asks whether a worker polls the run's task
   * queue and tells `onWarning` when that changes (a warning, or undefined
   * once a worker polls again); no progress is asked of a run no worker
   * serves. Returns the final status; with `deadline` (epoch ms), the
   * status then if the run is still going.
   */
  async function wait(
    ref: { workflowId: string; runId?: string },
    onProgress?: (p: Progress) => void,
    everyMs = 500,
    onWarning?: (warning: string | undefined) => void,
    deadline?: number,
  ): Promise<RunStatusReport> {
    const handle = client.workflow.getHandle(ref.workflowId, ref.runId);
    const done = handle.result().then(
      () => true,
      () => true,
    );
    let finished = false;
    void done.then(() => (finished = true));
    const taskQueue = onWarning ? await handle.describe().then((d) => d.taskQueue, () => undefined) : undefined;
    let idle: string | undefined;
    let checkedAt = 0;
    while (!finished && (deadline === undefined || Date.now() < deadline)) {
      // While no worker polls, look again sooner, to say when one comes.
      if (taskQueue !== undefined && Date.now() - checkedAt >= (idle === undefined ? IDLE_CHECK_MS : IDLE_RECHECK_MS)) {
        checkedAt = Date.now();
        const now = await idleTaskQueueWarning(client, deps.namespace, taskQueue);
        if (now !== idle && !finished) onWarning?.(now);
        idle = now;
      }
      if (onProgress && idle === undefined) {
        const p = await client
          .withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => client.workflow.getHandle(ref.workflowId).query(progressQuery))
          .catch(() => undefined);
        if (p) onProgress(p);
      }
      await Promise.race([done, new Promise((r) => setTimeout(r, everyMs))]);
    }
    return status(ref.workflowId, ref.runId);
  }

  /**
   * Starts a run over exactly the failed nodes of a finished run, against the
   * same revision, linked to it; with `by`, the new run records that it was
   * started by `by` via `retry`. Throws NothingToRetry when none failed.
   */
  async function retry(workflowId: string, runId?: string, options: { concurrency?: number; allowMassRemoval?: boolean; by?: string } = {}) {
    const previous = await status(workflowId, runId);
    if (!previous.result) {
      throw new RelabelError(FailureType.NotRetryable, `run ${workflowId} (${previous.runId}) has no per-node result to retry (it is ${previous.execution})`);
    }
    const run = previous.result.run;
    const failed: string[] = [];
    for await (const row of rowsOf(run, 'failure')) failed.push(row.node);
    if (failed.length === 0) throw new RelabelError(FailureType.NothingToRetry, `run ${workflowId} (${previous.runId}) has no failed nodes`);
    return start({
      targets: failed,
      revision: previous.result.revision,
      ...(previous.action ? { action: previous.action } : {}),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.allowMassRemoval ? { allowMassRemoval: true } : {}),
      ...(options.by !== undefined ? { audit: runAudit(options.by, StartedVia.retry) } : {}),
      retryOf: { workflowId, runId: previous.runId },
      retryOfRun: run,
    });
  }

  /** Requests cancellation of a running run; nodes already done stay done. NotRunning when it has ended. */
  async function cancel(workflowId: string, runId?: string): Promise<RunRef> {
    const d = await describe(workflowId, runId);
    if (d.status.name !== 'RUNNING') throw new RelabelError(FailureType.NotRunning, `run ${workflowId} (${d.runId}) is not running (it is ${d.status.name})`);
    await client.workflow.getHandle(workflowId, d.runId).cancel();
    return { workflowId, runId: d.runId, uiLink: link(workflowId, d.runId) };
  }

  const { control } = createRunControl({ client, store, status, cancel });

  /** A run's counts; RunNotFound for an unknown run number. */
  async function countsOf(run: number) {
    try {
      return await store.runCounts(run);
    } catch (err) {
      if (isStoreError(err, StoreErrorCode.NotFound)) throw new RelabelError(FailureType.RunNotFound, `no run ${run} in the revision store`);
      throw err;
    }
  }

  /** Every row of a run (optionally only those with `status`), in target order, read a page at a time. */
  async function* rowsOf(run: number, status?: RunNodeStatus) {
    for (let afterSeq = -1; ; ) {
      const rows = await store.runNodes(run, { ...(status ? { status } : {}), afterSeq, limit: MAX_RUN_PAGE });
      yield* rows;
      const last = rows.at(-1);
      if (rows.length < MAX_RUN_PAGE || last === undefined) return;
      afterSeq = last.seq;
    }
  }

  /**
   * A whole run's outcomes aggregated (nodes by status, failures by type,
   * label keys gained, changed, lost, adopted), read page by page in target
   * order so any number of nodes is summed in bounded memory. RunNotFound
   * for an unknown run number.
   */
  async function summary(run: number): Promise<RunSummary> {
    await countsOf(run);
    const sum = createSummary(run);
    for await (const row of rowsOf(run)) sum.add(nodeOutcome(row));
    return sum.result();
  }

  /**
   * A page of a run's node outcomes from the store, in target order,
   * optionally only those with the given statuses. RunNotFound for an
   * unknown run number.
   */
  async function nodes(run: number, query: { status?: RunNodeStatus | readonly RunNodeStatus[]; offset?: number; limit?: number } = {}): Promise<NodePage> {
    const offset = Math.max(0, Math.trunc(query.offset ?? 0));
    const limit = Math.min(MAX_NODE_PAGE, Math.max(1, Math.trunc(query.limit ?? 1000)));
    const counts = await countsOf(run);
    const statuses = query.status === undefined ? undefined : typeof query.status === 'string' ? [query.status] : query.status;
    const total = statuses ? statuses.reduce((n, st) => n + counts[st], 0) : counts.total;
    const rows = await store.runNodes(run, { ...(statuses ? { status: statuses } : {}), offset, limit });
    return { run, total, offset, items: rows.map(nodeOutcome) };
  }

  /**
   * The most recent `limit` update runs on this task queue, most recent
   * first; with `filter`, only those of a site or with a status (as the
   * RelabelSite and RelabelStatus search attributes record them: a dry run's
   * status is `dry_run`, a run still going `running`).
   */
  async function list(limit: number, filter: RunListFilter = {}): Promise<RunListing[]> {
    const quote = (v: string) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
    const query = [
      `WorkflowType = 'updateLabels' AND TaskQueue = ${quote(deps.taskQueue)}`,
      ...(filter.site !== undefined ? [`RelabelSite = ${quote(filter.site)}`] : []),
      ...(filter.status !== undefined ? [`RelabelStatus = ${quote(filter.status)}`] : []),
      ...(filter.startedFrom !== undefined ? [`StartTime >= ${quote(filter.startedFrom.toISOString())}`] : []),
      ...(filter.startedBefore !== undefined ? [`StartTime < ${quote(filter.startedBefore.toISOString())}`] : []),
    ].join(' AND ');
    const found: RunListing[] = [];
    for await (const w of client.workflow.list({ query, pageSize: limit })) {
      found.push({
        workflowId: w.workflowId,
        runId: w.runId,
        ...memoFields(w.memo, w.typedSearchAttributes.get(TemporalScheduledById)),
        execution: w.status.name,
        ...outcomeOf(w.typedSearchAttributes.get(RelabelStatus)),
        startTime: w.startTime.toISOString(),
        ...(w.closeTime ? { closeTime: w.closeTime.toISOString() } : {}),
      });
      if (found.length >= limit) break;
    }
    return found;
  }

  /** The valid design of `revision` (validated once; DocumentValidationFailed otherwise). */
  async function design(revision: number) {
    const validation = await designs.get(revision);
    if (!validation.ok) throw documentValidationError(`revision ${revision}`, validation.errors);
    return validation.design;
  }

  /**
   * The labels plugin set `set` gives `nodes` (at most MAX_PLUGIN_LOOKUP):
   * for each node with any, its entries sorted by plugin. Set 0 (a run that
   * pinned none) gives none.
   */
  async function pluginLabels(set: number, nodes: readonly string[]): Promise<Map<string, PluginEntry[]>> {
    if (set === 0 || nodes.length === 0) return new Map();
    return store.pluginSetLabels(set, nodes);
  }

  return {
    preflight,
    start,
    status,
    wait,
    retry,
    cancel,
    control,
    nodes,
    summary,
    list,
    link,
    design,
    rows: rowsOf,
    pluginLabels,
    ...createRunActions({ client, store, namespace: deps.namespace }),
  };
}

/** The facade's type. */
export type Runs = ReturnType<typeof createRuns>;
