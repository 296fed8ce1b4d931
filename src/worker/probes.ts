/**
 * The worker's one HTTP port: `/metrics` (Prometheus text: the Temporal
 * SDK's runtime metrics and relabel's, relayed from the SDK's exporter on a
 * loopback port), `/health/live` and `/health/ready` for Kubernetes probes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { clip } from '../core/plan/text.ts';
import { temporalUnreachable } from '../temporal/reach.ts';

/** Default port of the worker's metrics and health endpoints. */
export const DEFAULT_METRICS_PORT = 9464;

/** Default address of the worker's metrics and health endpoints: loopback only (a deployment sets 0.0.0.0). */
export const DEFAULT_METRICS_ADDRESS = '127.0.0.1';

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
  /** The worker registered no activities (the fleet's centre): its activity poller never starts, and readiness does not wait for it. */
  workflowsOnly?: boolean;
}

/**
 * Ready when the worker runs with both pollers (the workflow poller only, for
 * a worker of workflows only) polling its task queue and
 * Temporal answers a system-info call within {@link READY_TIMEOUT_MS};
 * `undefined` (not created yet) is not ready.
 */
export async function workerReadiness(probed: ProbedWorker | undefined): Promise<Readiness> {
  if (probed === undefined) return { ready: false, message: 'worker starting: connecting to Temporal and loading the workflow code' };
  const status = probed.worker.getStatus();
  if (status.runState !== 'RUNNING') return { ready: false, message: `worker ${status.runState.toLowerCase()}` };
  if (status.workflowPollerState !== 'POLLING' || (!probed.workflowsOnly && status.activityPollerState !== 'POLLING')) {
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
  /** Port (0: any free port). */
  port: number;
  /** IP address to listen on; {@link DEFAULT_METRICS_ADDRESS} when absent, `0.0.0.0` for every interface. */
  host?: string;
  /** The SDK exporter's `/metrics` URL on loopback; absent: `/metrics` is 404. */
  sdkMetricsUrl?: string;
  readiness(): Promise<Readiness>;
}

/** Why the probes server could not listen, with the listen error's `code` (`EADDRINUSE`, `EADDRNOTAVAIL`, `EACCES`, …). */
export class ProbeListenError extends Error {
  readonly code: string;
  readonly host: string;
  readonly port: number;
  constructor(code: string, host: string, port: number, message: string) {
    super(message);
    this.name = 'ProbeListenError';
    this.code = code;
    this.host = host;
    this.port = port;
  }
}

/** `host:port` as a URL writes it (an IPv6 address in brackets). */
function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the worker's HTTP endpoints on `host` (loopback by default) and
 * `port`; resolves with the URL it listens on (the port it got when `port`
 * is 0; loopback when listening on every interface). Rejects with a
 * {@link ProbeListenError} naming the address when it cannot listen.
 */
export async function startWorkerProbes(options: ProbeOptions): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const host = options.host ?? DEFAULT_METRICS_ADDRESS;
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
    server.once('error', (err: NodeJS.ErrnoException) => {
      const at = hostPort(host, options.port);
      const why: Record<string, string> = {
        EADDRINUSE: `${at} is already in use`,
        EADDRNOTAVAIL: `${host} is not an address of this host`,
        EACCES: `listening on ${at} is not allowed for this user`,
      };
      reject(new ProbeListenError(err.code ?? 'ERROR', host, options.port, why[err.code ?? ''] ?? `cannot listen on ${at}: ${clip(err.message, MAX_REASON)}`));
    });
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return {
    url: `http://${hostPort(shown, port)}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The probes server as the worker's flags ask for it. */
export interface ProbeFlags extends Omit<ProbeOptions, 'port' | 'host'> {
  /** `--metrics-address` (RELABEL_METRICS_ADDRESS). */
  address: string;
  /** `--metrics-port` (RELABEL_METRICS_PORT); undefined when neither was given. */
  port: number | undefined;
  /** Told when the default port is taken and another is used. */
  warn(message: string, fields: Record<string, unknown>): void;
}

/**
 * Starts the probes server where the worker's flags say. A port asked for
 * (0 included) that cannot be had, or an address that is not this host's,
 * is an error whose message names the flag and its variable, with no stack.
 * When no port was asked for and {@link DEFAULT_METRICS_PORT} is taken
 * (another worker on this host), any free port is used and `warn` says which.
 */
export async function listenForProbes(flags: ProbeFlags): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const { address, port: asked, warn, ...rest } = flags;
  try {
    return await startWorkerProbes({ ...rest, host: address, port: asked ?? DEFAULT_METRICS_PORT });
  } catch (err) {
    if (!(err instanceof ProbeListenError)) throw err;
    if (asked === undefined && err.code === 'EADDRINUSE') {
      const probes = await listenForProbes({ ...flags, port: 0 });
      warn(
        `port ${DEFAULT_METRICS_PORT} of ${address} is in use (another worker on this host?): serving on port ${probes.port} instead; --metrics-port chooses one`,
        { url: probes.url, port: probes.port },
      );
      return probes;
    }
    const portFlag = `--metrics-port ${err.port} (RELABEL_METRICS_PORT)`;
    const addressFlag = `--metrics-address ${address} (RELABEL_METRICS_ADDRESS)`;
    const flag = err.code === 'EADDRNOTAVAIL' ? addressFlag : err.code === 'EADDRINUSE' || err.code === 'EACCES' ? portFlag : `${addressFlag}, ${portFlag}`;
    const hint = err.code === 'EADDRINUSE' ? ' (another worker on this host?): give each worker a port of its own, or 0 for any free one' : '';
    throw new Error(`${flag}: ${err.message}${hint}`, { cause: err });
  }
}
