/**
 * The worker's one HTTP port: `/metrics` (Prometheus text: the Temporal
 * SDK's runtime metrics and relabel's, relayed from the SDK's exporter on a
 * loopback port), `/health/live` and `/health/ready` for Kubernetes probes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { clip } from './core/site-error.ts';
import { temporalUnreachable } from './temporal-reach.ts';

/** Default port of the worker's metrics and health endpoints. */
export const DEFAULT_METRICS_PORT = 9464;

/** How long readiness waits for Temporal to answer. */
export const READY_TIMEOUT_MS = 3000;

/** Longest reason a readiness answer gives. */
const MAX_REASON = 300;

/** Whether the worker can take work, and why not. */
export interface Readiness {
  ready: boolean;
  message: string;
}

/** The running worker, once it exists. */
export interface ProbedWorker {
  worker: Worker;
  connection: NativeConnection;
  temporalAddress: string;
  namespace: string;
}

/**
 * Ready when the worker runs with both pollers polling its task queue and
 * Temporal answers a system-info call within {@link READY_TIMEOUT_MS};
 * `undefined` (not created yet) is not ready.
 */
export async function workerReadiness(probed: ProbedWorker | undefined): Promise<Readiness> {
  if (probed === undefined) return { ready: false, message: 'worker starting: connecting to Temporal and loading the workflow code' };
  const status = probed.worker.getStatus();
  if (status.runState !== 'RUNNING') return { ready: false, message: `worker ${status.runState.toLowerCase()}` };
  if (status.workflowPollerState !== 'POLLING' || status.activityPollerState !== 'POLLING') {
    return { ready: false, message: `worker not polling: workflow poller ${status.workflowPollerState}, activity poller ${status.activityPollerState}` };
  }
  const { connection, temporalAddress, namespace } = probed;
  try {
    await connection.withDeadline(Date.now() + READY_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({}));
  } catch (err) {
    return { ready: false, message: clip(await temporalUnreachable(temporalAddress, namespace, err), MAX_REASON) };
  }
  return { ready: true, message: `worker polling; Temporal reachable at ${temporalAddress} (namespace ${namespace})` };
}

function sendJson(res: ServerResponse, code: number, body: object): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8' }).end(`${JSON.stringify(body)}\n`);
}

/** Relays the SDK exporter's text; 503 when it does not answer. */
async function relayMetrics(res: ServerResponse, sdkMetricsUrl: string | undefined): Promise<void> {
  if (sdkMetricsUrl === undefined) return sendJson(res, 404, { error: 'metrics are off' });
  try {
    const answer = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(READY_TIMEOUT_MS) });
    const text = await answer.text();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain; version=0.0.4' }).end(text);
  } catch (err) {
    sendJson(res, 503, { error: `the Temporal SDK's metrics exporter did not answer: ${clip(String(err), MAX_REASON)}` });
  }
}

/** What the probes server answers from. */
export interface ProbeOptions {
  /** Port on every interface (0: any free port). */
  port: number;
  host?: string;
  /** The SDK exporter's `/metrics` URL on loopback; absent: `/metrics` is 404. */
  sdkMetricsUrl?: string;
  readiness(): Promise<Readiness>;
}

/** Starts the worker's HTTP endpoints; resolves with the URL it listens on. */
export async function startWorkerProbes(options: ProbeOptions): Promise<{ url: string; close(): Promise<void> }> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: `${req.method} is not allowed: GET only` });
    if (path === '/metrics') return relayMetrics(res, options.sdkMetricsUrl);
    if (path === '/health/live') return sendJson(res, 200, { live: true });
    if (path === '/health/ready') {
      const r = await options.readiness();
      return sendJson(res, r.ready ? 200 : 503, r);
    }
    sendJson(res, 404, { error: 'not found: /metrics, /health/live and /health/ready are served' });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendJson(res, 500, { error: clip(String(err), MAX_REASON) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host && options.host !== '0.0.0.0' ? options.host : '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
