/**
 * The join watcher's activity: watches Nodes and gets every node that joins
 * and that the latest committed revision manages its labels, annotations
 * and taints, through ordinary numbered update runs (`via: join`) started
 * with the facade's own start, a batch at a time.
 *
 * Long-running and heartbeating. It lists first (so a node that joined
 * while no watcher ran is found), then watches from the list's
 * resourceVersion with bookmarks, and lists again on 410 Gone. Nothing it
 * holds in memory is needed after a crash: which nodes are joining is a
 * state of the nodes themselves (see `core/plan/join-queue.ts`), and a node
 * handed to a run that had not written it yet is planned again by the next
 * run, which finds it as desired and does not write it twice.
 *
 * One run per site: while a run of the site goes (an operator's, or this
 * watcher's last), joining nodes wait and are run right after it, with the
 * latest committed revision.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import type { JoinWatchReport } from '../contracts/join-messages.ts';
import type { NodeWatchApi } from '../kube/node-watch.ts';
import type { DesignCache } from '../store/design-cache.ts';
import type { Store } from '../store/store.ts';
import type { RunStarter } from '../temporal/run-starter.ts';
import { JoinWatcher } from './join-watcher.ts';

/** What the join watcher counts and measures (the worker's metrics); every method must not throw. */
export interface JoinTelemetry {
  /** A node handed to a join run was seen labelled, `seconds` after it was first seen joining. */
  labelled(site: string, seconds: number): void;
  /** Nodes waiting for a join run now. */
  pending(site: string, count: number): void;
  /** A joining node the design does not manage (no BaremetalNode names it, no node set matches it), left alone. */
  unmanaged(site: string): void;
  /** A join run ended with `nodes` nodes failed (a node two node sets match among them). */
  failed(site: string, nodes: number): void;
  /** A join run started, with `nodes` nodes. */
  run(site: string, nodes: number): void;
}

/** Where the worker's readiness learns whether its join watchers can watch. */
export interface JoinHealth {
  /** The watcher of `site` watches (`error` undefined) or cannot, saying why. */
  report(site: string, error: string | undefined): void;
  /** The watcher of `site` stopped in this process. */
  forget(site: string): void;
}

/** What the join watcher needs. */
export interface JoinWatchDeps {
  watch: NodeWatchApi;
  store: Store;
  designs: DesignCache;
  startRun?: RunStarter;
  telemetry?: JoinTelemetry;
  health?: JoinHealth;
}

/** Input of the watching activity (the workflow's settings, defaults filled in there or here). */
export interface WatchNodeJoinsInput {
  site: string;
  enabledBy?: string;
  maxBatch?: number;
  batchDelayMs?: number;
  concurrency?: number;
  watchSeconds?: number;
}

/** Builds the join watcher's activity. */
export function createJoinActivities(deps: JoinWatchDeps) {
  return {
    /**
     * Watches the cluster's Nodes for `site` until cancelled or for
     * `watchSeconds`, starting join runs; returns its last report. Rejects
     * (InvalidArgument, not retried) when the store's latest revision is of
     * another site; every other failure (the API server, the store,
     * Temporal) is retried by the workflow's policy, and the next attempt
     * lists again.
     */
    async watchNodeJoins(input: WatchNodeJoinsInput): Promise<JoinWatchReport> {
      const context = Context.current();
      if (!deps.startRun) throw ApplicationFailure.nonRetryable('this worker cannot start join runs (no run starter)', FailureType.InternalError);
      const watcher = new JoinWatcher({ ...deps, startRun: deps.startRun, client: context.client, heartbeat: (report) => context.heartbeat(report) }, input);
      const site = await watcher.checkSite();
      if (site.ok === false) throw ApplicationFailure.nonRetryable(site.message, FailureType.InvalidArgument);
      const onCancel = () => watcher.stop();
      context.cancellationSignal.addEventListener('abort', onCancel, { once: true });
      try {
        const report = await watcher.run();
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
        return report;
      } finally {
        context.cancellationSignal.removeEventListener('abort', onCancel);
      }
    },
  };
}
