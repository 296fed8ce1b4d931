/**
 * `npm run bench:e2e -- [--nodes 500,5000] [--concurrency 50] [--passes …] [--continue-as-new-after N] [--heartbeat 20] [--join-kube-qps 50] [--join-delay-ms 25]`:
 * update_labels end to end (`--search-attributes off`: runs and children
 * without relabel's search attributes, to measure what they cost), on a local stack of its own per size (real
 * Temporal, real kube-apiserver, and by default the simulated cluster: KWOK
 * plays every node's kubelet, posting its status every `--heartbeat`
 * seconds, with the real controller manager and scheduler; `--heartbeat 0`
 * runs on plain nodes nobody else writes), against the floor measured in the
 * same run.
 *
 * Per size: register the nodes (Ready, with KWOK); `floor` (a plain client
 * with kept-alive connections: one paginated LIST, then one
 * resourceVersion-guarded merge patch of 16 labels and an annotation per
 * node, `concurrency` at once, a patch refused by a heartbeat sent again
 * after a GET; measured twice, the faster counts); `engine-floor` (bench/engine-floor: a minimal Temporal workflow
 * on the same stack and worker settings, one child per node writing it with
 * one guarded patch in a local activity: relabel's ratio to it is its own
 * overhead); then relabel, each pass with
 * a fresh worker process (its peak RSS is read from /proc):
 * - `all`: every node changed; `noop`: nothing changed; `one-percent`: a new
 *   revision changing every 100th node;
 * - `plan`: the fleet-wide plan of the 1 % revision (before it is applied);
 * - `drift`: one owned label edited by hand on 1 % of the nodes, then one
 *   drift detection, which must name exactly those;
 * - `seed`: instead of `all`, the nodes are created already as desired (for
 *   the 50,000-node one-off); `retry`: K nodes missing → partial_success
 *   with exactly K NodeNotFound; created again, `relabel retry` fixes them.
 * - `join` (bench/joins/pass.ts; not by default): the join watcher labelling
 *   tainted nodes the design names, each timed from its creation (p50/p95/
 *   p99/max): 50 one at a time, 1,000 at once (nfd-master beside it), 200
 *   during an operator's run; its worker at `--join-kube-qps`.
 * - `nfd` (bench/nfd): Node Feature Discovery's nfd-master labels every node
 *   from one NodeFeature each, at its defaults and matched to relabel's
 *   client rate as far as NFD allows; relabel's all-changed time over each.
 * Prints each time, its ratio to the floor (and to the engine floor), nodes
 * per second, writes counted by the API server, relabel's writes it refused
 * as stale (`refused`: each re-read and re-planned; `othersRefused`: other
 * clients'), history events per changed
 * node, the largest payload, the worker's peak RSS, and where the time went:
 * CPU of each process (per changed node too), the Temporal server's database
 * operations per changed node and the share of workflow tasks it matched to
 * a waiting poll. Exits
 * non-zero when a run does not end as expected (status, writes, children,
 * node labels).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { isKubeletLabelKey } from '../src/core/plan/label-keys.ts';
import type { Design } from '../src/core/site/validate-site.ts';
import { DEFAULT_KUBE_QPS, loadKubeConfig } from '../src/kube/nodes.ts';
import { createRuns, type Runs } from '../src/facade/runs.ts';
import { createPlans } from '../src/facade/plan.ts';
import { createDrift } from '../src/facade/drift.ts';
import { nodeRequestCount } from '../stack/kube-metrics.ts';
import { temporalCounts, temporalFigures } from '../stack/temporal-metrics.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { createDesignCache, type DesignMemory } from '../src/store/design-cache.ts';
import { runRefusals } from './run-refusals.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { WORKER_NODE_FLAGS } from '../src/worker/config.ts';
import { benchSite, commitSite, withChangedNodes } from './bench-site.ts';
import { benchCore, floor, pool, registerNodes, wrongNodes } from './bench-nodes.ts';
import { historyFigures } from './history.ts';
import { engineFloorPass } from './engine-floor/pass.ts';
import { nfdPasses } from './nfd/pass.ts';
import { joinPasses } from './joins/pass.ts';
import { cpuOf, peakRssMiB } from './proc-figures.ts';

const { values: opts } = parseArgs({
  options: {
    nodes: { type: 'string', default: '500,5000' },
    concurrency: { type: 'string', default: '50' },
    passes: { type: 'string', default: 'floor,engine-floor,all,noop,plan,one-percent,drift,nfd' },
    retry: { type: 'string', default: '1000' },
    'kube-qps': { type: 'string', default: '0' },
    'continue-as-new-after': { type: 'string' },
    'search-attributes': { type: 'string', default: 'on' },
    heartbeat: { type: 'string', default: '20' },
    'join-kube-qps': { type: 'string', default: String(DEFAULT_KUBE_QPS) },
    'join-delay-ms': { type: 'string', default: '25' },
  },
});
const sizes = opts.nodes.split(',').map(Number);
const concurrency = Number(opts.concurrency);
const passes = opts.passes.split(',');
const retryCount = Number(opts.retry);
/** Seconds between the KWOK nodes' status heartbeats; 0: plain nodes on a bare API server, which nobody else writes. */
const heartbeat = Number(opts.heartbeat);
const continueAsNewAfter = opts['continue-as-new-after'] === undefined ? undefined : Number(opts['continue-as-new-after']);

