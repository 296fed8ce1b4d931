/**
 * The worker's configuration: its settings (flags and the environment
 * variables behind them, from src/settings/table.ts) and the defaults sized
 * for a small shared machine.
 */
import { Command, type Option } from 'commander';
import type { WorkflowBundle } from '@temporalio/worker';
import { DEFAULT_KUBE_BURST, DEFAULT_KUBE_QPS } from '../kube/nodes.ts';
import type { LogLevelName, WorkerRole } from '../settings/parsers.ts';
import { connectionOptions } from '../settings/connection-options.ts';
import { addSettingOptions, settingFromEnv, settingOption, variableFromEnv } from '../settings/setting.ts';
import { CONNECTION, VARIABLES, WORKER } from '../settings/table.ts';
import { temporalSettingsFromEnv, type TemporalConnectOptions } from '../temporal/settings.ts';
import { DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT } from './probes.ts';

/** Everything a worker needs to know. */
export interface WorkerConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /**
   * What the worker is (default `site`): a site's worker polls `taskQueue`
   * with its cluster and store; the centre polls `fleetTaskQueue` for the
   * fleet's workflows only and loads no kubeconfig and opens no store.
   */
  role?: WorkerRole;
  /** The fleet's task queue, which the centre polls (default relabel-fleet). */
  fleetTaskQueue?: string;
  /** TLS, API key and headers for Temporal (the SDK's environment configuration). */
  connect?: TemporalConnectOptions;
  /** Why the Temporal profile could not be used; the worker refuses to start with it. */
  configError?: string;
  /** kubeconfig file; absent: KUBECONFIG, in-cluster, ~/.kube/config. */
  kubeconfig?: string;
  /** Revision store URL (sqlite:PATH or postgres://…); absent: the embedded default. */
  storeUrl?: string;
  /** The worker's identity as Temporal and the Events show it (default `<pid>@<host>`; many workers in one process need their own). */
  identity?: string;
  /** Pre-built workflow bundle (tests build it once). */
  workflowBundle?: WorkflowBundle;
  /** Requests per second to the Kubernetes API, averaged (0: no limit). */
  kubeQps?: number;
  /** Requests the Kubernetes client may send at once above `kubeQps`. */
  kubeBurst?: number;
  /** Most Nodes the worker keeps a watched copy of (0: none; every plan LISTs). */
  nodeCacheMax?: number;
  /** Workflow executions kept in the worker's cache (the parent and the children in flight). */
  maxCachedWorkflows?: number;
  /** Workflow tasks run at once; each child in flight holds one while its local activity patches its node. */
  maxConcurrentWorkflowTasks?: number;
  /** Activities (planning, store reads) run at once. */
  maxConcurrentActivities?: number;
  /**
   * Long polls for workflow and activity tasks the worker keeps open (the SDK's
   * defaults when absent); Temporal caps the polls of a namespace, so many
   * workers of small sites each need few.
   */
  taskPolls?: { workflow: number; activity: number };
  /** Local activities (one per child: patch a node) run at once. */
  maxConcurrentLocalActivities?: number;
  /** Whether heal runs set relabel's search attributes (default: unless RELABEL_SEARCH_ATTRIBUTES=off). */
  searchAttributes?: boolean;
}

/**
 * V8 flags the worker process runs with. Young generation of 16 MiB
 * semi-spaces: a bulk plan allocates a page's objects and drops them, and
 * with V8's smaller default a large no-op spends much of its CPU in
 * young-generation collections. Old space grows by at most a quarter past
 * what survived the last full collection: objects of nodes in flight live
 * about as long as a patch, so many are promoted and die there, and V8's
 * default growth (up to 4×) lets the heap reach several times its live
 * objects, with no CPU saved that the benchmark can see. A fraction, not a
 * fixed limit, so a 50,000-node design still fits. Set when the process
 * starts: `npm run worker`, the image, the benchmark and the tests use them.
 * The worker's measured memory is in bench/README.md.
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=25'] as const;

/**
 * Environment the worker process starts with: at most two malloc arenas.
 * glibc gives threads that allocate at once arenas of their own, up to
 * eight a core, and the worker's native threads (the Temporal SDK's Rust
 * core, libuv's pool, V8's helpers) spread over a dozen, each holding freed
 * memory of its own: over a long run the process grows outside V8's heaps,
 * which hold steady. Two arenas keep that memory bounded at no CPU cost the
 * benchmark can see (`npm run bench:e2e`; figures in bench/README.md).
 * Read by glibc when the process starts, so set by whatever starts it:
 * `npm run worker`, the image, the benchmark and the tests use it.
 */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/**
 * Defaults fit for a 2-core machine shared with Temporal and the API server;
 * see docs/deploy.md for larger ones. A `relabelNode` child holds a workflow
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
  nodeCacheMax: 20_000,
} as const;

/**
 * Worker configuration from the environment, each variable parsed as its
 * flag would be; a refused value throws a SettingError naming the flag and
 * the variable (`RELABEL_KUBE_QPS=fifty` is refused, not read as no limit).
 */
