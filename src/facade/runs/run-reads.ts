/**
 * The read half of the runs facade: a run's status (followed down its
 * continue-as-new chain), waiting for it, listing runs, and its rows in the
 * store (pages, aggregates, every row), with the design and plugin labels a
 * plan is read against. Reads only: nothing here starts, changes or stops
 * a run.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { FailureType } from '../../core/plan/failure-types.ts';
import type { PluginEntry } from '../../core/plan/node-wants.ts';
import type { StartedVia } from '../../core/plan/run-audit.ts';
import type { Design } from '../../core/site/validate-site.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import { MAX_RUN_PAGE, type RunNodeCounts, type RunNodeRow, type RunNodeStatus } from '../../store/runs/run-store.ts';
import { isStoreError, StoreErrorCode } from '../../store/store-error.ts';
import { failureSummary } from '../../temporal/failure.ts';
import { progressQuery, type Progress, type UpdateLabelsResult } from '../../contracts/messages.ts';
import { RelabelStatus, RelabelStatusValue, TemporalScheduledById } from '../../contracts/search-attributes.ts';
import { idleTaskQueueWarning, QUERY_TIMEOUT_MS } from '../idle-task-queue.ts';
import { documentValidationError, RelabelError } from '../relabel-error.ts';
import { memoFields, type TaskRequestMemo } from './run-memo.ts';
import { createSummary, MAX_NODE_PAGE, nodeOutcome, type NodePage, type RunSummary } from './run-results.ts';
import { waitForRun, type RunWaitOptions } from './run-wait.ts';

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

/** Who started a run and why, as its memo says (each field absent for runs started without it). */
export interface RunOrigin {
  /** The action name kept in the run's memo, when it was started with one. */
  action?: string;
  /** Who started the run (an API token's name, an OS user). */
  startedBy?: string;
  /** How the run was started (`cli`, `api`, `schedule`, `retry`). */
  startedVia?: StartedVia;
  /** The Drydock task request that started the run. */
  task?: TaskRequestMemo;
  /** The node sets the run was started for, whose members are its targets. */
  nodeSets?: string[];
}

