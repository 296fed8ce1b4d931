/**
 * A workflow's executions, first to last, followed through its
 * continue-as-new chain: each one's history in events and in bytes (as
 * Temporal stores it, protobuf) and the size of its input. What a test of
 * history bounds asserts on.
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;

/** One execution's figures. */
export interface ExecutionFigures {
  runId: string;
  events: number;
  historyBytes: number;
  /** The first argument's payload, in bytes. */
  inputBytes: number;
  /** The first argument, decoded (JSON). */
  input: unknown;
}

/** The executions of `workflowId` from `firstRunId` on. */
export async function executionChain(client: Client, workflowId: string, firstRunId: string): Promise<ExecutionFigures[]> {
  const chain: ExecutionFigures[] = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history: proto.temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: proto.temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    const data = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data ?? new Uint8Array();
    chain.push({
      runId,
      events: events.length,
      historyBytes: temporal.api.history.v1.History.encode(history).finish().length,
      inputBytes: data.length,
      input: JSON.parse(Buffer.from(data).toString('utf8')) as unknown,
    });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return chain;
}
