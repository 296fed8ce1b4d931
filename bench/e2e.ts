/**
 * `npm run bench:e2e -- [--nodes 500,5000] [--concurrency 50] [--passes …] [--continue-as-new-after N]`:
 * update_labels end to end (`--search-attributes off`: runs and children
 * without relabel's search attributes, to measure what they cost), on a local stack of its own per size (real
 * Temporal, real kube-apiserver), against the floor measured in the same run.
 *
 * Per size: register the nodes; `floor` (a plain client: one paginated
 * LIST, then one resourceVersion-guarded merge patch of 16 labels and an
 * annotation per node, `concurrency` at once; measured twice, the faster
 * counts); then relabel, each pass with
 * a fresh worker process (its peak RSS is read from /proc):
 * - `all`: every node changed; `noop`: nothing changed; `one-percent`: a new
 *   revision changing every 100th node;
 * - `plan`: the fleet-wide plan of the 1 % revision (before it is applied);
 * - `drift`: one owned label edited by hand on 1 % of the nodes, then one
 *   drift detection, which must name exactly those;
 * - `seed`: instead of `all`, the nodes are created already as desired (for
 *   the 50,000-node one-off); `retry`: K nodes missing → partial_success
 *   with exactly K NodeNotFound; created again, `relabel retry` fixes them.
 * Prints each time, its ratio to the floor, nodes per second, writes counted
 * by the API server, history events per changed node, the largest payload,
 * the worker's peak RSS, and where the time went: CPU of each process (per
 * changed node too), the Temporal server's database operations per changed
 * node and the share of workflow tasks it matched to a waiting poll. Exits
 * non-zero when a run does not end as expected (status, writes, children,
 * node labels).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { OWNED_LABELS_ANNOTATION } from '../src/core/plan/constants.ts';
import { formatOwnedLabels } from '../src/core/plan/owned-labels.ts';
import { isKubeletLabelKey } from '../src/core/plan/label-keys.ts';
import { validateSite, type Design } from '../src/core/site/validate-site.ts';
import { nodePatch } from '../src/core/plan/node-reconcile.ts';
import { planOf } from '../src/activities/node-plan.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createRuns, type Runs } from '../src/facade/runs.ts';
import { createPlans } from '../src/facade/plan.ts';
import { createDrift } from '../src/facade/drift.ts';
import { nodeRequestCount } from '../stack/kube-metrics.ts';
import { temporalCounts, temporalFigures } from '../stack/temporal-metrics.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { createDesignCache } from '../src/store/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import type { RevisionStore } from '../src/store/revision-store.ts';
import { WORKER_NODE_FLAGS } from '../src/worker/config.ts';
import { benchSite, withChangedNodes } from './bench-site.ts';
import { historyFigures } from './history.ts';
import { cpuOf, peakRssMiB } from './process-figures.ts';

const { values: opts } = parseArgs({
  options: {
    nodes: { type: 'string', default: '500,5000' },
    concurrency: { type: 'string', default: '50' },
    passes: { type: 'string', default: 'floor,all,noop,plan,one-percent,drift' },
    retry: { type: 'string', default: '1000' },
    'kube-qps': { type: 'string', default: '0' },
    'continue-as-new-after': { type: 'string' },
    'search-attributes': { type: 'string', default: 'on' },
  },
});
const sizes = opts.nodes.split(',').map(Number);
const concurrency = Number(opts.concurrency);
const passes = opts.passes.split(',');
const retryCount = Number(opts.retry);
const continueAsNewAfter = opts['continue-as-new-after'] === undefined ? undefined : Number(opts['continue-as-new-after']);

/** Every figure printed, for the summary. */
const rows: Record<string, unknown>[] = [];
let failed = false;

function report(row: Record<string, unknown>, ok: boolean, why = ''): void {
  rows.push({ ...row, ok });
  console.log(JSON.stringify({ ...row, ok, ...(why ? { why } : {}) }));
  if (!ok) failed = true;
}

/** Runs `fn` over `items`, `width` at once. */
async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
  }));
}

/** The floor: one paginated LIST, then one guarded merge patch of 16 labels and an annotation per node. */
async function floor(core: CoreV1Api, prefix: string): Promise<{ ms: number; nodes: number }> {
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const t0 = performance.now();
  const seen: { name: string; rv: string }[] = [];
  let cont: string | undefined;
  do {
    const page = await core.listNode({ limit: 500, ...(cont ? { _continue: cont } : {}) });
    for (const n of page.items) if (n.metadata?.name?.startsWith(prefix)) seen.push({ name: n.metadata.name, rv: n.metadata.resourceVersion ?? '' });
    cont = page.metadata?._continue || undefined;
  } while (cont);
  const labels = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`floor.example.com/label-${i}`, `value-${i}`]));
  const annotations = { 'floor.example.com/owned': Object.keys(labels).join(',') };
  await pool(seen, concurrency, (n) => core.patchNode({ name: n.name, body: { metadata: { resourceVersion: n.rv, labels, annotations } } }, merge));
  return { ms: performance.now() - t0, nodes: seen.length };
}

