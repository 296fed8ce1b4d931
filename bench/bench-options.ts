/**
 * The benchmark's command line (`npm run bench:e2e -- …`; see bench/e2e.ts), parsed once.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_KUBE_QPS } from '../src/kube/nodes.ts';
import { StackTemporal } from '../stack/stack.ts';

export const { values: opts } = parseArgs({
  options: {
    nodes: { type: 'string', default: '500,5000' },
    concurrency: { type: 'string', default: '50' },
    passes: { type: 'string', default: 'floor,engine-floor,all,noop,plan,one-percent,drift,nfd' },
    retry: { type: 'string', default: '1000' },
    'kube-qps': { type: 'string', default: '0' },
    'continue-as-new-after': { type: 'string' },
    'search-attributes': { type: 'string', default: 'on' },
    heartbeat: { type: 'string', default: '20' },
    'idle-seconds': { type: 'string', default: '0' },
    'fresh-nodes': { type: 'boolean', default: false },
    'fresh-temporal': { type: 'boolean', default: false },
    'apiserver-profile': { type: 'string' },
    'join-kube-qps': { type: 'string', default: String(DEFAULT_KUBE_QPS) },
    'join-delay-ms': { type: 'string', default: '25' },
    temporal: { type: 'string', default: StackTemporal.dev },
  },
});
export const sizes = opts.nodes.split(',').map(Number);
export const concurrency = Number(opts.concurrency);
/** Every pass `--passes` may name (bench/e2e.ts says what each measures). */
export const KNOWN_PASSES = [
  'floor',
  'engine-floor',
  'all',
  'noop',
  'noop-warm',
  'plan',
  'one-percent',
  'drift',
  'nfd',
  'seed',
  'retry',
  'join',
  'engine-floor-again',
  'members',
  'members-noop',
  'seed-members',
] as const;
export const passes = opts.passes.split(',');
const unknownPasses = passes.filter((p) => !(KNOWN_PASSES as readonly string[]).includes(p));
if (unknownPasses.length > 0) {
  console.error(`bench: --passes: unknown ${unknownPasses.map((p) => `"${p}"`).join(', ')}; one of ${KNOWN_PASSES.join(', ')}`);
  process.exit(2);
}
export const retryCount = Number(opts.retry);
/** Seconds between the KWOK nodes' status heartbeats; 0: plain nodes on a bare API server, which nobody else writes. */
export const heartbeat = Number(opts.heartbeat);
/**
 * `--fresh-nodes`: before each engine floor and relabel's `all`, the nodes
 * are deleted and registered anew, so that every such pass meets the same
 * nodes (as registered, none of the earlier passes' labels, annotations and
 * managedFields) on a cluster whose heartbeats cost the same.
 */
export const freshNodes = opts['fresh-nodes'];
/**
 * `--fresh-temporal`: before each engine floor and relabel's `all`, the
 * stack's dev server is restarted on an empty database, so that no timed
 * pass meets a Temporal holding the earlier passes' workflows (on the same
 * nodes, a later engine floor took 7–18 % longer than the first with them).
 */
export const freshTemporal = opts['fresh-temporal'];
export const continueAsNewAfter = opts['continue-as-new-after'] === undefined ? undefined : Number(opts['continue-as-new-after']);

/**
 * The Temporals the engine floor and relabel's passes run on, in order, one
 * at a time on the same simulated cluster: `dev` (the stack's dev server)
 * and `postgres` (temporal-server on PostgreSQL, started beside it).
 */
export const temporals: StackTemporal[] = opts.temporal.split(',').map((kind) => {
  if (!Object.values<string>(StackTemporal).includes(kind)) {
    throw new Error(`--temporal ${opts.temporal}: expected a list of ${Object.values(StackTemporal).join(', ')}`);
  }
  return kind as StackTemporal;
});
if (new Set(temporals).size !== temporals.length) throw new Error(`--temporal ${opts.temporal}: each Temporal once`);
if (freshTemporal && temporals.some((t) => t !== StackTemporal.dev))
  throw new Error(`--fresh-temporal: restarts the stack's dev server only; not with --temporal ${opts.temporal}`);