/** A run as Temporal's visibility store lists it. */
export interface RunListing extends RunOrigin {
  workflowId: string;
  runId: string;
  /** Run number in the revision store, when the run was started with one. */
  run?: number;
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

/** Which runs {@link RunReads.list} returns. */
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
export interface RunStatusReport extends RunRef, RunOrigin {
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

/** Which of a run's node outcomes {@link RunReads.nodes} returns. */
export interface NodeQuery {
  /** Only nodes with this status, or one of these. */
  status?: RunNodeStatus | readonly RunNodeStatus[];
  offset?: number;
  /** At most this many (1 to MAX_NODE_PAGE; 1,000 when absent). */
  limit?: number;
}

/** The read half of the runs facade. Every method reads only. */
export interface RunReads {
  /** Link to a run in the Temporal Web UI, when the UI's URL is known. */
  link(workflowId: string, runId: string): string | undefined;
  /** A run's status, progress and (when finished) result or rejection; RunNotFound for an unknown run. */
  status(workflowId: string, runId?: string): Promise<RunStatusReport>;
  /** Waits for a run to close (see {@link waitForRun}): its final status, or its status at `deadline`. */
  wait(
    ref: { workflowId: string; runId?: string },
    onProgress?: (p: Progress) => void,
    everyMs?: number,
    onWarning?: (warning: string | undefined) => void,
    deadline?: number,
  ): Promise<RunStatusReport>;
  /**
   * A page of a run's node outcomes from the store, in target order,
   * optionally only those with the given statuses. RunNotFound for an
   * unknown run number.
   */
  nodes(run: number, query?: NodeQuery): Promise<NodePage>;
  /**
   * A whole run's outcomes aggregated (nodes by status, failures by type,
   * label keys gained, changed, lost, adopted), read page by page in target
   * order so any number of nodes is summed in bounded memory. RunNotFound
   * for an unknown run number.
   */
  summary(run: number): Promise<RunSummary>;
  /**
   * The most recent `limit` update runs on this task queue, most recent
   * first; with `filter`, only those of a site or with a status (as the
   * RelabelSite and RelabelStatus search attributes record them: a dry run's
   * status is `dry_run`, a run still going `running`).
   */
  list(limit: number, filter?: RunListFilter): Promise<RunListing[]>;
  /** The valid design of `revision` (validated once; DocumentValidationFailed otherwise). */
  design(revision: number): Promise<Design>;
  /** Every row of a run (optionally only those with `status`), in target order, read a page at a time. */
  rows(run: number, status?: RunNodeStatus): AsyncGenerator<RunNodeRow>;
  /**
   * The labels plugin set `set` gives `nodes` (at most MAX_PLUGIN_LOOKUP):
   * for each node with any, its entries sorted by plugin. Set 0 (a run that
   * pinned none) gives none.
   */
  pluginLabels(set: number, nodes: readonly string[]): Promise<Map<string, PluginEntry[]>>;
}

/** What the read half needs. */
export interface RunReadDeps {
  client: Client;
  store: Store;
  designs: DesignCache;
  taskQueue: string;
  namespace: string;
  /** Base URL of the Temporal Web UI, for links. */
  uiUrl?: string;
}

/** The `outcome` of a listing from the RelabelStatus search attribute: only an ended run's. */
function outcomeOf(status: string | undefined): { outcome?: string } {
  return status === undefined || status === RelabelStatusValue.running ? {} : { outcome: status };
}

/** A Temporal `list` query's quoted string literal. */
function quote(v: string): string {
  return `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * Describes a run. A run that continued as new is followed down its chain
 * to the execution that carries it on, so a run is known by its first run
 * ID for its whole life. RunNotFound for an unknown run.
 */
export async function describeRun(client: Client, workflowId: string, runId?: string): Promise<WorkflowExecutionDescription> {
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

/** The most recent `limit` update runs on `taskQueue`, most recent first, as {@link RunReads.list} says. */
async function listRuns(client: Client, taskQueue: string, limit: number, filter: RunListFilter = {}): Promise<RunListing[]> {
  const query = [
    `WorkflowType = 'updateLabels' AND TaskQueue = ${quote(taskQueue)}`,
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

/** Builds the read half of the runs facade. */
export function createRunReads(deps: RunReadDeps): RunReads {
  const { client, store, designs } = deps;
  const link = (workflowId: string, runId: string) =>
    deps.uiUrl ? `${deps.uiUrl}/namespaces/${deps.namespace}/workflows/${encodeURIComponent(workflowId)}/${runId}/history` : undefined;

  async function status(workflowId: string, runId?: string): Promise<RunStatusReport> {
    const d = await describeRun(client, workflowId, runId);
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
      const pinned = await store.plugins.pinnedSet(report.result.run);
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

  /** A run's counts; RunNotFound for an unknown run number. */
  async function countsOf(run: number): Promise<RunNodeCounts> {
    try {
      return await store.runs.counts(run);
    } catch (err) {
      if (isStoreError(err, StoreErrorCode.NotFound)) throw new RelabelError(FailureType.RunNotFound, `no run ${run} in the revision store`);
      throw err;
    }
  }

  async function* rows(run: number, status?: RunNodeStatus): AsyncGenerator<RunNodeRow> {
    for (let afterSeq = -1; ;) {
      const page = await store.runs.nodes(run, { ...(status ? { status } : {}), afterSeq, limit: MAX_RUN_PAGE });
      yield* page;
      const last = page.at(-1);
      if (page.length < MAX_RUN_PAGE || last === undefined) return;
      afterSeq = last.seq;
    }
  }

  const waitDeps = { client, namespace: deps.namespace, status };
  return {
    link,
    status,
    wait: (ref, onProgress, everyMs, onWarning, deadline) => waitForRun(waitDeps, ref, { onProgress, everyMs, onWarning, deadline } satisfies RunWaitOptions),
    async nodes(run, query = {}) {
      const offset = Math.max(0, Math.trunc(query.offset ?? 0));
      const limit = Math.min(MAX_NODE_PAGE, Math.max(1, Math.trunc(query.limit ?? 1000)));
      const counts = await countsOf(run);
      const statuses = query.status === undefined ? undefined : typeof query.status === 'string' ? [query.status] : query.status;
      const total = statuses ? statuses.reduce((n, st) => n + counts[st], 0) : counts.total;
      const page = await store.runs.nodes(run, { ...(statuses ? { status: statuses } : {}), offset, limit });
      return { run, total, offset, items: page.map(nodeOutcome) };
    },
    async summary(run) {
      await countsOf(run);
      const sum = createSummary(run);
      for await (const row of rows(run)) sum.add(nodeOutcome(row));
      return sum.result();
    },
    list: (limit, filter) => listRuns(client, deps.taskQueue, limit, filter),
    async design(revision) {
      const validation = await designs.get(revision);
      if (!validation.ok) throw documentValidationError(`revision ${revision}`, validation.errors);
      return validation.design;
    },
    rows,
    async pluginLabels(set, nodes) {
      if (set === 0 || nodes.length === 0) return new Map();
      return store.plugins.labels(set, nodes);
    },
  };
}
