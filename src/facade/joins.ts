/**
 * Joining nodes, as the CLI (and any other entry point) turns them on and
 * off and reads them: the site's join watcher (`relabel-join/<site>`) is
 * a workflow that runs while joins are enabled.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, WorkflowIdConflictPolicy, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/common';
import { joinWorkflowId, type JoinWatchReport, type WatchJoinsInput } from '../contracts/join-messages.ts';
import { clip } from '../core/plan/text.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import { timestampMs } from '../temporal/timestamp.ts';
import { watchJoins } from '../workflows/watch-joins.ts';
import { idleTaskQueueWarning } from './idle-task-queue.ts';
import { storeSite } from './documents/store-site.ts';

/** What the joins facade needs. */
export interface JoinsDeps {
  client: Client;
  store: Store;
  designs: DesignCache;
  taskQueue: string;
  namespace: string;
}

/** Whether a site's joins are on, and what its watcher last reported. */
export interface JoinStatus {
  site: string;
  enabled: boolean;
  workflowId: string;
  /** The watcher's current execution, while enabled. */
  runId?: string;
  /** When joins were enabled (the first execution's start), while enabled. */
  since?: string;
  /** What the watching activity last reported (absent before its first heartbeat). */
  watcher?: JoinWatchReport;
  /** The watching activity's attempt (above 1: it failed and is being retried) and its last failure, clipped. */
  attempt?: number;
  lastFailure?: string;
  /** How the last watcher ended, when joins are off. */
  ended?: string;
  /** A warning: no worker polls the task queue, so nothing watches. */
  warning?: string;
}

/** How long `disable` waits for the watcher to stop. */
const DISABLE_WAIT_MS = 30_000;

/** Longest failure text kept. */
const MAX_FAILURE = 500;

/** Builds the joins facade. */
export function createJoins(deps: JoinsDeps) {
  const { client, store, designs } = deps;

  /** The site's watcher, described; undefined when it never ran. */
  async function describe(site: string) {
    try {
      return await client.workflow.getHandle(joinWorkflowId(site)).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  async function status(siteName?: string): Promise<JoinStatus> {
    const { site } = await storeSite(store, designs, siteName);
    const workflowId = joinWorkflowId(site);
    const described = await describe(site);
    if (!described || described.status.name !== 'RUNNING') {
      return { site, enabled: false, workflowId, ...(described ? { ended: described.status.name.toLowerCase() } : {}) };
    }
    const pending = described.raw.pendingActivities?.[0];
    const details = pending?.heartbeatDetails?.payloads?.[0];
    let watcher: JoinWatchReport | undefined;
    try {
      watcher = details ? defaultPayloadConverter.fromPayload<JoinWatchReport>(details) : undefined;
    } catch {
      watcher = undefined;
    }
    const failure = pending?.lastFailure?.message;
    const warning = await idleTaskQueueWarning(client, deps.namespace, deps.taskQueue);
    const started = timestampMs(described.raw.workflowExecutionInfo?.executionTime) ?? described.startTime.getTime();
    return {
      site,
      enabled: true,
      workflowId,
      runId: described.runId,
      since: new Date(started).toISOString(),
      ...(watcher ? { watcher } : {}),
      ...(pending?.attempt ? { attempt: pending.attempt } : {}),
      ...(failure ? { lastFailure: clip(failure, MAX_FAILURE) } : {}),
      ...(warning ? { warning: warning.replace('the run waits', 'no node is watched') } : {}),
    };
  }

  return {
    /**
     * Turns joins on for the store's site (`site`, when given, must be it):
     * starts its watcher, or leaves the running one as it is. `changed`
     * says which.
     */
    async enable(
      options: {
        site?: string;
        by?: string;
        watch?: Pick<WatchJoinsInput, 'maxBatch' | 'batchDelayMs' | 'concurrency' | 'watchSeconds' | 'continueAsNewAfter'>;
      } = {},
    ): Promise<JoinStatus & { changed: boolean }> {
      const { site } = await storeSite(store, designs, options.site);
      const before = await describe(site);
      const workflowId = joinWorkflowId(site);
      await client.workflow.start(watchJoins, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [{ site, ...(options.by ? { enabledBy: options.by } : {}), ...options.watch }],
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        staticSummary: `Join watcher of site ${site}`,
        staticDetails: `Enabled with \`relabel join enable\`${options.by ? ` by **${options.by}**` : ''}: watches the cluster's Nodes and labels every node of site **${site}** that joins (a new or re-registered node, or one carrying the uninitialized taint) in a join run. \`relabel join disable\` stops it.`,
      });
      return { ...(await status(site)), changed: before?.status.name !== 'RUNNING' };
    },

    /** Turns joins off: cancels the watcher and waits for it to stop. `changed` false when they were off. */
    async disable(options: { site?: string } = {}): Promise<JoinStatus & { changed: boolean }> {
      const { site } = await storeSite(store, designs, options.site);
      const described = await describe(site);
      if (!described || described.status.name !== 'RUNNING') return { ...(await status(site)), changed: false };
      const handle = client.workflow.getHandle(joinWorkflowId(site));
      await handle.cancel();
      // The watcher stops at its next heartbeat; without a worker it cannot, and the cancellation waits for one.
      await Promise.race([handle.result().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, DISABLE_WAIT_MS).unref())]);
      return { ...(await status(site)), changed: true };
    },

    status,
  };
}

/** The joins facade. */
export type Joins = ReturnType<typeof createJoins>;
