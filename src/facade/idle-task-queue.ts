/**
 * Whether a worker serves a task queue: what keeps a running workflow from
 * progressing when none does, told to the operator instead of a hang.
 */
import type { Client } from '@temporalio/client';
import { timestampMs } from '../temporal/timestamp.ts';

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
