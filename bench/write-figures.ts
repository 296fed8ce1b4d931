/**
 * What a pass's Node writes cost, for relabel's passes and the engine floor
 * alike (see bench/e2e.ts): the write requests and body bytes the API server
 * received, the requests, bytes and JSON Patch operations the worker sent
 * (bench/write-meter.ts, preloaded in every worker the benchmark forks), and
 * the size of the nodes afterwards. Read before and after the timed run,
 * never during it.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { apiserverGet } from '../stack/kube-metrics.ts';
import { metricValue } from '../stack/prometheus.ts';
import { WORKER_NODE_FLAGS } from '../src/worker/config.ts';
import { WRITE_METER_MESSAGE, type WriteMeter } from './write-meter.ts';

const PRELOAD = fileURLToPath(new URL('./write-meter-preload.ts', import.meta.url));

/**
 * The Node flags of a worker the benchmark forks for `pass`: the bench's
 * own, relabel's worker flags, the write meter's preload, then
 * BENCH_WORKER_NODE_OPTIONS with `{pass}` replaced by the pass's name (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof/{pass}`: one profile directory per pass).
 */
export function workerExecArgv(pass: string, options = process.env.BENCH_WORKER_NODE_OPTIONS): string[] {
  const extra = (options ?? '').split(' ').filter(Boolean);
  return [...process.execArgv, ...WORKER_NODE_FLAGS, '--import', PRELOAD, ...extra.map((o) => o.replaceAll('{pass}', pass))];
}

/** Now, in microseconds of the monotonic clock: the clock of a `.cpuprofile`'s sample times. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * When the workers are profiled (`--cpu-prof` in BENCH_WORKER_NODE_OPTIONS),
 * a pass's timed run as `profileWindowUs` ([from, to] µs of the monotonic
 * clock), for `bench/profile-top.ts --window`; otherwise nothing.
 */
export function profileWindow(from: number, to: number, options = process.env.BENCH_WORKER_NODE_OPTIONS): { profileWindowUs?: [number, number] } {
  return options?.includes('--cpu-prof') ? { profileWindowUs: [from, to] } : {};
}

/** The worker's Node writes so far, as its write meter counted them; rejects after 10 s without an answer. */
export function readWriteMeter(worker: ChildProcess): Promise<WriteMeter> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error('the worker did not answer writeMeter')), 10_000);
    const onMessage = (m: unknown) => {
      const meter = (m as Record<string, WriteMeter> | null)?.[WRITE_METER_MESSAGE];
      if (meter) done(undefined, meter);
    };
    const done = (err?: Error, meter?: WriteMeter) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      if (err) reject(err);
      else resolve(meter as WriteMeter);
    };
    worker.on('message', onMessage);
    worker.send(WRITE_METER_MESSAGE);
  });
}

/** The API server's counters of Node writes so far. */
export interface ServerWrites {
  /** PATCH and PUT requests on Nodes (no subresource), whatever their answer. */
  patches: number;
  puts: number;
  /** PATCH and PUT requests on Nodes' status (the simulated kubelets' heartbeats). */
  statusWrites: number;
  /** Bodies of Node patches and updates (status ones too: the server does not tell them apart) and their bytes. */
  bodies: number;
  bodyBytes: number;
}

/** Reads {@link ServerWrites} from the API server's /metrics. */
export async function serverWrites(adminKubeconfig: string): Promise<ServerWrites> {
  const text = await apiserverGet(adminKubeconfig, '/metrics');
  const requests = (verb: string, subresource: string) => metricValue(text, 'apiserver_request_total', { resource: 'nodes', verb, subresource });
  const body = (suffix: string) =>
    ['patch', 'update'].reduce((n, verb) => n + metricValue(text, `apiserver_request_body_size_bytes_${suffix}`, { resource: 'nodes', verb }), 0);
  return {
    patches: requests('PATCH', ''),
    puts: requests('PUT', ''),
    statusWrites: requests('PATCH', 'status') + requests('PUT', 'status'),
    bodies: body('count'),
    bodyBytes: body('sum'),
  };
}

