/**
 * The worker's configuration: its flags, the environment variables behind
 * them, and the defaults sized for a small shared machine.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { WorkflowBundle } from '@temporalio/worker';
import { isIP } from 'node:net';
import { DEFAULT_KUBE_BURST, DEFAULT_KUBE_QPS } from '../kube/nodes.ts';
import { temporalSettingsFromEnv, type TemporalConnectOptions } from '../temporal/settings.ts';
import { DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT } from './probes.ts';
import { logLevel, type LogLevelName } from './telemetry.ts';

/** A flag's parser of whole numbers from `min` to `max`, refusing anything else with `rule`. */
function wholeNumber(min: number, max: number, rule: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(rule);
    return n;
  };
}

/** A whole number ≥ 0 from a flag. */
const rate = wholeNumber(0, Infinity, 'must be a whole number ≥ 0');

/** Workflow task slots from a flag: a whole number ≥ 2 (the SDK needs two with sticky execution). */
const slots = wholeNumber(2, Infinity, 'must be a whole number ≥ 2');

/** A TCP port from a flag: 0 (any free port) to 65535. */
const port = wholeNumber(0, 65535, 'must be a port number, 0 to 65535');

/** An IP address to listen on, from a flag. */
function listenAddress(value: string): string {
  if (isIP(value) === 0) throw new InvalidArgumentError('must be an IP address of this host: 127.0.0.1 (loopback only) or 0.0.0.0 (every interface)');
  return value;
}

