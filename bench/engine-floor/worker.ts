/**
 * The engine floor's worker process, forked by the benchmark with the same
 * Node flags as relabel's worker: relabel's worker settings
 * (`WORKER_DEFAULTS`), its own workflow bundle (bench/engine-floor/workflows.ts)
 * and activities. Environment: TEMPORAL_ADDRESS, KUBECONFIG,
 * ENGINE_FLOOR_TASK_QUEUE, ENGINE_FLOOR_KUBE_QPS (0: no limit). Tells its
 * parent `ready` over IPC once the worker is created; stops on SIGTERM.
 */
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { WORKER_DEFAULTS } from '../../src/worker/config.ts';
import { createEngineFloorActivities } from './activities.ts';

/** Runs the engine floor's worker until SIGTERM. */
async function main(env: NodeJS.ProcessEnv): Promise<void> {
  // No metrics exporter: the floor is the engine alone (relabel's worker also exports Prometheus metrics).
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: env.ENGINE_FLOOR_TASK_QUEUE ?? 'engine-floor',
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities: createEngineFloorActivities(loadKubeConfig(env.KUBECONFIG), Number(env.ENGINE_FLOOR_KUBE_QPS ?? 0)),
    maxCachedWorkflows: WORKER_DEFAULTS.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: WORKER_DEFAULTS.maxConcurrentWorkflowTasks,
    maxConcurrentActivityTaskExecutions: WORKER_DEFAULTS.maxConcurrentActivities,
    maxConcurrentLocalActivityExecutions: WORKER_DEFAULTS.maxConcurrentLocalActivities,
    nonStickyToStickyPollRatio: WORKER_DEFAULTS.nonStickyToStickyPollRatio,
  });
  process.once('SIGTERM', () => worker.shutdown());
  process.send?.({ ready: true });
  await worker.run();
  await connection.close();
}

if (import.meta.main) {
  main(process.env).catch((err: unknown) => {
    console.error(`engine-floor worker: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
}
