/**
 * The worker's logs and metrics, through the Temporal SDK's Runtime: every
 * log line (the worker's own, the workflows' replay-safe `log`, the
 * activities' `log`, and the SDK's native logs) comes out as one pino JSON
 * line on stdout, and the SDK's Prometheus exporter serves its runtime
 * metrics with relabel's counters, which are made on the SDK's meters.
 */
import { pino, type Logger } from 'pino';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import type { MetricMeter } from '@temporalio/common';
import type { NodeRequestObserver } from '../kube/nodes.ts';
import type { NodeReadSource } from '../kube/node-cache.ts';
import type { NodeEventReason } from '../kube/events.ts';
import type { EventResult } from '../activities/node-events.ts';
import type { JoinTelemetry } from '../activities/joins/join-ports.ts';
import type { DriftTelemetry } from '../activities/drift-activities.ts';
import type { PluginTelemetry } from '../activities/plugin-activities.ts';
import { DriftState } from '../core/plan/drift.ts';

export { LOG_LEVELS, logLevel, type LogLevelName } from '../settings/parsers.ts';
import type { LogLevelName } from '../settings/parsers.ts';

/** Names of the Kubernetes request metrics, as Prometheus shows them. */
export const KubeMetric = {
  requestSeconds: 'relabel_kube_request_duration_seconds',
  throttled: 'relabel_kube_throttled_requests_total',
  conflicts: 'relabel_node_conflicts_total',
  events: 'relabel_kube_events_total',
  nodeLists: 'relabel_node_lists_total',
} as const;

/** Buckets of the request latency histogram, in seconds. */
export const KUBE_REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Counts each Kubernetes request on `meter`: its latency by verb and HTTP
 * status (`code` "0": no answer), the 429 answers by verb, and the 409
 * answers to patches (a concurrent writer; relabel re-reads and re-plans).
 */
export function kubeRequestMetrics(meter: MetricMeter): NodeRequestObserver {
  const seconds = meter.createHistogram(
    KubeMetric.requestSeconds,
    'float',
    undefined,
    'Kubernetes API requests relabel sent, by verb and HTTP status, in seconds',
  );
  const throttled = meter.createCounter(KubeMetric.throttled, undefined, 'Kubernetes API requests answered 429 Too Many Requests, by verb');
  const conflicts = meter.createCounter(KubeMetric.conflicts, undefined, 'Node patches answered 409 Conflict (another writer came first)');
  return (verb, code, s) => {
    seconds.record(s, { verb, code: String(code) });
    if (code === 429) throttled.add(1, { verb });
    if (code === 409 && verb === 'patch') conflicts.add(1);
  };
}

/** Counts each LIST of every Node on `meter`, by where it was served from: the worker's copy (`cache`) or the API server (`list`). */
export function nodeListMetrics(meter: MetricMeter): (source: NodeReadSource) => void {
  const lists = meter.createCounter(
    KubeMetric.nodeLists,
    undefined,
    "LISTs of every Node, by source: the worker's copy kept by a watch (cache) or the API server (list)",
  );
  return (source) => lists.add(1, { source });
}

/**
 * Counts each Kubernetes Event relabel meant to record on `meter`, by
 * reason (LabelsApplied, RelabelFailed) and result (created, failed,
 * suppressed: over the run's cap).
 */
export function kubeEventMetrics(meter: MetricMeter): (reason: NodeEventReason, result: EventResult) => void {
  const events = meter.createCounter(
    KubeMetric.events,
    undefined,
    'Kubernetes Events about nodes, by reason and result (created, failed, suppressed over the per-run cap)',
  );
  return (reason, result) => events.add(1, { reason, result });
}

/** Names of the join watcher's metrics, as Prometheus shows them. */
export const JoinMetric = {
  labelledSeconds: 'relabel_join_labelled_seconds',
  pending: 'relabel_join_pending_nodes',
  unmanaged: 'relabel_join_unmanaged_nodes_total',
  failed: 'relabel_join_failed_nodes_total',
  runs: 'relabel_join_runs_total',
  dispatched: 'relabel_join_dispatched_nodes_total',
} as const;

/** Buckets of the join latency histogram, in seconds. */
export const JOIN_SECONDS_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300];

/**
 * The join watcher's metrics on `meter`, by site: the seconds from a node
 * first seen joining to it seen labelled, the nodes waiting for a join run,
 * the joining nodes left alone as unmanaged, the join runs started, the
 * nodes handed to them and those the runs failed.
 */
