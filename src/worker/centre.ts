/**
 * The fleet's centre worker: the fleet's workflows (rollouts, surveys) on
 * the fleet task queue, and nothing else. It loads no kubeconfig, opens no
 * store and no Kubernetes client, and registers no activities: everything
 * that touches a site runs on the site's own queue, taken by the site's
 * worker, so the centre holds no credential of any site.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { hostname } from 'node:os';
import { DEFAULT_FLEET_TASK_QUEUE } from '../core/plan/constants.ts';
import { connectOptions } from '../temporal/settings.ts';
import { temporalUnreachable } from '../temporal/reach.ts';
import { buildBundle } from './bundle.ts';
import { WORKER_DEFAULTS, type WorkerConfig } from './config.ts';

/**
 * Connects and creates the centre worker (not yet running) on
 * `config.fleetTaskQueue`; `config.kubeconfig` and `config.storeUrl` are
 * never read. The caller runs it and, after it stops, calls `close()`.
 * Throws, naming the address and namespace, when Temporal cannot be reached.
 */
export async function createCentreWorker(config: WorkerConfig): Promise<{ worker: Worker; connection: NativeConnection; close(): Promise<void> }> {
  const connect = connectOptions(config);
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ ...connect, address: config.temporalAddress });
  } catch (err) {
    throw new Error(await temporalUnreachable(config.temporalAddress, config.namespace, err), { cause: err });
  }
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.fleetTaskQueue ?? DEFAULT_FLEET_TASK_QUEUE,
    workflowBundle: config.workflowBundle ?? (await buildBundle()),
    identity: `centre/${process.pid}@${hostname()}`,
    maxCachedWorkflows: config.maxCachedWorkflows ?? WORKER_DEFAULTS.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: config.maxConcurrentWorkflowTasks ?? WORKER_DEFAULTS.maxConcurrentWorkflowTasks,
    nonStickyToStickyPollRatio: WORKER_DEFAULTS.nonStickyToStickyPollRatio,
  });
  return { worker, connection, close: () => connection.close() };
}
