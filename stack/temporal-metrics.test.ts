import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { temporalCounts, temporalFigures } from './temporal-metrics.ts';

const METRICS = [
  '# HELP persistence_requests persistence_requests counter',
  'persistence_requests{namespace="default",operation="UpdateWorkflowExecution",service_name="history"} 10',
  'persistence_requests{namespace="system",operation="UpdateWorkflowExecution",service_name="history"} 2',
  'persistence_requests{operation="CreateTasks",service_name="matching"} 3',
  'visibility_persistence_requests{operation="RecordWorkflowExecutionClosed",service_name="history"} 4',
  'poll_success{partition="0",task_type="Workflow",taskqueue="relabel_bench"} 8',
  'poll_success{partition="__sticky__",task_type="Workflow",taskqueue="relabel_bench"} 2',
  'poll_success{partition="0",task_type="Activity",taskqueue="relabel_bench"} 5',
  'poll_success{partition="0",task_type="Workflow",taskqueue="other"} 7',
  'poll_success_sync{partition="0",task_type="Workflow",taskqueue="relabel_bench"} 6',
  'persistence_requests_latency_bucket{operation="CreateTasks",le="0.1"} 99',
].join('\n');

test('temporalCounts sums the server counters by operation, and workflow tasks of one task queue', async () => {
  const server = createServer((_, res) => res.end(METRICS));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const counts = await temporalCounts(`http://127.0.0.1:${port}/metrics`, 'relabel-bench');
    assert.deepEqual(counts, {
      persistence: { UpdateWorkflowExecution: 12, CreateTasks: 3 },
      persistenceByService: { history: 12, matching: 3 },
      visibility: { RecordWorkflowExecutionClosed: 4 },
      workflowTasks: { polled: 10, syncMatched: 6 },
    });
  } finally {
    server.close();
  }
});

test('temporalFigures gives what happened between two readings per changed node, and nothing when none changed', () => {
  const before = {
    persistence: { UpdateWorkflowExecution: 10 },
    persistenceByService: { history: 10 },
    visibility: { RecordWorkflowExecutionStarted: 1 },
    workflowTasks: { polled: 2, syncMatched: 1 },
  };
  const after = {
    persistence: { UpdateWorkflowExecution: 30, CreateWorkflowExecution: 4 },
    persistenceByService: { history: 30, matching: 4 },
    visibility: { RecordWorkflowExecutionStarted: 5, RecordWorkflowExecutionClosed: 4 },
    workflowTasks: { polled: 6, syncMatched: 4 },
  };
  assert.deepEqual(temporalFigures(before, after, 4), {
    dbOpsPerChangedNode: 6,
    dbOpsPerChangedNodeByOp: { UpdateWorkflowExecution: 5, CreateWorkflowExecution: 1 },
    dbOpsPerChangedNodeByService: { history: 5, matching: 1 },
    visibilityOpsPerChangedNode: 2,
    visibilityOpsPerChangedNodeByOp: { RecordWorkflowExecutionStarted: 1, RecordWorkflowExecutionClosed: 1 },
    workflowTasksSyncMatched: 0.75,
  });
  assert.deepEqual(temporalFigures(before, after, 0), {});
});
