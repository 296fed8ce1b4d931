/**
 * `watchJoins`: a site's join watcher (`relabel-join/<site>`), on while
 * joins are enabled. It runs one long, heartbeating activity after another
 * (`watchNodeJoins`), each watching the cluster's Nodes for a while and
 * starting ordinary update runs (`via: join`) for the nodes that join; a
 * failed attempt (the API server, the store, Temporal unreachable) is
 * retried with backoff for as long as it takes, and lists again. Cancelled
 * (`relabel join disable`), it stops watching and ends.
 *
 * Bounded by design: no node or count grows its history; each watching
 * activity is a few events, and the execution continues as new after
 * {@link DEFAULT_WATCHES_PER_EXECUTION} of them.
 */
import { ActivityCancellationType, continueAsNew, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { DEFAULT_WATCH_SECONDS, DEFAULT_WATCHES_PER_EXECUTION, type WatchJoinsInput } from '../contracts/join-messages.ts';
import { rejectionOf } from './failure.ts';

/** Seconds past its own time a watching activity may take to hand over. */
const HANDOVER_SECONDS = 300;

/** The watching activity, with `watchSeconds` of life. */
function watcher(watchSeconds: number) {
  return proxyActivities<Activities>({
    startToCloseTimeout: `${watchSeconds + HANDOVER_SECONDS}s`,
    // The SDK sends heartbeats at most every 0.8 × this, and a cancellation (joins disabled) is
    // delivered on a heartbeat's answer: short, so `relabel join disable` takes seconds.
    heartbeatTimeout: '10s',
    // Wait for the activity to stop its watch before the workflow ends cancelled.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', maximumInterval: '30s', nonRetryableErrorTypes: [FailureType.InvalidArgument, FailureType.InternalError] },
    summary: 'watch the Nodes; start a join run for the nodes that join',
  }).watchNodeJoins;
}

/**
 * Watches `input.site` for joining nodes until cancelled. Rejects
 * (InvalidArgument) when the store's latest revision is of another site.
 */
export async function watchJoins(input: WatchJoinsInput): Promise<void> {
  const watchSeconds = input.watchSeconds ?? DEFAULT_WATCH_SECONDS;
  const perExecution = input.continueAsNewAfter ?? DEFAULT_WATCHES_PER_EXECUTION;
  const watch = watcher(watchSeconds);
  setCurrentDetails(
    `**watching** the Nodes of site **${input.site}**: every node that joins and that the latest committed revision manages gets its labels in a join run. \`relabel join status\` shows the watcher's progress.`,
  );
  for (let i = 0; i < perExecution; i++) {
    try {
      const report = await watch({
        site: input.site,
        watchSeconds,
        ...(input.enabledBy !== undefined ? { enabledBy: input.enabledBy } : {}),
        ...(input.maxBatch !== undefined ? { maxBatch: input.maxBatch } : {}),
        ...(input.batchDelayMs !== undefined ? { batchDelayMs: input.batchDelayMs } : {}),
        ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
      });
      setCurrentDetails(
        `**watching** the Nodes of site **${input.site}**. Last watch ${i + 1}: ${report.runs} join run(s), ${report.dispatched} node(s) handed to them, ${report.labelled} seen labelled, ${report.failed ?? 0} failed, ${report.unmanaged} not managed (left alone), ${report.pending} waiting.`,
      );
    } catch (err) {
      throw rejectionOf(err) ?? err;
    }
  }
  await continueAsNew<typeof watchJoins>(input);
}
