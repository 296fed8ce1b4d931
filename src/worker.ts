/**
 * The relabel worker: runs the workflows and activities on a task queue.
 * Configured from the environment and flags; stops gracefully on SIGTERM or
 * SIGINT (in-flight tasks finish, nothing is lost: Temporal keeps the rest).
 */
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { pino, type Logger } from 'pino';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from './activities/index.ts';
import { createNodeApi, loadKubeConfig } from './activities/kube-nodes.ts';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from './core/constants.ts';
import { openStore } from './store/open-store.ts';

/** Path of the workflow code the worker bundles. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));

/** Everything a worker needs to know. */
export interface WorkerConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** kubeconfig file; absent: KUBECONFIG, in-cluster, ~/.kube/config. */
  kubeconfig?: string;
  /** Revision store URL (sqlite:PATH or postgres://…); absent: the embedded default. */
  storeUrl?: string;
  /** Pre-built workflow bundle (tests build it once). */
  workflowBundle?: WorkflowBundle;
  maxConcurrentActivities?: number;
}

/** Worker configuration from the environment. */
export function workerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return {
    temporalAddress: env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE,
    taskQueue: env.RELABEL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    kubeconfig: env.KUBECONFIG || undefined,
    storeUrl: env.RELABEL_STORE_URL || undefined,
  };
}

/**
 * Connects and creates a worker (not yet running). The caller runs it and,
 * after it stops, calls `close()` to release the store and connection.
 */
export async function createWorker(config: WorkerConfig): Promise<{ worker: Worker; close(): Promise<void> }> {
  const store = await openStore(config.storeUrl);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const nodes = createNodeApi(loadKubeConfig(config.kubeconfig));
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    ...(config.workflowBundle ? { workflowBundle: config.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities({ nodes, store }),
    maxConcurrentActivityTaskExecutions: config.maxConcurrentActivities ?? 100,
  });
  return {
    worker,
    async close() {
      await connection.close();
      await store.close();
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const env = workerConfigFromEnv();
  const program = new Command('relabel-worker')
    .description('Run relabel workflows and activities')
    .option('--address <host:port>', 'Temporal frontend (TEMPORAL_ADDRESS)', env.temporalAddress)
    .option('--namespace <ns>', 'Temporal namespace (TEMPORAL_NAMESPACE)', env.namespace)
    .option('--task-queue <name>', 'task queue (RELABEL_TASK_QUEUE)', env.taskQueue)
    .option('--kubeconfig <path>', 'kubeconfig (KUBECONFIG; in-cluster when absent)', env.kubeconfig)
    .option('--store <url>', 'revision store URL (RELABEL_STORE_URL)', env.storeUrl)
    .option('--log-level <level>', 'log level', process.env.LOG_LEVEL ?? 'info')
    .parse(argv);
  const opts = program.opts<{ address: string; namespace: string; taskQueue: string; kubeconfig?: string; store?: string; logLevel: string }>();
  const log: Logger = pino({ level: opts.logLevel, base: { component: 'relabel-worker' } });
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => log.warn({ sdk: entry.meta }, entry.message)),
    shutdownSignals: [],
  });
  const { worker, close } = await createWorker({
    temporalAddress: opts.address,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    kubeconfig: opts.kubeconfig,
    storeUrl: opts.store,
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log.info({ signal }, 'shutting down: finishing in-flight tasks');
      worker.shutdown();
    });
  }
  log.info({ address: opts.address, namespace: opts.namespace, taskQueue: opts.taskQueue }, 'worker started');
  process.send?.({ ready: true });
  await worker.run();
  await close();
  log.info('worker stopped');
}

if (import.meta.main) {
  main(process.argv).catch((err: unknown) => {
    console.error(`relabel-worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