export function workerConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  return {
    ...temporalSettingsFromEnv(env),
    role: settingFromEnv(WORKER.role, env) ?? WORKER.role.default,
    fleetTaskQueue: settingFromEnv(CONNECTION.fleetTaskQueue, env) ?? CONNECTION.fleetTaskQueue.default,
    kubeconfig: settingFromEnv(CONNECTION.kubeconfig, env),
    storeUrl: settingFromEnv(CONNECTION.store, env),
    kubeQps: settingFromEnv(WORKER.kubeQps, env) ?? DEFAULT_KUBE_QPS,
    kubeBurst: settingFromEnv(WORKER.kubeBurst, env) ?? DEFAULT_KUBE_BURST,
    nodeCacheMax: settingFromEnv(WORKER.nodeCacheMax, env) ?? WORKER_DEFAULTS.nodeCacheMax,
    searchAttributes: variableFromEnv(VARIABLES.searchAttributes, env),
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

/** The worker's options, each defaulting to its variable's value; throws SettingError for a refused variable. */
function workerOptions(env: NodeJS.ProcessEnv, config: WorkerConfig): Option[] {
  const from = { env };
  return [
    settingOption(WORKER.role, from),
    ...connectionOptions(env, config),
    settingOption(WORKER.kubeQps, { env, fallback: DEFAULT_KUBE_QPS }),
    settingOption(WORKER.kubeBurst, { env, fallback: DEFAULT_KUBE_BURST }),
    settingOption(WORKER.nodeCacheMax, { env, fallback: WORKER_DEFAULTS.nodeCacheMax }),
    settingOption(WORKER.maxCachedWorkflows, { env, fallback: WORKER_DEFAULTS.maxCachedWorkflows }),
    settingOption(WORKER.maxWorkflowTasks, { env, fallback: WORKER_DEFAULTS.maxConcurrentWorkflowTasks }),
    settingOption(CONNECTION.logLevel, from),
    settingOption(WORKER.metricsAddress, { env, fallback: DEFAULT_METRICS_ADDRESS }),
    settingOption({ ...WORKER.metricsPort, envNote: `unset: ${DEFAULT_METRICS_PORT}, or a free one when that is taken` }, from),
  ];
}

/**
 * The worker's settings from its command line `argv` and `env`. A refused
 * flag or variable stops the process with commander's usage error (exit
 * code 1), the same message shape for both, naming the flag and the variable.
 * The centre (`--role centre`) refuses `--kubeconfig` and `--store` given on
 * its command line: it would never use them, and an operator who gives one
 * means something else. It ignores KUBECONFIG and RELABEL_STORE_URL in its
 * environment (an environment shared with the CLI or a site's worker often
 * sets them), never reading either: it loads no kubeconfig at all.
 */
export function parseWorkerSettings(argv: string[], env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const program = new Command('relabel-worker').description('Run relabel workflows and activities');
  const config = addSettingOptions(program, () => {
    const read = workerConfigFromEnv(env);
    return { options: workerOptions(env, read), read };
  });
  const opts = program.parse(argv).opts<{
    role: WorkerRole;
    address: string;
    namespace: string;
    taskQueue: string;
    fleetTaskQueue: string;
    kubeconfig?: string;
    store?: string;
    logLevel: LogLevelName;
    metricsAddress: string;
    metricsPort?: number;
    kubeQps: number;
    kubeBurst: number;
    nodeCacheMax: number;
    maxCachedWorkflows: number;
    maxWorkflowTasks: number;
  }>();
  const centre = opts.role === 'centre';
  if (centre) {
    for (const name of ['kubeconfig', 'store'] as const) {
      if (program.getOptionValueSource(name) === 'cli')
        program.error(
          `error: option '--${name}' is refused with --role centre: the centre runs only the fleet's workflows and holds no kubeconfig and no store`,
        );
    }
  }
  return {
    config: {
      ...config,
      role: opts.role,
      temporalAddress: opts.address,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      fleetTaskQueue: opts.fleetTaskQueue,
      // The centre drops what its environment says of a cluster or a store, so nothing downstream can load them.
      kubeconfig: centre ? undefined : opts.kubeconfig,
      storeUrl: centre ? undefined : opts.store,
      kubeQps: opts.kubeQps,
      kubeBurst: opts.kubeBurst,
      nodeCacheMax: opts.nodeCacheMax,
      maxCachedWorkflows: opts.maxCachedWorkflows,
      maxConcurrentWorkflowTasks: opts.maxWorkflowTasks,
    },
    logLevel: opts.logLevel,
    metricsAddress: opts.metricsAddress,
    metricsPort: opts.metricsPort,
  };
}