export function joinMetrics(meter: MetricMeter): JoinTelemetry {
  const seconds = meter.createHistogram(
    JoinMetric.labelledSeconds,
    'float',
    's',
    'Seconds from a node first seen joining to it seen labelled by a join run, by site',
  );
  const pending = meter.createGauge(JoinMetric.pending, 'int', undefined, 'Joining nodes waiting for a join run, by site');
  const unmanaged = meter.createCounter(JoinMetric.unmanaged, undefined, 'Joining nodes the design does not manage, left alone, by site');
  const failed = meter.createCounter(JoinMetric.failed, undefined, 'Joining nodes their join run failed (a node in two node sets among them), by site');
  const runs = meter.createCounter(JoinMetric.runs, undefined, 'Join runs started, by site');
  const dispatched = meter.createCounter(JoinMetric.dispatched, undefined, 'Joining nodes handed to join runs, by site');
  return {
    labelled: (site, s) => seconds.record(s, { site }),
    pending: (site, n) => pending.set(n, { site }),
    unmanaged: (site) => unmanaged.add(1, { site }),
    failed: (site, nodes) => failed.add(nodes, { site }),
    run: (site, nodes) => {
      runs.add(1, { site });
      dispatched.add(nodes, { site });
    },
  };
}

/** Names of the drift and plugin poll metrics (alerts in the Helm chart read them). */
export const WatchMetric = {
  driftNodes: 'relabel_drift_nodes',
  pluginPolls: 'relabel_plugin_polls_total',
} as const;

/** Drift and plugin poll metrics on `meter`: what the last detection found per state, and each plugin's polls by outcome. */
export function watchMetrics(meter: MetricMeter): DriftTelemetry & PluginTelemetry {
  const nodes = meter.createGauge(WatchMetric.driftNodes, 'int', undefined, "Nodes in each drift state at the site's last detection, by site and state");
  const polls = meter.createCounter(WatchMetric.pluginPolls, undefined, 'Label plugin polls, by site, plugin and outcome (ok, failed)');
  return {
    detected: (site, counts) => {
      for (const state of Object.values(DriftState)) nodes.set(counts[state], { site, state });
    },
    polled: (site, outcomes) => {
      for (const o of outcomes) polls.add(1, { site, plugin: o.plugin, outcome: o.ok ? 'ok' : 'failed' });
    },
  };
}

/** The worker's own JSON logger at `level`. */
export function workerLogger(level: LogLevelName): Logger {
  return pino({ level, base: { component: 'relabel-worker' } });
}

/** An SDK log entry written to `log`: its attributes (workflow or activity, run, node, …) and message. */
function writeEntry(log: Logger, entry: LogEntry): void {
  const attributes = entry.meta ?? {};
  switch (entry.level) {
    case 'TRACE':
      return log.trace(attributes, entry.message);
    case 'DEBUG':
      return log.debug(attributes, entry.message);
    case 'INFO':
      return log.info(attributes, entry.message);
    case 'WARN':
      return log.warn(attributes, entry.message);
    default:
      return log.error(attributes, entry.message);
  }
}

/**
 * Installs the process's Temporal Runtime (once per process, before any
 * connection): SDK, workflow and activity logs at `level` and above into
 * `log`, and, with `metricsAddress` (`host:port`), the SDK's Prometheus
 * exporter there. Signals are left to the caller, which drains the worker.
 */
export function installWorkerRuntime(options: { log: Logger; level: LogLevelName; metricsAddress?: string }): Runtime {
  const { log, level, metricsAddress } = options;
  const sdkLevel = level.toUpperCase() as Uppercase<LogLevelName>;
  return Runtime.install({
    logger: new DefaultLogger(sdkLevel, (entry) => writeEntry(log, entry)),
    telemetryOptions: {
      // Native SDK logs go through the same logger; other native libraries only when they fail.
      logging: { filter: { core: sdkLevel, other: 'ERROR' }, forward: {} },
      ...(metricsAddress
        ? {
            metrics: {
              prometheus: {
                bindAddress: metricsAddress,
                histogramBucketOverrides: { [KubeMetric.requestSeconds]: KUBE_REQUEST_BUCKETS, [JoinMetric.labelledSeconds]: JOIN_SECONDS_BUCKETS },
              },
            },
          }
        : {}),
    },
    shutdownSignals: [],
  });
}