/** Every figure printed, for the summary. */
const rows: Record<string, unknown>[] = [];
let failed = false;

function report(row: Record<string, unknown>, ok: boolean, why = ''): void {
  rows.push({ ...row, ok });
  console.log(JSON.stringify({ ...row, ok, ...(why ? { why } : {}) }));
  if (!ok) failed = true;
}

/** Node writes the API server has refused as stale so far (422: a JSON Patch test failed; 409: a resourceVersion moved). */
async function refusedWrites(stack: StackInfo): Promise<number> {
  const [tests, versions] = await Promise.all([nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 422 }), nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 409 })]);
  return tests + versions;
}

/** A worker process on `taskQueue` (its client at `kubeQps`, 0: no limit); resolves once it polls. */
function startWorker(stack: StackInfo, storeUrl: string, taskQueue: string, kubeQps = opts['kube-qps']): Promise<ChildProcess> {
  const child = fork(new URL('../src/worker.ts', import.meta.url).pathname, ['--kube-qps', kubeQps], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, KUBECONFIG: stack.kubeconfig, RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: taskQueue, RELABEL_LOG_LEVEL: 'warn', RELABEL_METRICS_PORT: '0' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // e.g. BENCH_WORKER_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the worker.
    execArgv: [...process.execArgv, ...WORKER_NODE_FLAGS, ...(process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [])],
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/** A timed step with its own fresh worker (plan, drift): time, the worker's peak RSS, and `check`'s verdict on the answer. */
async function withWorker<T>(ctx: { stack: StackInfo; storeUrl: string; taskQueue: string; size: number }, name: string, step: () => Promise<T>, check: (answer: T) => { ok: boolean; why?: string; figures?: Record<string, unknown> }): Promise<void> {
  const worker = await startWorker(ctx.stack, ctx.storeUrl, ctx.taskQueue);
  try {
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const t0 = performance.now();
    const answer = await step();
    const ms = performance.now() - t0;
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const verdict = check(answer);
    // Nothing may be written; on the simulated cluster its controllers' writes are counted too, so there only the answer is checked.
    const wrote = heartbeat === 0 && writes !== 0;
    report({ nodes: ctx.size, pass: name, seconds: +(ms / 1000).toFixed(2), writesCounted: writes, workerPeakRssMiB: peakRssMiB(worker.pid as number), ...verdict.figures }, verdict.ok && !wrote, [verdict.why, wrote && `${writes} writes, expected none`].filter(Boolean).join('; '));
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}

type Expect = { status: string; written: number; failure?: number; children?: number };

/** One relabel pass: a fresh worker, one run (or retry), figures, checks. */
async function pass(ctx: { stack: StackInfo; storeUrl: string; store: Store; runs: Runs; client: Client; taskQueue: string; floorMs: number; engineFloorMs: number; size: number }, name: string, start: () => Promise<{ workflowId: string; runId: string }>, expect: Expect): Promise<{ workflowId: string; runId: string }> {
  const worker = await startWorker(ctx.stack, ctx.storeUrl, ctx.taskQueue);
  try {
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const refusedBefore = await refusedWrites(ctx.stack);
    const temporalMetrics = `http://127.0.0.1:${ctx.stack.ports.temporalMetrics}/metrics`;
    const temporal0 = await temporalCounts(temporalMetrics, ctx.taskQueue);
    const cpu0 = cpuOf(ctx.stack, worker);
    const t0 = performance.now();
    const ref = await start();
    const done = await ctx.runs.wait(ref, undefined, 100);
    const ms = performance.now() - t0;
    const cpu1 = cpuOf(ctx.stack, worker);
    const cpuSecondsUsed = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, +(v - (cpu0[k] ?? 0)).toFixed(1)]));
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const rss = peakRssMiB(worker.pid as number);
    // relabel's writes refused as stale (a guard's test failed), each re-read and re-planned; and the other clients' (on the simulated cluster, the node controller's taint patches).
    const refusedAll = (await refusedWrites(ctx.stack)) - refusedBefore;
    const refused = done.result ? await runRefusals(ctx.store.runs, done.result.run) : Number.NaN;
    const history = await historyFigures(ctx.client, ref.workflowId, ref.runId);
    // The server publishes its counters about once a second.
    await new Promise((r) => setTimeout(r, 2000));
    const temporal = temporalFigures(temporal0, await temporalCounts(temporalMetrics, ctx.taskQueue), history.children);
    const r = done.result;
    const row = {
      nodes: ctx.size, pass: name, status: r?.status ?? done.execution, seconds: +(ms / 1000).toFixed(2), ratioToFloor: +(ms / ctx.floorMs).toFixed(2), ratioToEngineFloor: +(ms / ctx.engineFloorMs).toFixed(2),
      nodesPerSecond: Math.round(ctx.size / (ms / 1000)), written: r?.counts.written, writesCounted: writes, refused, othersRefused: refusedAll - refused, failed: r?.counts.failure,
      children: history.children, executions: history.executions, parentEvents: history.events, beforePlanSeconds: history.beforePlan, planSeconds: history.plan,
      eventsPerChangedNode: history.children > 0 ? +(history.allEvents / history.children).toFixed(1) : null,
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1), workerPeakRssMiB: rss, cpuSeconds: cpuSecondsUsed,
      cpuMsPerChangedNode: history.children > 0 ? Object.fromEntries(Object.entries(cpuSecondsUsed).map(([k, v]) => [k, +((v * 1000) / history.children).toFixed(1)])) : null,
      temporal,
    };
    const problems = [
      r?.status !== expect.status && `status ${r?.status ?? done.execution}, expected ${expect.status}`,
      // On the simulated cluster its controllers write nodes too (node lifecycle, TTL): the server counts at least the run's writes.
      (heartbeat > 0 ? writes < expect.written : writes !== expect.written) && `${writes} writes, expected ${expect.written}`,
      r?.counts.written !== expect.written && `result says ${r?.counts.written} written`,
      expect.failure !== undefined && r?.counts.failure !== expect.failure && `${r?.counts.failure} failed, expected ${expect.failure}`,
      history.children !== (expect.children ?? expect.written) && `${history.children} children, expected ${expect.children ?? expect.written}`,
      history.largestPayload > 512 * 1024 && `a payload of ${history.largestPayload} bytes`,
    ].filter(Boolean);
    report(row, problems.length === 0, problems.join('; '));
    return ref;
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}

