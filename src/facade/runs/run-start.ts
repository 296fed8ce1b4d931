/**
 * The start half of the runs facade: the checks the workflow makes, made
 * before anything starts so a bad request fails at once, then a numbered
 * run in the store and the `update-labels/<site>` workflow over it; and a
 * retry, which is a start over the failed nodes of a finished run.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { FailureType } from '../../core/plan/failure-types.ts';
import { runAudit, StartedVia } from '../../core/plan/run-audit.ts';
import { normalizeTargets } from '../../core/plan/targets.ts';
import { rolloutErrors } from '../../core/plan/waves.ts';
import { selectNodes } from '../../core/site/node-filter.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import { runnableRevision } from '../../store/revisions/revision-checks.ts';
import type { Store } from '../../store/store.ts';
import { JOIN_ACTION } from '../../contracts/join-messages.ts';
import { updateLabels } from '../../workflows/update-labels.ts';
import { documentValidationError, RelabelError } from '../relabel-error.ts';
import { prepareStart, type Preflight, type PreparedStart, type StartOptions } from './run-prepare.ts';
import type { RunReads, RunRef } from './run-reads.ts';

export type { Preflight, PreparedStart, StartOptions, TargetSelection } from './run-prepare.ts';

/**
 * Longest an operator's start waits for a join run of the site to end
 * before it is refused RunInProgress: join runs are small (a burst of
 * joins is a few runs), so this is seldom reached.
 */
export const JOIN_RUN_WAIT_MS = 60_000;

/** A run just started. */
export interface StartedRun extends RunRef {
  run: number;
  revision: number;
  site: string;
  targets: string[];
  /** The node sets whose members the run targets too (found when it is planned). */
  nodeSets?: string[];
}

/** Options of a retry. */
export interface RetryOptions {
  concurrency?: number;
  allowMassRemoval?: boolean;
  /** Who retries: the new run records that it was started by them via `retry`. */
  by?: string;
}

/** The start half of the runs facade. */
export interface RunStarts {
  /**
   * The checks the workflow makes, in Shipyard's order, against the store:
   * invalid targets, no committed revision, unknown revision, no revision that
   * took part in a site action, invalid documents. Returns the targets (chosen
   * by `select` when given), the revision and the site. Throws a
   * {@link RelabelError}; reads only.
   */
  preflight(options: Pick<StartOptions, 'targets' | 'revision' | 'select'>): Promise<Preflight>;
  /**
   * Starts an update run after {@link RunStarts.preflight}. The targets go to the
   * revision store as a numbered run (the workflow input names only the
   * run, so it stays small whatever the number of targets). One real run
   * per site at a time: the workflow ID is `update-labels/<site>`, and a
   * second start while one runs fails with RunInProgress (its run record is
   * discarded). Dry runs get IDs of their own.
   */
  start(options: StartOptions): Promise<StartedRun>;
  /**
   * The first half of {@link RunStarts.start}: the checks, then the numbered
   * run in the store and what its workflow starts with, not started. For a
   * fleet rollout, which starts the run as its child on the site's queue;
   * {@link RunStarts.settle} then records the execution, or discards the run.
   */
  prepare(options: StartOptions): Promise<PreparedStart>;
  /** Records the execution a prepared run started as (`runId`), or discards the run when it never started. */
  settle(run: number, runId?: string): Promise<void>;
  /**
   * Starts a run over exactly the failed nodes of a finished run, against the
   * same revision, linked to it. NotRetryable when the run has no per-node
   * result; NothingToRetry when none failed.
   */
  retry(workflowId: string, runId?: string, options?: RetryOptions): Promise<StartedRun>;
}

/** What the start half needs: the clients, where runs go, and the read half (a retry reads the run it retries). */
export interface RunStartDeps {
  client: Client;
  store: Store;
  designs: DesignCache;
  taskQueue: string;
  /** Whether the server has relabel's search attributes registered. */
  searchAttributes?: boolean;
  reads: Pick<RunReads, 'status' | 'rows' | 'link'>;
}

/** The checks of {@link RunStarts.preflight}, against `store`; the targets, revision and site. */
async function preflightRun(
  store: RunStartDeps['store'],
  designs: DesignCache,
  options: Pick<StartOptions, 'targets' | 'revision' | 'select'>,
): Promise<Preflight> {
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
  const sets = Object.keys(design.nodeSets ?? {});
  if (select && 'nodeSets' in select) {
    const unknown = select.nodeSets.filter((set) => !sets.includes(set));
    if (select.nodeSets.length === 0 || unknown.length > 0) {
      const known = sets.length > 0 ? `its node sets: ${sets.join(', ')}` : 'it has none';
      throw new RelabelError(FailureType.InvalidTargets, `revision ${revision} has no node set ${unknown.join(', ')} (${known})`);
    }
    return { targets: [], nodeSets: [...new Set(select.nodeSets)].sort(), revision, site: design.site };
  }
  if (select) {
    // Names the filter gives that the design lacks stay targets: they fail (NodeNotInDesign), never silently dropped.
    const chosen = 'all' in select ? { nodes: Object.keys(design.nodes).sort(), unknownNodeNames: [] } : selectNodes(design, select.filter);
    targets = [...chosen.nodes, ...chosen.unknownNodeNames];
    // Every node includes the members of every set, found when the run is planned.
    if ('all' in select && sets.length > 0) return { targets, nodeSets: sets, revision, site: design.site };
    if (targets.length === 0) throw new RelabelError(FailureType.NoNodesMatched, `the selection matches no node of revision ${revision}`);
    const parsed = normalizeTargets(targets);
    if (!parsed.ok) throw new RelabelError(FailureType.InvalidTargets, parsed.message);
  }
  return { targets, revision, site: design.site };
}

