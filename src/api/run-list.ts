/**
 * The recent update runs, from Temporal's visibility store: what `GET
 * actions` lists. The runs facade has no listing yet; this is its one query.
 */
import { Client, Connection } from '@temporalio/client';
import type { RelabelConfig } from '../facade/index.ts';

/** A run as visibility knows it. */
export type RunListing = { workflowId: string; runId: string; execution: string; startTime: string; closeTime?: string };

/** Lists recent update runs, most recent first. */
export interface RunList {
  recent(limit: number): Promise<RunListing[]>;
}

/** Lists the `updateLabels` runs of `taskQueue` through `client`. */
export function runListFrom(client: Client, taskQueue: string): RunList {
  const query = `WorkflowType = 'updateLabels' AND TaskQueue = '${taskQueue.replaceAll("'", "\\'")}'`;
  return {
    async recent(limit) {
      const runs: RunListing[] = [];
      for await (const w of client.workflow.list({ query, pageSize: limit })) {
        runs.push({
          workflowId: w.workflowId,
          runId: w.runId,
          execution: w.status.name,
          startTime: w.startTime.toISOString(),
          ...(w.closeTime ? { closeTime: w.closeTime.toISOString() } : {}),
        });
        if (runs.length >= limit) break;
      }
      return runs;
    },
  };
}

/** A {@link RunList} over its own connection, made on first use; `close()` releases it. */
export function connectRunList(config: Pick<RelabelConfig, 'temporalAddress' | 'namespace' | 'taskQueue'>): RunList & { close(): Promise<void> } {
  let connection: Promise<Connection> | undefined;
  let list: Promise<RunList> | undefined;
  return {
    recent(limit) {
      list ??= (connection = Connection.connect({ address: config.temporalAddress, connectTimeout: '5s' })).then((c) =>
        runListFrom(new Client({ connection: c, namespace: config.namespace }), config.taskQueue),
      );
      // A failed connection is not kept: the next request tries again.
      list.catch(() => {
        list = undefined;
        connection = undefined;
      });
      return list.then((l) => l.recent(limit));
    },
    async close() {
      await (await connection?.catch(() => undefined))?.close();
    },
  };
}