/** What every pass of one size shares. */
type SizeContext = {
  stack: StackInfo; storeUrl: string; store: Store; designs: DesignMemory; runs: Runs; client: Client; taskQueue: string; floorMs: number; engineFloorMs: number; size: number;
  core: CoreV1Api; site: ReturnType<typeof benchSite>; prefix: string; design: Design; seed: boolean;
};

/** relabel's passes over one size's nodes, in order. */
async function relabelPasses(ctx: SizeContext): Promise<void> {
  const { runs, core, site, size, store, prefix } = ctx;
  let design = ctx.design;
  const all = () => runs.start({ targets: site.nodes, concurrency, ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}) });
  const checkNodes = async (label: string, skip?: ReadonlySet<string>) => {
    const wrong = await wrongNodes(core, prefix, design, skip);
    report({ nodes: size, pass: label, wrongNodes: wrong.length, sample: wrong.slice(0, 5) }, wrong.length === 0);
  };
  if (passes.includes('all')) {
    await pass(ctx, 'all-changed', all, { status: 'success', written: size });
    await checkNodes('all-changed: nodes as desired');
  }
  if (passes.includes('noop')) await pass(ctx, 'no-op', all, { status: 'success', written: 0 });
  const changed = site.nodes.filter((_, i) => i % 100 === 0);
  if (passes.includes('one-percent') || passes.includes('plan')) {
    const files = withChangedNodes(site.files, new Set(changed), 'r1');
    design = await commitSite(store, ctx.designs, files, 'bench: 1 % changed');
  }
  if (passes.includes('plan')) {
    // The fleet-wide plan of that revision over every node: per key counts and sources, nothing written.
    const plans = createPlans(runs);
    await withWorker(ctx, 'plan', () => plans.plan({ targets: site.nodes }), (p) => {
      const round = p.labels['bench-round'];
      const ok = p.targets === size && round?.gain === changed.length && round.sources.length > 0;
      return { ok, ...(ok ? {} : { why: `plan says ${p.targets} targets, bench-round gained on ${round?.gain ?? 0}` }), figures: { labelKeys: Object.keys(p.labels).length } };
    });
  }
  if (passes.includes('one-percent')) {
    await pass(ctx, 'one-percent', all, { status: 'success', written: changed.length });
    await checkNodes('one-percent: nodes as desired');
  }
  if (passes.includes('retry')) {
    const missing = site.nodes.filter((_, i) => i % Math.max(1, Math.floor(size / retryCount)) === 1).slice(0, retryCount);
    await pool(missing, 32, (name) => core.deleteNode({ name }));
    const first = await pass(ctx, 'retry-missing', all, { status: 'partial_success', written: 0, failure: missing.length });
    const page = await runs.nodes((await runs.status(first.workflowId, first.runId)).result?.run ?? 0, { status: 'failure', limit: 5000 });
    report({ nodes: size, pass: 'retry-missing: failures paged', failuresListed: page.total }, page.total === missing.length && page.items.every((n) => n.error?.type === 'NodeNotFound'));
    await registerNodes(loadKubeConfig(ctx.stack.adminKubeconfig), missing, { kwok: heartbeat > 0 });
    await pass(ctx, 'retry', () => runs.retry(first.workflowId, first.runId, { concurrency }), { status: 'success', written: missing.length });
    await checkNodes('retry: nodes as desired');
  }
  if (passes.includes('drift')) await driftPass(ctx, design);
}

