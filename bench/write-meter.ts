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
}

/** The message the benchmark sends, and the key of the answer. */
export const WRITE_METER_MESSAGE = 'writeMeter';

/** A PATCH or PUT of a Node itself (not its status): what relabel and the engine floor write. */
const NODE_WRITE = /^\/api\/v1\/nodes\/[^/?]+(\?|$)/;

type UndiciRequest = { method?: string; path?: string };

/** The counts of `body`, a Node write's JSON: operations and `test`s when it is a JSON Patch, none for a merge patch. */
export function patchOps(body: string): { ops: number; testOps: number } {
  const parsed: unknown = JSON.parse(body);
  if (!Array.isArray(parsed)) return { ops: 0, testOps: 0 };
  return { ops: parsed.length, testOps: parsed.filter((op: { op?: unknown }) => op?.op === 'test').length };
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
    const { ops, testOps } = patchOps(body.toString('utf8'));
    meter.requests++;
    meter.bodyBytes += body.byteLength;
    meter.ops += ops;
    meter.testOps += testOps;
  });
}