/** The average JSON bytes of a sample of nodes, whole and by part. */
export interface NodeSizes {
  sampled: number;
  bytes: number;
  labels: number;
  annotations: number;
  managedFields: number;
  status: number;
}

/**
 * The JSON size of the first `sample` nodes named with `prefix` as the API
 * server serves them (one LIST page; an item is its object without kind
 * and apiVersion), averaged: whole, and its labels, annotations,
 * managedFields and status.
 */
export async function nodeSizes(adminKubeconfig: string, prefix: string, sample = 50): Promise<NodeSizes> {
  type Item = { metadata?: { name?: string; labels?: unknown; annotations?: unknown; managedFields?: unknown }; status?: unknown };
  const list = JSON.parse(await apiserverGet(adminKubeconfig, `/api/v1/nodes?limit=${sample}`)) as { items?: Item[] };
  const items = (list.items ?? []).filter((n) => n.metadata?.name?.startsWith(prefix));
  const avg = (part: (n: Item) => unknown) =>
    items.length === 0 ? 0 : Math.round(items.reduce((sum, n) => sum + Buffer.byteLength(JSON.stringify(part(n) ?? null)), 0) / items.length);
  return {
    sampled: items.length,
    bytes: avg((n) => n),
    labels: avg((n) => n.metadata?.labels),
    annotations: avg((n) => n.metadata?.annotations),
    managedFields: avg((n) => n.metadata?.managedFields),
    status: avg((n) => n.status),
  };
}

/** Where the API server is, and the bench nodes' prefix. */
type WriteContext = { adminKubeconfig: string; prefix: string };

/** What {@link writeFigures} compares with: the server's counts and the nodes' sizes before a pass. */
export type WritesBefore = { server: ServerWrites; nodes: NodeSizes };

/** Reads {@link WritesBefore}, before a pass's timed run. */
export async function nodeWritesBefore(ctx: WriteContext): Promise<WritesBefore> {
  const [server, nodes] = await Promise.all([serverWrites(ctx.adminKubeconfig), nodeSizes(ctx.adminKubeconfig, ctx.prefix)]);
  return { server, nodes };
}

/**
 * A pass's write figures: the server's counts since `before`, the worker's
 * meter, and the nodes' sizes now with their growth in bytes since `before`
 * (`grownBytes`). Per write: the worker's bytes, operations and `test`s per
 * Node write it sent.
 */
export async function writeFigures(
  ctx: WriteContext,
  { server: before, nodes }: WritesBefore,
  worker: ChildProcess,
): Promise<{ nodeWrites: Record<string, unknown>; nodeSize: NodeSizes & { grownBytes: number } }> {
  const [after, meter, sizes] = await Promise.all([serverWrites(ctx.adminKubeconfig), readWriteMeter(worker), nodeSizes(ctx.adminKubeconfig, ctx.prefix)]);
  const nodeSize = { ...sizes, grownBytes: sizes.bytes - nodes.bytes };
  const per = (n: number) => (meter.requests > 0 ? +(n / meter.requests).toFixed(1) : null);
  const bodies = after.bodies - before.bodies;
  const bodyBytes = after.bodyBytes - before.bodyBytes;
  return {
    nodeWrites: {
      server: {
        patches: after.patches - before.patches,
        puts: after.puts - before.puts,
        statusWrites: after.statusWrites - before.statusWrites,
        bodies,
        bodyBytes,
        bytesPerBody: bodies > 0 ? Math.round(bodyBytes / bodies) : null,
      },
      worker: {
        requests: meter.requests,
        bodyBytes: meter.bodyBytes,
        bytesPerWrite: per(meter.bodyBytes),
        opsPerWrite: per(meter.ops),
        testOpsPerWrite: per(meter.testOps),
        opsPerWriteByKind: Object.fromEntries(Object.entries(meter.byKind).map(([kind, n]) => [kind, per(n)])),
      },
    },
    nodeSize,
  };
}
