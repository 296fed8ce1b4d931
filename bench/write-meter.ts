/**
 * Counts the Node writes a process sends and what they carry, for the
 * benchmark's account of relabel's writes against the engine floor's: it
 * watches undici's diagnostics channels (the Kubernetes client sends through
 * undici), so product code is left as it is; what it costs is one body parse
 * per Node write. The benchmark preloads it in every worker it forks
 * (bench/write-meter-preload.ts) and asks for the counts over IPC.
 */
import { subscribe } from 'node:diagnostics_channel';

/** The Node writes a process sent so far: requests, their body bytes, their JSON Patch operations and of those the `test`s. */
export interface WriteMeter {
  requests: number;
  bodyBytes: number;
  ops: number;
  testOps: number;
  /** The operations by kind and what they touch: `test labels`, `add annotations`, `remove taints`, `test uid`, … */
  byKind: Record<string, number>;
}

/** The message the benchmark sends, and the key of the answer. */
export const WRITE_METER_MESSAGE = 'writeMeter';

/** A PATCH or PUT of a Node itself (not its status): what relabel and the engine floor write. */
const NODE_WRITE = /^\/api\/v1\/nodes\/[^/?]+(\?|$)/;

type UndiciRequest = { method?: string; path?: string };

/** What a JSON Patch operation's path touches: `labels`, `annotations`, `taints`, `uid`, or its first segments. */
function target(path: unknown): string {
  const [, first, second] = String(path).split('/');
  return first === 'metadata' || first === 'spec' ? (second ?? first) : (first ?? '?');
}

/**
 * The counts of `body`, a Node write's JSON: operations, `test`s, and
 * operations by kind and target (`test labels`: 12) when it is a JSON Patch;
 * none for a merge patch.
 */
export function patchOps(body: string): Pick<WriteMeter, 'ops' | 'testOps' | 'byKind'> {
  const parsed: unknown = JSON.parse(body);
  if (!Array.isArray(parsed)) return { ops: 0, testOps: 0, byKind: {} };
  const byKind: Record<string, number> = {};
  for (const op of parsed as { op?: unknown; path?: unknown }[]) {
    const kind = `${String(op?.op)} ${target(op?.path)}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  return { ops: parsed.length, testOps: parsed.filter((op: { op?: unknown }) => op?.op === 'test').length, byKind };
}

/** Starts counting this process's Node writes in `meter`. */
export function meterNodeWrites(meter: WriteMeter): void {
  const bodies = new WeakMap<object, Uint8Array[]>();
  const isNodeWrite = (r: UndiciRequest) => (r.method === 'PATCH' || r.method === 'PUT') && NODE_WRITE.test(r.path ?? '');
  subscribe('undici:request:bodyChunkSent', (message) => {
    const { request, chunk } = message as { request: UndiciRequest; chunk: Uint8Array | string };
    if (!isNodeWrite(request)) return;
    const chunks = bodies.get(request) ?? [];
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    bodies.set(request, chunks);
  });
  subscribe('undici:request:bodySent', (message) => {
    const { request } = message as { request: UndiciRequest };
    if (!isNodeWrite(request)) return;
    const body = Buffer.concat(bodies.get(request) ?? []);
    bodies.delete(request);
    const { ops, testOps, byKind } = patchOps(body.toString('utf8'));
    meter.requests++;
    meter.bodyBytes += body.byteLength;
    meter.ops += ops;
    meter.testOps += testOps;
    for (const [kind, n] of Object.entries(byKind)) meter.byKind[kind] = (meter.byKind[kind] ?? 0) + n;
  });
}
