/**
 * The join watcher's activity: watches Nodes and gets every node that joins
 * and that the latest committed revision manages its labels, annotations
 * and taints, through ordinary numbered update runs (`via: join`) started
 * with the facade's own start, a batch at a time.
 *
 * Long-running and heartbeating. It follows the worker's one node informer
 * (`kube/node-informer.ts`), which the node cache reads too: every Node
 * first (so a node that joined while no watcher ran is found), from the
 * informer's copy or its LIST, then every change its watch brings, and
 * every Node again after the informer lists again (410 Gone, a lost watch). Nothing it
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
import { FailureType } from '../../core/plan/failure-types.ts';
import type { JoinWatchReport } from '../../contracts/join-messages.ts';
import type { NodeInformer } from '../../kube/node-informer.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import type { RunStarter } from '../../temporal/run-starter.ts';
import type { JoinHealth, JoinTelemetry, WatchNodeJoinsInput } from './join-ports.ts';
import { JoinWatcher } from './join-watcher.ts';

/** What the join watcher needs. */
export interface JoinWatchDeps {
  /** The worker's node informer; without it, watching joins fails. */
  informer?: NodeInformer;
  store: Store;
  designs: DesignCache;
  startRun?: RunStarter;
  telemetry?: JoinTelemetry;
  health?: JoinHealth;
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
      const { informer, startRun } = deps;
      if (!startRun) throw ApplicationFailure.nonRetryable('this worker cannot start join runs (no run starter)', FailureType.InternalError);
      if (!informer) throw ApplicationFailure.nonRetryable('this worker cannot watch joins (no node informer)', FailureType.InternalError);
      const watcher = new JoinWatcher({ ...deps, informer, startRun, client: context.client, heartbeat: (report) => context.heartbeat(report) }, input);
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