/** A worker process on `taskQueue`; resolves once it polls. */
function startWorker(stack: StackInfo, storeUrl: string, taskQueue: string): Promise<ChildProcess> {
  const child = fork(new URL('../src/worker.ts', import.meta.url).pathname, ['--kube-qps', opts['kube-qps']], {
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

/** Nodes whose labels or ownership record differ from the design (at most a few named). */
async function wrongNodes(core: CoreV1Api, prefix: string, design: Design, skip: ReadonlySet<string> = new Set()): Promise<string[]> {
  const wrong: string[] = [];
  let cont: string | undefined;
  do {
    const page = await core.listNode({ limit: 500, ...(cont ? { _continue: cont } : {}) });
    for (const n of page.items) {
      const name = n.metadata?.name ?? '';
      if (!name.startsWith(prefix) || skip.has(name)) continue;
      const desired = design.nodes[name]?.labels ?? {};
      const labels = n.metadata?.labels ?? {};
      const owned = formatOwnedLabels(Object.keys(desired).filter((k) => !isKubeletLabelKey(k)).sort());
      if (Object.entries(desired).some(([k, v]) => labels[k] !== v) || n.metadata?.annotations?.[OWNED_LABELS_ANNOTATION] !== owned) wrong.push(name);
    }
    cont = page.metadata?._continue || undefined;
  } while (cont);
  return wrong;
}

/**
 * A node as relabel leaves it: what its planner would patch onto a freshly
 * registered node (labels, annotations, taints and every ownership record).
 */
function asDesired(design: Design, name: string): V1Node {
  const registered = { labels: { 'kubernetes.io/hostname': name }, annotations: {}, taints: [], resourceVersion: '' };
  const patch = nodePatch(planOf(design, registered, name), registered, design.policy.liftUninitializedTaint);
  const labels = { ...registered.labels, ...patch?.metadata.labels };
  const annotations = patch?.metadata.annotations ?? {};
  const taints = patch?.spec?.taints ?? [];
  const present = <T,>(o: Record<string, T | null>) => Object.fromEntries(Object.entries(o).filter((e): e is [string, T] => e[1] !== null));
  // A node freshly made carries no taint times: the taints go as documents write them.
  const spec = { taints: taints.map(({ key, value, effect }) => ({ key, effect, ...(value === undefined ? {} : { value }) })) };
  return { metadata: { name, labels: present(labels), annotations: present(annotations) }, ...(taints.length > 0 ? { spec } : {}) };
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
    const ok = verdict.ok && writes === 0;
    report({ nodes: ctx.size, pass: name, seconds: +(ms / 1000).toFixed(2), writesCounted: writes, workerPeakRssMiB: peakRssMiB(worker.pid as number), ...verdict.figures }, ok, [verdict.why, writes !== 0 && `${writes} writes, expected none`].filter(Boolean).join('; '));
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}

type Expect = { status: string; written: number; failure?: number; children?: number };

/** One relabel pass: a fresh worker, one run (or retry), figures, checks. */
async function pass(ctx: { stack: StackInfo; storeUrl: string; runs: Runs; client: Client; taskQueue: string; floorMs: number; size: number }, name: string, start: () => Promise<{ workflowId: string; runId: string }>, expect: Expect): Promise<{ workflowId: string; runId: string }> {
  const worker = await startWorker(ctx.stack, ctx.storeUrl, ctx.taskQueue);
  try {
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
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
    const history = await historyFigures(ctx.client, ref.workflowId, ref.runId);
    // The server publishes its counters about once a second.
    await new Promise((r) => setTimeout(r, 2000));
    const temporal = temporalFigures(temporal0, await temporalCounts(temporalMetrics, ctx.taskQueue), history.children);
    const r = done.result;
    const row = {
      nodes: ctx.size, pass: name, status: r?.status ?? done.execution, seconds: +(ms / 1000).toFixed(2), ratioToFloor: +(ms / ctx.floorMs).toFixed(2),
      nodesPerSecond: Math.round(ctx.size / (ms / 1000)), written: r?.counts.written, writesCounted: writes, failed: r?.counts.failure,
      children: history.children, executions: history.executions, parentEvents: history.events,
      eventsPerChangedNode: history.children > 0 ? +(history.allEvents / history.children).toFixed(1) : null,
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1), workerPeakRssMiB: rss, cpuSeconds: cpuSecondsUsed,
      cpuMsPerChangedNode: history.children > 0 ? Object.fromEntries(Object.entries(cpuSecondsUsed).map(([k, v]) => [k, +((v * 1000) / history.children).toFixed(1)])) : null,
      temporal,
    };
    const problems = [
      r?.status !== expect.status && `status ${r?.status ?? done.execution}, expected ${expect.status}`,
      writes !== expect.written && `${writes} writes, expected ${expect.written}`,
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

async function benchSize(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-'));
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts() });
  let store: RevisionStore | undefined;
  let connection: Connection | undefined;
  try {
    const prefix = 'bench-';
    const site = benchSite(prefix, size);
    const validation = validateSite(site.files);
    if (!validation.ok) throw new Error('bench site does not validate');
    let design = validation.design;
    const storeUrl = `sqlite:${join(dir, 'revisions.db')}`;
    store = await openStore(storeUrl);
    await store.stage('site', site.files);
    await store.tag((await store.commit()).id, 'site-action-success');
    const core = loadKubeConfig(stack.adminKubeconfig).makeApiClient(CoreV1Api);
    const seed = passes.includes('seed');
    const t0 = performance.now();
    await pool(site.nodes, 32, (name) => core.createNode({ body: seed ? asDesired(design, name) : { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } }));
    console.log(`# ${size} nodes registered in ${Math.round(performance.now() - t0)} ms${seed ? ' (already as desired)' : ''}`);

    let floorMs = Number.NaN;
    if (passes.includes('floor')) {
      // Twice, and the faster counts: the floor is the best a plain client does here.
      const tries = [await floor(core, prefix), await floor(core, prefix)];
      floorMs = Math.min(...tries.map((f) => f.ms));
      report(
        { nodes: size, pass: 'floor', seconds: +(floorMs / 1000).toFixed(2), ratioToFloor: 1, nodesPerSecond: Math.round(size / (floorMs / 1000)), tries: tries.map((f) => +(f.ms / 1000).toFixed(2)) },
        tries.every((f) => f.nodes === size),
      );
    }

    connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    const taskQueue = 'relabel-bench';
    const designs = createDesignCache(store);
    const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default', searchAttributes: opts['search-attributes'] !== 'off' });
    const ctx = { stack, storeUrl, runs, client, taskQueue, floorMs, size };
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
      const next = validateSite(files);
      if (!next.ok) throw new Error('changed bench site does not validate');
      design = next.design;
      await store.stage('site', files);
      await store.commit({ message: 'bench: 1 % changed' });
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
      await pool(missing, 32, (name) => core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } }));
      await pass(ctx, 'retry', () => runs.retry(first.workflowId, first.runId, { concurrency }), { status: 'success', written: missing.length });
      await checkNodes('retry: nodes as desired');
    }
    if (passes.includes('drift')) {
      // Someone changes one owned label on 1 % of the nodes; detection must name exactly those.
      const edited = site.nodes.filter((_, i) => i % 100 === 1);
      const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      await pool(edited, 32, async (name) => {
        const key = Object.keys(design.nodes[name]?.labels ?? {}).find((k) => !isKubeletLabelKey(k) && k !== 'bench-round') ?? '';
        await core.patchNode({ name, body: { metadata: { labels: { [key]: 'edited-by-hand' } } } }, merge);
      });
      const drift = createDrift({ client, store, designs, taskQueue, namespace: 'default' });
      await withWorker(ctx, 'drift', () => drift.detect(), (r) => {
        // Seeded nodes were never written by a run, so they carry no applied-run record: unmanaged, rightly.
        const ok = r.counts.drifted === edited.length && r.counts.missing === 0 && (seed || r.counts.unmanaged === 0);
        return { ok, ...(ok ? {} : { why: `drift counts ${JSON.stringify(r.counts)}, expected ${edited.length} drifted` }), figures: { counts: r.counts } };
      });
    }
  } finally {
    await connection?.close();
    await store?.close();
    await stopStack(join(dir, 'stack'), { purge: true });
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
    const { nodes, pass, seconds, ratioToFloor, nodesPerSecond, writesCounted, children, eventsPerChangedNode, largestPayloadKB, workerPeakRssMiB, ok } = r;
    return { nodes, pass, seconds, ratioToFloor, nodesPerSecond, writesCounted, children, eventsPerChangedNode, largestPayloadKB, workerPeakRssMiB, ...perNode(r), ok };
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
