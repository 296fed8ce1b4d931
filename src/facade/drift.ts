/**
 * Drift detection as the CLI (and any other entry point) uses it: run a
 * detection now and wait for it, read the latest report or a given one, and
 * page through a report's nodes.
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { DriftState } from '../core/plan/drift.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { quote } from '../core/plan/text.ts';
import { runAudit, type RunAudit } from '../core/plan/run-audit.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import { MAX_DRIFT_PAGE, type DriftNodeRow, type DriftReportRecord } from '../store/drift/drift-store.ts';
import type { Store } from '../store/store.ts';
import { isStoreError, StoreErrorCode } from '../store/store-error.ts';
import { detectDrift } from '../workflows/detect-drift.ts';
import { DRIFT_ID_PREFIX, type DetectDriftResult } from '../contracts/drift-messages.ts';
import { RelabelError, relabelErrorOf } from './relabel-error.ts';
import { idleTaskQueueWarning } from './idle-task-queue.ts';
import { storeSite } from './documents/store-site.ts';

/** What the drift facade needs. */
export interface DriftDeps {
  client: Client;
  store: Store;
  /** Validated designs by revision, shared by the facade's parts (revisions are immutable: each is validated once). */
  designs: DesignCache;
  taskQueue: string;
  namespace: string;
}

/** A page of a report's nodes. */
export interface DriftPage {
  report: number;
  /** The node set whose members the page lists, when asked for one. */
  nodeSet?: string;
  /** Rows matching the states asked for, in all. */
  total: number;
  offset: number;
  items: DriftNodeRow[];
}

/** Builds the drift facade. */
export function createDrift(deps: DriftDeps) {
  const { client, store, designs } = deps;

  /** Throws InvalidTargets when revision `revision`'s design has no node set `name`, naming those it has. */
  async function assertNodeSet(revision: number, name: string): Promise<void> {
    const validation = await designs.get(revision);
    const sets = validation.ok ? Object.keys(validation.design.nodeSets ?? {}).sort() : [];
    if (sets.includes(name)) return;
    const known = sets.length > 0 ? `its node sets: ${sets.join(', ')}` : 'it has none';
    throw new RelabelError(FailureType.InvalidTargets, `revision ${revision} has no node set ${quote(name)} (${known})`);
  }

  return {
    /**
     * Runs a detection of the store's site now (`site`, when given, must be
     * it) and waits for its result. Joins a detection already running under
     * the same ID (`relabel-drift/<site>`). Its failure (no committed
     * revision, invalid documents) comes back as a RelabelError. When no
     * worker polls the task queue, `onWarning` is told so before waiting.
     * Heal runs it starts record `audit.by` (via `heal`). With `nodeSet`,
     * a set the latest revision lacks is InvalidTargets before anything starts.
     */
    async detect(
      options: { site?: string; audit?: RunAudit; nodeSet?: string } = {},
      onWarning?: (warning: string) => void,
    ): Promise<DetectDriftResult & { workflowId: string; runId: string }> {
      const { site, revision } = await storeSite(store, designs, options.site);
      // A set to be listed afterwards is checked first: a wrong name starts no detection.
      if (options.nodeSet !== undefined) await assertNodeSet(revision, options.nodeSet);
      const workflowId = `${DRIFT_ID_PREFIX}/${site}`;
      const audit = options.audit && runAudit(options.audit.by, options.audit.via);
      const handle = await client.workflow.start(detectDrift, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [{ site, ...(audit ? { audit } : {}) }],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        staticSummary: `Drift detection of site ${site}`,
        staticDetails: `Started with \`relabel drift\`${audit ? ` by **${audit.by}**` : ''}: classifies every node of site **${site}** (drifted, pending, unmanaged, missing, in sync) and heals drifted nodes when the label policy says \`drift: {action: heal}\`.`,
      });
      const idle = onWarning ? await idleTaskQueueWarning(client, deps.namespace, deps.taskQueue) : undefined;
      if (idle) onWarning?.(idle.replace('the run waits', 'the detection waits'));
      try {
        return { ...(await handle.result()), workflowId, runId: handle.firstExecutionRunId };
      } catch (err) {
        throw relabelErrorOf(err) ?? err;
      }
    },

    /** The newest finished report (of `site`, when given); NotFound when there is none. */
    async latest(site?: string): Promise<DriftReportRecord> {
      const found = await store.drift.latestReport(site);
      if (!found)
        throw new RelabelError(FailureType.NotFound, `no drift report yet${site ? ` for site ${site}` : ''}: run relabel drift, or create its schedule`);
      return found;
    },

    /** One report; NotFound when absent. */
    async report(id: number): Promise<DriftReportRecord> {
      try {
        return await store.drift.getReport(id);
      } catch (err) {
        if (isStoreError(err, StoreErrorCode.NotFound))
          throw new RelabelError(FailureType.NotFound, `no drift report ${id} (reports older than the newest 24 of a site are pruned)`);
        throw err;
      }
    },

    /**
     * A page of a report's nodes in the given states (default every state
     * but in_sync, which is not stored); with `nodeSet`, only that set's
     * members. A set the report's revision lacks is InvalidTargets, naming it.
     */
    async nodes(
      report: DriftReportRecord,
      query: { states?: readonly DriftState[]; nodeSet?: string; offset?: number; limit?: number } = {},
    ): Promise<DriftPage> {
      const offset = Math.max(0, Math.trunc(query.offset ?? 0));
      const limit = Math.min(MAX_DRIFT_PAGE, Math.max(1, Math.trunc(query.limit ?? 100)));
      const { states, nodeSet } = query;
      if (nodeSet !== undefined) await assertNodeSet(report.revision, nodeSet);
      const c = nodeSet !== undefined ? await store.drift.countNodes(report.id, { nodeSet }) : report.counts;
      const total = c
        ? (states ?? (['drifted', 'moved', 'pending', 'unmanaged', 'missing', 'orphaned'] as const)).reduce((n, s) => n + (s === 'in_sync' ? 0 : c[s]), 0)
        : 0;
      const items = await store.drift.nodes(report.id, { ...(states ? { states } : {}), ...(nodeSet !== undefined ? { nodeSet } : {}), offset, limit });
      return { report: report.id, ...(nodeSet !== undefined ? { nodeSet } : {}), total, offset, items };
    },
  };
}

/** The drift facade. */
export type Drift = ReturnType<typeof createDrift>;