/** Someone changes one owned label on 1 % of the nodes; detection must name exactly those. */
async function driftPass(ctx: SizeContext, design: Design): Promise<void> {
  const edited = ctx.site.nodes.filter((_, i) => i % 100 === 1);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await pool(edited, 32, async (name) => {
    const key = Object.keys(design.nodes[name]?.labels ?? {}).find((k) => !isKubeletLabelKey(k) && k !== 'bench-round') ?? '';
    await ctx.core.patchNode({ name, body: { metadata: { labels: { [key]: 'edited-by-hand' } } } }, merge);
  });
  const drift = createDrift({ client: ctx.client, store: ctx.store, designs: ctx.designs, taskQueue: ctx.taskQueue, namespace: 'default' });
  await withWorker(ctx, 'drift', () => drift.detect(), (r) => {
    // Seeded nodes were never written by a run, so they carry no applied-run record: unmanaged, rightly.
    const ok = r.counts.drifted === edited.length && r.counts.missing === 0 && (ctx.seed || r.counts.unmanaged === 0);
    return { ok, ...(ok ? {} : { why: `drift counts ${JSON.stringify(r.counts)}, expected ${edited.length} drifted` }), figures: { counts: r.counts } };
  });
}

async function benchSize(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-'));
  // With heartbeats, KWOK plays the nodes' kubelets (status every `heartbeat` s; no Leases, which touch no Node).
  const kwok = heartbeat > 0 ? { nodes: 0, heartbeatSeconds: heartbeat, leaseSeconds: 0 } : undefined;
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts(), ...(kwok ? { kwok } : {}) });
  let store: Store | undefined;
  let connection: Connection | undefined;
  try {
    const prefix = 'bench-';
    const site = benchSite(prefix, size);
    const storeUrl = `sqlite:${join(dir, 'revisions.db')}`;
    store = await openStore(storeUrl);
    const designs = createDesignCache(store);
    const design = await commitSite(store, designs, site.files, 'bench');
    await store.revisions.tag((await store.revisions.latest())?.id ?? 0, 'site-action-success');
    const { kc, core } = benchCore(stack.adminKubeconfig);
    const seed = passes.includes('seed');
    const t0 = performance.now();
    await registerNodes(kc, site.nodes, { kwok: kwok !== undefined, ...(seed ? { design } : {}) });
    console.log(`# ${size} nodes registered${kwok ? ` and Ready, heartbeating every ${heartbeat} s,` : ''} in ${Math.round(performance.now() - t0)} ms${seed ? ' (already as desired)' : ''}`);

    let floorMs = Number.NaN;
    if (passes.includes('floor')) {
      // Twice, and the faster counts: the floor is the best a plain client does here.
      const tries = [await floor(core, prefix, concurrency), await floor(core, prefix, concurrency)];
      floorMs = Math.min(...tries.map((f) => f.ms));
      const row = { nodes: size, pass: 'floor', seconds: +(floorMs / 1000).toFixed(2), ratioToFloor: 1, nodesPerSecond: Math.round(size / (floorMs / 1000)), tries: tries.map((f) => +(f.ms / 1000).toFixed(2)), refused: tries.map((f) => f.conflicts) };
      report(row, tries.every((f) => f.nodes === size));
    }

    connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    const taskQueue = 'relabel-bench';
    const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default', searchAttributes: opts['search-attributes'] !== 'off' });
    let engineFloorMs = Number.NaN;
    if (passes.includes('engine-floor')) {
      const ef = await engineFloorPass({ stack, client, core, size, prefix, concurrency, kubeQps: Number(opts['kube-qps']), floorMs, othersWrite: heartbeat > 0, ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}) });
      engineFloorMs = ef.ms;
      report(ef.row, ef.problems.length === 0, ef.problems.join('; '));
    }
    await relabelPasses({ stack, storeUrl, store, designs, runs, client, taskQueue, floorMs, engineFloorMs, size, core, site, prefix, design, seed });
    if (passes.includes('join')) {
      const [joinQps, batchDelayMs] = [opts['join-kube-qps'], Number(opts['join-delay-ms'])];
      const joined = await joinPasses({ stack, kc, client, store, designs, runs, taskQueue, dir, size, registered: site.nodes, prefix, concurrency, kubeQps: Number(joinQps), batchDelayMs, startWorker: () => startWorker(stack, storeUrl, taskQueue, joinQps) });
      for (const j of joined) report(j.row, j.problems.length === 0, j.problems.join('; '));
    }
    if (passes.includes('nfd')) {
      const relabel = rows.find((r) => r.nodes === size && r.pass === 'all-changed' && typeof r.seconds === 'number');
      const nfd = await nfdPasses({ stack, kc, dir, nodes: site.nodes, prefix, concurrency, kubeQps: Number(opts['kube-qps']), floorMs, ...(relabel ? { relabelMs: (relabel.seconds as number) * 1000 } : {}) });
      for (const n of nfd) report(n.row, n.problems.length === 0, n.problems.join('; '));
    }
  } finally {
    await connection?.close();
    await store?.close();
    await stopStack(join(dir, 'stack'), { purge: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const size of sizes) await benchSize(size);
  console.log('\n# summary');
  // Where the time went, per changed node: Temporal server and worker CPU ms, the server's database operations.
  const perNode = (r: Record<string, unknown>) => {
    const cpu = r.cpuMsPerChangedNode as Record<string, number> | null | undefined;
    const temporal = r.temporal as { dbOpsPerChangedNode?: number } | undefined;
    return { temporalMs: cpu?.temporal, workerMs: cpu?.worker, dbOps: temporal?.dbOpsPerChangedNode };
  };
  console.table(rows.filter((r) => r.seconds !== undefined).map((r) => {
    const { nodes, pass, seconds, p50Ms, p95Ms, p99Ms, maxMs, ratioToFloor, ratioToEngineFloor, relabelRatio, nodesPerSecond, writesCounted, refused, children, eventsPerChangedNode, largestPayloadKB, workerPeakRssMiB, ok } = r;
    return { nodes, pass, seconds, p50Ms, p95Ms, p99Ms, maxMs, ratioToFloor, ratioToEngineFloor, relabelRatio, nodesPerSecond, writesCounted, refused, children, eventsPerChangedNode, largestPayloadKB, workerPeakRssMiB, ...perNode(r), ok };
  }));
  if (failed) {
    console.error('bench: a measured run did not end as expected (see the rows with ok: false)');
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
