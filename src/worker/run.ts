/**
 * A worker process's life: logging and the Temporal runtime, the probes
 * port, the worker itself, and a graceful stop on SIGTERM or SIGINT
 * (in-flight tasks finish, nothing is lost: Temporal keeps the rest).
 */
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerSettings } from './config.ts';
import { freeLoopbackPort } from './free-port.ts';
import { listenForProbes, workerReadiness, type ProbedWorker } from './probes.ts';
import { installWorkerRuntime, workerLogger } from './telemetry.ts';
import type { JoinHealthBoard } from './join-health.ts';
import { createCentreWorker } from './centre.ts';
import { createWorker, type WorkerPorts } from './wiring.ts';

/**
 * Runs the worker with `settings` and the entry point's `ports` until a
 * signal stops it, then closes everything it opened. The centre
 * (`role: 'centre'`) runs the fleet's workflows only; its readiness is
 * Temporal's and its poller's alone, as it has no node cache or join watcher.
 */
export async function runWorker(settings: WorkerSettings, ports: WorkerPorts = {}): Promise<void> {
  const opts = settings;
  const log = workerLogger(opts.logLevel);
  // The SDK's exporter listens on loopback only; the probes port relays it with the health endpoints.
  const sdkMetrics = `127.0.0.1:${await freeLoopbackPort()}`;
  installWorkerRuntime({ log, level: opts.logLevel, metricsAddress: sdkMetrics });
  const running: { worker?: ProbedWorker; joins?: JoinHealthBoard } = {};
  const probes = await listenForProbes({
    address: opts.metricsAddress,
    port: opts.metricsPort,
    sdkMetricsUrl: `http://${sdkMetrics}/metrics`,
    readiness: async () => {
      const ready = await workerReadiness(running.worker);
      const joins = running.joins?.problem();
      return ready.ready && joins !== undefined ? { ready: false, message: joins } : ready;
    },
    warn: (message, fields) => log.warn(fields, message),
  });
  log.info({ url: probes.url, address: opts.metricsAddress, port: probes.port }, 'serving /metrics, /health/live and /health/ready');
  const { config } = settings;
  const centre = config.role === 'centre';
  const created: { worker: Worker; connection: NativeConnection; joinHealth?: JoinHealthBoard; close(): Promise<void> } = centre
    ? await createCentreWorker(config)
    : await createWorker(config, ports);
  const { worker, connection, close } = created;
  running.joins = created.joinHealth;
  running.worker = { worker, connection, temporalAddress: config.temporalAddress, namespace: config.namespace, workflowsOnly: centre };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log.info({ signal }, 'shutting down: finishing in-flight tasks');
      worker.shutdown();
    });
  }
  log.info(
    centre
      ? { role: 'centre', address: config.temporalAddress, namespace: config.namespace, taskQueue: config.fleetTaskQueue }
      : { address: config.temporalAddress, namespace: config.namespace, taskQueue: config.taskQueue, kubeQps: config.kubeQps, kubeBurst: config.kubeBurst },
    'worker started',
  );
  process.send?.({ ready: true, probes: probes.url });
  await worker.run();
  await close();
  await probes.close();
  log.info('worker stopped');
}