/** A log level from a flag. */
function level(value: string) {
  try {
    return logLevel(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** `parse` of the variable `name`, or `fallback` when it is unset or empty; a bad value is refused naming the variable. */
function fromEnv<T>(name: string, parse: (value: string) => T, fallback: T): T {
  const value = process.env[name];
  if (!value) return fallback;
  try {
    return parse(value);
  } catch (err) {
    throw new Error(`${name}=${JSON.stringify(value.slice(0, 40))}: ${(err as Error).message}`);
  }
}

/** Everything a worker needs to know. */
export interface WorkerConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** TLS, API key and headers for Temporal (the SDK's environment configuration). */
  connect?: TemporalConnectOptions;
  /** Why the Temporal profile could not be used; the worker refuses to start with it. */
  configError?: string;
  /** kubeconfig file; absent: KUBECONFIG, in-cluster, ~/.kube/config. */
  kubeconfig?: string;
  /** Revision store URL (sqlite:PATH or postgres://…); absent: the embedded default. */
  storeUrl?: string;
  /** Pre-built workflow bundle (tests build it once). */
  workflowBundle?: WorkflowBundle;
  /** Requests per second to the Kubernetes API, averaged (0: no limit). */
  kubeQps?: number;
  /** Requests the Kubernetes client may send at once above `kubeQps`. */
  kubeBurst?: number;
  /** Workflow executions kept in the worker's cache (the parent and the children in flight). */
  maxCachedWorkflows?: number;
  /** Workflow tasks run at once; each child in flight holds one while its local activity patches its node. */
  maxConcurrentWorkflowTasks?: number;
  /** Activities (planning, store reads) run at once. */
  maxConcurrentActivities?: number;
  /** Local activities (one per child: patch a node) run at once. */
  maxConcurrentLocalActivities?: number;
  /** Whether heal runs set relabel's search attributes (default: unless RELABEL_SEARCH_ATTRIBUTES=off). */
  searchAttributes?: boolean;
}

/**
 * V8 flags the worker process runs with. A small young generation (4 MiB
 * semi-spaces) costs less CPU in garbage collection. Old space grows by at
 * most a quarter past what survived the last full collection: objects of
 * nodes in flight live about as long as a patch, so many are promoted and
 * die there, and V8's default growth (up to 4×) let a worker relabelling
 * 3,000 nodes reach 560 MiB holding under 100 MiB of live objects; with the
 * bound it peaks near 360 MiB at no measurable CPU cost (`npm run bench:e2e`).
 * A fraction, not a fixed limit, so a 50,000-node design still fits. Set
 * when the process starts: `npm run worker`, the image, the benchmark and
 * the tests use them.
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=25'] as const;

/**
 * Defaults fit for a 2-core machine shared with Temporal and the API server;
 * see the README for larger ones. A `relabelNode` child holds a workflow
 * task slot while its local activity patches the node, so there are slots
 * for a whole window of children (a run's default is 50) besides the run
 * itself; fewer, and the server queues children's first tasks in its
 * database. Those first tasks come from the task queue itself, never a
 * worker's sticky queue, so most workflow task pollers poll the task queue.
 */
export const WORKER_DEFAULTS = {
  maxCachedWorkflows: 150,
  maxConcurrentActivities: 20,
  maxConcurrentLocalActivities: 200,
  maxConcurrentWorkflowTasks: 100,
  nonStickyToStickyPollRatio: 0.8,
} as const;

/** Worker configuration from the environment. */
export function workerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return {
    ...temporalSettingsFromEnv(env),
    kubeconfig: env.KUBECONFIG || undefined,
    storeUrl: env.RELABEL_STORE_URL || undefined,
    kubeQps: env.RELABEL_KUBE_QPS ? Number(env.RELABEL_KUBE_QPS) : DEFAULT_KUBE_QPS,
    kubeBurst: env.RELABEL_KUBE_BURST ? Number(env.RELABEL_KUBE_BURST) : DEFAULT_KUBE_BURST,
  };
}

/** What the worker process runs with: its {@link WorkerConfig} and how it reports. */
export interface WorkerSettings {
  config: WorkerConfig;
  logLevel: LogLevelName;
  /** Address of /metrics and the health endpoints. */
  metricsAddress: string;
  /** Their port; undefined: the default, or a free one when that is taken. */
  metricsPort?: number;
}

/** The worker's settings from its command line `argv` and the environment; a bad value is refused naming it. */
export function parseWorkerSettings(argv: string[]): WorkerSettings {
  const env = workerConfigFromEnv();
  const program = new Command('relabel-worker')
    .description('Run relabel workflows and activities')
    .option('--address <host:port>', 'Temporal frontend (TEMPORAL_ADDRESS)', env.temporalAddress)
    .option('--namespace <ns>', 'Temporal namespace (TEMPORAL_NAMESPACE)', env.namespace)
    .option('--task-queue <name>', 'task queue (RELABEL_TASK_QUEUE)', env.taskQueue)
    .option('--kubeconfig <path>', 'kubeconfig (KUBECONFIG; in-cluster when absent)', env.kubeconfig)
    .option('--store <url>', 'revision store URL (RELABEL_STORE_URL)', env.storeUrl)
    .addOption(new Option('--kube-qps <n>', 'Kubernetes API requests per second, 0 for no limit (RELABEL_KUBE_QPS)').argParser(rate).default(env.kubeQps))
    .addOption(new Option('--kube-burst <n>', 'requests allowed at once above the rate (RELABEL_KUBE_BURST)').argParser(rate).default(env.kubeBurst))
    .addOption(new Option('--max-cached-workflows <n>', 'workflow executions kept in memory').argParser(rate).default(WORKER_DEFAULTS.maxCachedWorkflows))
    .addOption(
      new Option('--max-workflow-tasks <n>', 'workflow tasks run at once: at least the largest window of nodes in flight (a run\'s concurrency) that this worker serves')
        .argParser(slots)
        .default(WORKER_DEFAULTS.maxConcurrentWorkflowTasks),
    )
    .addOption(new Option('--log-level <level>', 'trace, debug, info, warn or error (RELABEL_LOG_LEVEL)').argParser(level).default(fromEnv('RELABEL_LOG_LEVEL', level, 'info')))
    .addOption(
      new Option('--metrics-address <ip>', 'address of /metrics, /health/live and /health/ready: 127.0.0.1 loopback only, 0.0.0.0 every interface (RELABEL_METRICS_ADDRESS)')
        .argParser(listenAddress)
        .default(fromEnv('RELABEL_METRICS_ADDRESS', listenAddress, DEFAULT_METRICS_ADDRESS)),
    )
    .addOption(
      new Option('--metrics-port <port>', `their port, 0 for any free one (RELABEL_METRICS_PORT; unset: ${DEFAULT_METRICS_PORT}, or a free one when that is taken)`)
        .argParser(port)
        .default(fromEnv<number | undefined>('RELABEL_METRICS_PORT', port, undefined)),
    )
    .parse(argv);
  const opts = program.opts<{
    address: string;
    namespace: string;
    taskQueue: string;
    kubeconfig?: string;
    store?: string;
    logLevel: ReturnType<typeof level>;
    metricsAddress: string;
    metricsPort?: number;
    kubeQps: number;
    kubeBurst: number;
    maxCachedWorkflows: number;
    maxWorkflowTasks: number;
  }>();
  return {
    config: {
      ...env,
      temporalAddress: opts.address,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      kubeconfig: opts.kubeconfig,
      storeUrl: opts.store,
      kubeQps: opts.kubeQps,
      kubeBurst: opts.kubeBurst,
      maxCachedWorkflows: opts.maxCachedWorkflows,
      maxConcurrentWorkflowTasks: opts.maxWorkflowTasks,
    },
    logLevel: opts.logLevel,
    metricsAddress: opts.metricsAddress,
    metricsPort: opts.metricsPort,
  };
}