/** Whether the run going under `workflowId` is a join run (its memo says so). */
/** What holds a site's run id: a join run, another run, or nothing any more (it closed meanwhile). */
async function siteRunHolder(client: Client, workflowId: string): Promise<'join' | 'other' | 'closed'> {
  try {
    const described = await client.workflow.getHandle(workflowId).describe();
    if (described.status.name !== 'RUNNING') return 'closed';
    const memo = described.memo as { action?: unknown; audit?: { via?: unknown } } | undefined;
    return memo?.action === JOIN_ACTION || memo?.audit?.via === StartedVia.join ? 'join' : 'other';
  } catch {
    return 'other';
  }
}

/**
 * `startNow`, except that when a join run of the site is going, an
 * operator's run (not a dry run, not a join run itself) waits for it to
 * end, up to {@link JOIN_RUN_WAIT_MS}, instead of being refused
 * RunInProgress: join runs are short, and an operator's run must not be
 * refused because a node happened to join.
 */
function waitingForJoinRuns(client: Client, startNow: (options: StartOptions) => Promise<StartedRun>): (options: StartOptions) => Promise<StartedRun> {
  return async (options) => {
    const waits = !options.dryRun && options.audit?.via !== StartedVia.join;
    const deadline = Date.now() + JOIN_RUN_WAIT_MS;
    for (;;) {
      try {
        return await startNow(options);
      } catch (err) {
        const going =
          err instanceof RelabelError && err.type === FailureType.RunInProgress ? (err.details as { workflowId?: string } | undefined)?.workflowId : undefined;
        if (!waits || going === undefined || Date.now() >= deadline) throw err;
        // The run that held the id may have ended between the refusal and this look: start again.
        const holder = await siteRunHolder(client, going);
        if (holder === 'other') throw err;
        if (holder === 'closed') continue;
        const left = deadline - Date.now();
        await Promise.race([
          client.workflow
            .getHandle(going)
            .result()
            .catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, left).unref()),
        ]);
      }
    }
  };
}

/** Builds the start half of the runs facade. */
export function createRunStarts(deps: RunStartDeps): RunStarts {
  const { client, store, designs, reads } = deps;

  const preflight = (options: Pick<StartOptions, 'targets' | 'revision' | 'select'>) => preflightRun(store, designs, options);

  async function prepare(options: StartOptions): Promise<PreparedStart> {
    const wrong = options.rollout ? rolloutErrors(options.rollout) : [];
    if (wrong.length > 0) throw new RelabelError(FailureType.InvalidRequest, `invalid rollout: ${wrong.join('; ')}`);
    return prepareStart(store, await preflight(options), options, deps.searchAttributes !== false);
  }

  async function settle(run: number, runId?: string): Promise<void> {
    // The action id finds the run through the store: keep which execution it is; a run that never started is discarded.
    if (runId !== undefined) await store.actions.setExecution(run, runId);
    else await store.runs.discard(run);
  }

  async function startNow(options: StartOptions): Promise<StartedRun> {
    const prepared = await prepare(options);
    const { checked, record, workflowId } = prepared;
    const { targets, revision, site } = checked;
    try {
      const handle = await client.workflow.start(updateLabels, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [prepared.input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        memo: prepared.memo,
        staticSummary: prepared.staticSummary,
        staticDetails: prepared.staticDetails,
      });
      const runId = handle.firstExecutionRunId;
      await settle(record.id, runId);
      return {
        workflowId,
        runId,
        run: record.id,
        uiLink: reads.link(workflowId, runId),
        revision,
        site,
        targets,
        ...(checked.nodeSets ? { nodeSets: checked.nodeSets } : {}),
        ...(record.actionId ? { actionId: record.actionId } : {}),
      };
    } catch (err) {
      await settle(record.id);
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new RelabelError(
          FailureType.RunInProgress,
          `an update_labels run is already in progress for site ${site} (${workflowId}); wait for it or cancel it`,
          { workflowId },
        );
      }
      throw err;
    }
  }

  async function retry(workflowId: string, runId?: string, options: RetryOptions = {}): Promise<StartedRun> {
    const previous = await reads.status(workflowId, runId);
    if (!previous.result) {
      throw new RelabelError(FailureType.NotRetryable, `run ${workflowId} (${previous.runId}) has no per-node result to retry (it is ${previous.execution})`);
    }
    const run = previous.result.run;
    const failed: string[] = [];
    for await (const row of reads.rows(run, 'failure')) failed.push(row.node);
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

  const start = waitingForJoinRuns(client, startNow);
  return { preflight, prepare, settle, start, retry };
}
