/**
 * The worker's wiring: the Kubernetes clients behind one rate limiter, the
 * revision store, the Temporal connection and the SDK worker that runs the
 * workflows and activities on them.
 */
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { hostname } from 'node:os';
import { createActivities } from '../activities/index.ts';
import { createNodeEvents } from '../activities/node-events.ts';
import { createEventApi } from '../kube/events.ts';
import { createNodeApi, DEFAULT_KUBE_BURST, DEFAULT_KUBE_QPS, loadKubeConfig } from '../kube/nodes.ts';
import { createNodeWatchApi } from '../kube/node-watch.ts';
import { cachedNodeApi, clusterVersion } from '../kube/node-cache.ts';
import { NodeInformer } from '../kube/node-informer.ts';
import { nodePageLister } from '../kube/node-list.ts';
import { createWorkloadApi } from '../kube/workloads.ts';
import { tokenBucket } from '../kube/rate-limit.ts';
import { createDesignCache, type DesignCache } from '../store/designs/design-cache.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { connectOptions } from '../temporal/settings.ts';
import { temporalUnreachable } from '../temporal/reach.ts';
import type { RunStarter, SiteRunPreparer } from '../temporal/run-starter.ts';
import { buildBundle } from './bundle.ts';
import { WORKER_DEFAULTS, type WorkerConfig } from './config.ts';
import { joinHealthBoard, type JoinHealthBoard } from './join-health.ts';
import { joinMetrics, kubeEventMetrics, kubeRequestMetrics, nodeListMetrics, watchMetrics } from './telemetry.ts';

/** A starting worker waits for its copy of the Nodes while the build receives a page at least this often. */
const NODE_CACHE_STALLED_MS = 10_000;

/** What the worker's entry point injects: the parts of relabel the worker runs but does not own. */
export interface WorkerPorts {
  /**
   * The run starter of heal and join runs, given the worker's store and
   * design cache (the facade's, `src/facade/runs/run-starter.ts`); without it,
   * the activities that start runs refuse to.
   */
  runStarter?: (parts: { store: Store; designs: DesignCache }) => RunStarter;
  /** The preparer of this site's runs for fleet rollouts (the facade's, beside the run starter); without it, fleet rollouts find the site refusing. */
  siteRuns?: (parts: { store: Store; designs: DesignCache }) => SiteRunPreparer;
  /**
   * A Temporal connection the caller owns and shares (many workers in one
   * process, as the fleet benchmark runs them); the worker then opens none
   * and its `close()` leaves this one open.
   */
  connection?: NativeConnection;
}

/**
 * Connects and creates a worker (not yet running). The caller runs it and,
 * after it stops, calls `close()` to release the store and connection.
 * Kubernetes requests are counted on the process's Temporal Runtime meter.
 */
export async function createWorker(
  config: WorkerConfig,
  ports: WorkerPorts = {},
): Promise<{ worker: Worker; connection: NativeConnection; joinHealth: JoinHealthBoard; close(): Promise<void> }> {
  // The configuration first: a bad profile or kubeconfig is refused before anything is opened.
  const connect = connectOptions(config);
  const kc = loadKubeConfig(config.kubeconfig);
  const rate = { qps: config.kubeQps ?? DEFAULT_KUBE_QPS, burst: config.kubeBurst ?? DEFAULT_KUBE_BURST };
  // One client-side limiter for every request to the API server: Node reads and patches, Events, and the workload lists.
  const limiter = tokenBucket(rate.qps, rate.burst);
  const runtime = Runtime.instance();
  const observe = kubeRequestMetrics(runtime.metricMeter);
  const listed = createNodeApi(kc, rate, observe, limiter);
  // One page lister for the watch's LISTs and the one-Node LIST that gives the cluster's version.
  const lister = nodePageLister(kc);
  const watch = createNodeWatchApi(kc, limiter, lister);
  const log = (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => runtime.logger[level](message, fields);
  // One list-and-watch of Nodes for the whole worker: plans, drift detection and wave checks read every
  // Node from its copy when it is fresh (the node cache); the join watchers follow it as subscribers.
  const cacheMax = config.nodeCacheMax ?? WORKER_DEFAULTS.nodeCacheMax;
  const informer = new NodeInformer(watch, { maxNodes: cacheMax, log });
  const cache =
    cacheMax > 0 ? cachedNodeApi(listed, informer, () => clusterVersion(lister, limiter), { onRead: nodeListMetrics(runtime.metricMeter), log }) : undefined;
  const nodes = cache ?? listed;
  const workloads = createWorkloadApi(kc, limiter, observe);
  // The worker's identity, as Temporal shows it: the Events' reportingInstance too.
  const identity = config.identity ?? `${process.pid}@${hostname()}`;
  const events = createNodeEvents(createEventApi(kc, limiter, identity), {
    count: kubeEventMetrics(runtime.metricMeter),
    warn: (message, fields) => runtime.logger.warn(message, fields),
  });
  const closeNodes = () => {
    cache?.close();
    informer.close();
  };
  let store: Store;
  try {
    store = await openStore(config.storeUrl);
  } catch (err) {
    closeNodes();
    throw err;
  }
  let connection: NativeConnection;
  try {
    connection = ports.connection ?? (await NativeConnection.connect({ ...connect, address: config.temporalAddress }));
  } catch (err) {
    closeNodes();
    await store.close();
    throw new Error(await temporalUnreachable(config.temporalAddress, config.namespace, err), { cause: err });
  }
  // One cache of validated designs for the activities and the heal runs they start.
  const designs = createDesignCache(store);
  const joinHealth = joinHealthBoard();
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowBundle: config.workflowBundle ?? (await buildBundle()),
    identity,
    activities: createActivities({
      nodes,
      store,
      designs,
      events,
      workloads,
      ...(ports.runStarter ? { startRun: ports.runStarter({ store, designs }) } : {}),
      ...(ports.siteRuns ? { siteRuns: ports.siteRuns({ store, designs }) } : {}),
      informer,
      joinTelemetry: joinMetrics(runtime.metricMeter),
      watchTelemetry: watchMetrics(runtime.metricMeter),
      joinHealth,
    }),
    maxCachedWorkflows: config.maxCachedWorkflows ?? WORKER_DEFAULTS.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: config.maxConcurrentWorkflowTasks ?? WORKER_DEFAULTS.maxConcurrentWorkflowTasks,
    maxConcurrentActivityTaskExecutions: config.maxConcurrentActivities ?? WORKER_DEFAULTS.maxConcurrentActivities,
    maxConcurrentLocalActivityExecutions: config.maxConcurrentLocalActivities ?? WORKER_DEFAULTS.maxConcurrentLocalActivities,
    nonStickyToStickyPollRatio: WORKER_DEFAULTS.nonStickyToStickyPollRatio,
    ...(config.taskPolls ? { maxConcurrentWorkflowTaskPolls: config.taskPolls.workflow, maxConcurrentActivityTaskPolls: config.taskPolls.activity } : {}),
  });
  // As Kubernetes' controllers wait for their caches: the worker takes tasks once its copy of the Nodes
  // is built, so a plan does not wait for it; an API server that sends no page for NODE_CACHE_STALLED_MS
  // does not hold the worker back (its reads LIST then, or wait for the build).
  if (cache) await cache.ready(NODE_CACHE_STALLED_MS);
  return {
    worker,
    connection,
    joinHealth,
    async close() {
      // Events still in flight get a few seconds; an API server that does not answer does not hold the shutdown.
      await Promise.race([events.idle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      closeNodes();
      if (!ports.connection) await connection.close();
      await store.close();
    },
  };
}
