/**
 * relabel's passes of the end-to-end benchmark (see bench/e2e.ts): each a
 * fresh worker process, one run, its figures and checks.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node';
import { type Client } from '@temporalio/client';
import { isKubeletLabelKey } from '../src/core/plan/label-keys.ts';
import type { Design } from '../src/core/site/validate-site.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { type Runs } from '../src/facade/runs/runs.ts';
import { createPlans } from '../src/facade/plan.ts';
import { createDrift } from '../src/facade/drift.ts';
import { WORKER_ENV } from '../src/worker/config.ts';
import { nodeRequestCount } from '../stack/kube-metrics.ts';
import { temporalCounts, temporalFigures } from '../stack/temporal-metrics.ts';
import { type StackInfo } from '../stack/stack.ts';
import { type DesignMemory } from '../src/store/designs/design-cache.ts';
import { runRefusals } from './run-refusals.ts';
import type { Store } from '../src/store/store.ts';
import { type benchSite, commitSite, withChangedNodes } from './bench-site.ts';
import { pool, registerNodes, wrongNodes } from './bench-nodes.ts';
import { historyFigures, overHistoryLimits, perChildFigures } from './history.ts';
import { monotonicUs, nodeWritesBefore, profileWindow, workerExecArgv, writeFigures } from './write-figures.ts';
import { cpuOf, machineCpu, machineFigures, peakRssMiB } from './proc-figures.ts';
import { concurrency, continueAsNewAfter, heartbeat, opts, passes, retryCount } from './bench-options.ts';
import { report } from './bench-report.ts';
import { reportIdle } from './idle.ts';
import { apiserverProfile } from './apiserver-profile.ts';

/** Node writes the API server has refused as stale so far (422: a JSON Patch test failed; 409: a resourceVersion moved). */
async function refusedWrites(stack: StackInfo): Promise<number> {
  const [tests, versions] = await Promise.all([
    nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 422 }),
    nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 409 }),
  ]);
  return tests + versions;
}

/** A worker process on `taskQueue` (its client at `kubeQps`, 0: no limit) for pass `name`; resolves once it polls. */
export function startWorker(stack: StackInfo, storeUrl: string, taskQueue: string, kubeQps = opts['kube-qps'], name = 'worker'): Promise<ChildProcess> {
  const child = fork(new URL('../src/worker.ts', import.meta.url).pathname, ['--kube-qps', kubeQps], {
    env: {
      ...process.env,
      ...WORKER_ENV,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      KUBECONFIG: stack.kubeconfig,
      RELABEL_STORE_URL: storeUrl,
      RELABEL_TASK_QUEUE: taskQueue,
      // BENCH_WORKER_LOG_LEVEL=info shows the worker's info lines too (each run planned, each read of every Node and its source).
      RELABEL_LOG_LEVEL: process.env.BENCH_WORKER_LOG_LEVEL ?? 'warn',
      RELABEL_METRICS_PORT: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // With the write meter; e.g. BENCH_WORKER_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof/{pass}' profiles each pass's worker.
    execArgv: workerExecArgv(name),
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/** A timed step with its own fresh worker (plan, drift): time, the worker's peak RSS, and `check`'s verdict on the answer. */
export async function withWorker<T>(
  ctx: { stack: StackInfo; storeUrl: string; taskQueue: string; size: number },
  name: string,
  step: () => Promise<T>,
  check: (answer: T) => { ok: boolean; why?: string; figures?: Record<string, unknown> },
): Promise<void> {
  const worker = await startWorker(ctx.stack, ctx.storeUrl, ctx.taskQueue, undefined, name);
  try {
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const t0 = performance.now();
    const answer = await step();
    const ms = performance.now() - t0;
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const verdict = check(answer);
    // Nothing may be written; on the simulated cluster its controllers' writes are counted too, so there only the answer is checked.
    const wrote = heartbeat === 0 && writes !== 0;
    report(
      {
        nodes: ctx.size,
        pass: name,
        seconds: +(ms / 1000).toFixed(2),
        writesCounted: writes,
        workerPeakRssMiB: peakRssMiB(worker.pid as number),
        ...verdict.figures,
      },
      verdict.ok && !wrote,
      [verdict.why, wrote && `${writes} writes, expected none`].filter(Boolean).join('; '),
    );
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}

type Expect = { status: string; written: number; failure?: number; children?: number };

/**
 * One relabel pass: a fresh worker, one run (or retry), figures, checks.
 * With `warm`, the worker first runs `start` once untimed, so the timed
 * run meets a worker that has planned before (as a long-lived one has).
 */
export async function pass(
  ctx: {
    stack: StackInfo;
    storeUrl: string;
    store: Store;
    runs: Runs;
    client: Client;
    taskQueue: string;
    floorMs: number;
    engineFloorMs: number;
    size: number;
    prefix: string;
  },
  name: string,
  start: () => Promise<{ workflowId: string; runId: string }>,
  expect: Expect,
  warm = false,
): Promise<{ workflowId: string; runId: string }> {
  const worker = await startWorker(ctx.stack, ctx.storeUrl, ctx.taskQueue, undefined, name);
  try {
    if (warm) await ctx.runs.wait(await start(), undefined, 100);
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const writes0 = await nodeWritesBefore({ adminKubeconfig: ctx.stack.adminKubeconfig, prefix: ctx.prefix });
    const refusedBefore = await refusedWrites(ctx.stack);
    const temporalMetrics = `http://127.0.0.1:${ctx.stack.ports.temporalMetrics}/metrics`;
    const temporal0 = await temporalCounts(temporalMetrics, ctx.taskQueue);
    const cpu0 = cpuOf(ctx.stack, worker);
    const machine0 = machineCpu();
    const [t0, from] = [performance.now(), monotonicUs()];
    const ref = await start();
    const done = await ctx.runs.wait(ref, undefined, 100);
    const [ms, to] = [performance.now() - t0, monotonicUs()];
    const cpu1 = cpuOf(ctx.stack, worker);
    const machine = machineFigures(machine0, machineCpu(), ms / 1000);
    const cpuSecondsUsed = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, +(v - (cpu0[k] ?? 0)).toFixed(1)]));
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const rss = peakRssMiB(worker.pid as number);
    // relabel's writes refused as stale (a guard's test failed), each re-read and re-planned; and the other clients' (on the simulated cluster, the node controller's taint patches).
    const refusedAll = (await refusedWrites(ctx.stack)) - refusedBefore;
    const refused = done.result ? await runRefusals(ctx.store.runs, done.result.run) : Number.NaN;
    const history = await historyFigures(ctx.client, ref.workflowId, ref.runId);
    const written = await writeFigures({ adminKubeconfig: ctx.stack.adminKubeconfig, prefix: ctx.prefix }, writes0, worker);
    // The server publishes its counters about once a second.
    await new Promise((r) => setTimeout(r, 2000));
    const temporalServer = temporalFigures(temporal0, await temporalCounts(temporalMetrics, ctx.taskQueue), history.children);
    const r = done.result;
    const row = {
      nodes: ctx.size,
      pass: name,
      status: r?.status ?? done.execution,
      seconds: +(ms / 1000).toFixed(2),
      ratioToFloor: +(ms / ctx.floorMs).toFixed(2),
      ratioToEngineFloor: +(ms / ctx.engineFloorMs).toFixed(2),
      nodesPerSecond: Math.round(ctx.size / (ms / 1000)),
      written: r?.counts.written,
      writesCounted: writes,
      refused,
      othersRefused: refusedAll - refused,
      failed: r?.counts.failure,
      children: history.children,
      executions: history.executions,
      parentEvents: history.events,
      beforePlanSeconds: history.beforePlan,
      planSeconds: history.plan,
      eventsPerChangedNode: history.children > 0 ? +(history.allEvents / history.children).toFixed(1) : null,
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1),
      largestExecutionEvents: history.largestExecutionEvents,
      workerPeakRssMiB: rss,
      cpuSeconds: cpuSecondsUsed,
      machine,
      cpuMsPerChangedNode:
        history.children > 0 ? Object.fromEntries(Object.entries(cpuSecondsUsed).map(([k, v]) => [k, +((v * 1000) / history.children).toFixed(1)])) : null,
      temporalServer,
      ...written,
      ...perChildFigures(history),
      ...profileWindow(from, to),
    };
    const problems = [
      r?.status !== expect.status && `status ${r?.status ?? done.execution}, expected ${expect.status}`,
      // On the simulated cluster its controllers write nodes too (node lifecycle, TTL): the server counts at least the run's writes.
      (heartbeat > 0 ? writes < expect.written : writes !== expect.written) && `${writes} writes, expected ${expect.written}`,
      r?.counts.written !== expect.written && `result says ${r?.counts.written} written`,
      expect.failure !== undefined && r?.counts.failure !== expect.failure && `${r?.counts.failure} failed, expected ${expect.failure}`,
      history.children !== (expect.children ?? expect.written) && `${history.children} children, expected ${expect.children ?? expect.written}`,
      ...overHistoryLimits(history),
    ].filter(Boolean);
    report(row, problems.length === 0, problems.join('; '));
    return ref;
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}

/** What every pass of one size shares. */
export type SizeContext = {
  stack: StackInfo;
  storeUrl: string;
  store: Store;
  designs: DesignMemory;
  runs: Runs;
  client: Client;
  taskQueue: string;
  floorMs: number;
  engineFloorMs: number;
  size: number;
  core: CoreV1Api;
  site: ReturnType<typeof benchSite>;
  prefix: string;
  design: Design;
  seed: boolean;
  /**
   * Set on every Temporal after the first, whose passes find the nodes
   * already as the first one's left them: `all` then applies a revision
   * giving every node `bench-round: round` (one label changed on every node),
   * and `one-percent` changes that label on 1 % of them.
   */
  round?: string;
  /** The labels each node registered with (bench/member-site.ts), given again to a node registered anew. */
  registrationLabels?: (name: string) => Record<string, string>;
  /** With `--fresh-nodes` or `--fresh-temporal`: the nodes registered anew, the dev server restarted empty, before pass `pass`. */
  freshen?: (pass: string) => Promise<void>;
};

/** relabel's passes over one size's nodes, in order. */
export async function relabelPasses(ctx: SizeContext): Promise<void> {
  const { runs, core, site, size, store, prefix } = ctx;
  let design = ctx.design;
  const all = () => runs.start({ targets: site.nodes, concurrency, ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}) });
  const checkNodes = async (label: string, skip?: ReadonlySet<string>) => {
    const wrong = await wrongNodes(core, prefix, design, skip);
    report({ nodes: size, pass: label, wrongNodes: wrong.length, sample: wrong.slice(0, 5) }, wrong.length === 0);
  };
  // The value every node's bench-round label has once `all` ran on this Temporal (none on the first).
  let allRound: string | undefined;
  if (passes.includes('all')) {
    if (ctx.round !== undefined) {
      allRound = `all-${ctx.round}`;
      design = await commitSite(store, ctx.designs, withChangedNodes(site.files, new Set(site.nodes), allRound), `bench: every node changed (${ctx.round})`);
    }
    await ctx.freshen?.('all-changed');
    await reportIdle(ctx, 'all-changed');
    const profiled = apiserverProfile(ctx.stack, 'all-changed');
    await pass(ctx, 'all-changed', all, { status: 'success', written: size });
    await profiled;
    await checkNodes('all-changed: nodes as desired');
  }
  if (passes.includes('noop')) {
    const profiled = apiserverProfile(ctx.stack, 'no-op');
    await pass(ctx, 'no-op', all, { status: 'success', written: 0 });
    await profiled;
  }
  if (passes.includes('noop-warm')) await pass(ctx, 'no-op, warm worker', all, { status: 'success', written: 0 }, true);
  const changed = site.nodes.filter((_, i) => i % 100 === 0);
  if (passes.includes('one-percent') || passes.includes('plan')) {
    const files = withChangedNodes(site.files, new Set(changed), ctx.round === undefined ? 'r1' : `r1-${ctx.round}`, allRound);
    design = await commitSite(store, ctx.designs, files, 'bench: 1 % changed');
  }
  if (passes.includes('plan')) {
    // The fleet-wide plan of that revision over every node: per key counts and sources, nothing written.
    const plans = createPlans(runs);
    await withWorker(
      ctx,
      'plan',
      () => plans.plan({ targets: site.nodes }),
      (p) => {
        const round = p.labels['bench-round'];
        // The label is new on those nodes, or (on a later Temporal) a new value of it.
        const moved = (round?.gain ?? 0) + (round?.change ?? 0);
        const ok = p.targets === size && moved === changed.length && (round?.sources.length ?? 0) > 0;
        return {
          ok,
          ...(ok ? {} : { why: `plan says ${p.targets} targets, bench-round gained or changed on ${moved}` }),
          figures: { labelKeys: Object.keys(p.labels).length },
        };
      },
    );
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
    report(
      { nodes: size, pass: 'retry-missing: failures paged', failuresListed: page.total },
      page.total === missing.length && page.items.every((n) => n.error?.type === 'NodeNotFound'),
    );
    await registerNodes(loadKubeConfig(ctx.stack.adminKubeconfig), missing, {
      kwok: heartbeat > 0,
      ...(ctx.registrationLabels ? { labels: ctx.registrationLabels } : {}),
    });
    await pass(ctx, 'retry', () => runs.retry(first.workflowId, first.runId, { concurrency }), { status: 'success', written: missing.length });
    await checkNodes('retry: nodes as desired');
  }
  if (passes.includes('drift')) await driftPass(ctx, design);
}

/** Someone changes one owned label on 1 % of the nodes; detection must name exactly those. */
async function driftPass(ctx: SizeContext, design: Design): Promise<void> {
  const edited = ctx.site.nodes.filter((_, i) => i % 100 === 1);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const keyOf = (name: string) => Object.keys(design.nodes[name]?.labels ?? {}).find((k) => !isKubeletLabelKey(k) && k !== 'bench-round') ?? '';
  const setLabel = (name: string, value: string | undefined) =>
    ctx.core.patchNode({ name, body: { metadata: { labels: { [keyOf(name)]: value ?? null } } } }, merge);
  await pool(edited, 32, (name) => setLabel(name, 'edited-by-hand'));
  const drift = createDrift({ client: ctx.client, store: ctx.store, designs: ctx.designs, taskQueue: ctx.taskQueue, namespace: 'default' });
  await withWorker(
    ctx,
    'drift',
    () => drift.detect(),
    (r) => {
      // Seeded nodes were never written by a run, so they carry no applied-run record: unmanaged, rightly.
      const ok = r.counts.drifted === edited.length && r.counts.missing === 0 && (ctx.seed || r.counts.unmanaged === 0);
      return { ok, ...(ok ? {} : { why: `drift counts ${JSON.stringify(r.counts)}, expected ${edited.length} drifted` }), figures: { counts: r.counts } };
    },
  );
  // The edits undone, so that the passes on a next Temporal find every node as its last run left it.
  await pool(edited, 32, (name) => setLabel(name, design.nodes[name]?.labels[keyOf(name)]));
  const others = new Set(ctx.site.nodes.filter((_, i) => i % 100 !== 1));
  const wrong = await wrongNodes(ctx.core, ctx.prefix, design, others);
  report({ nodes: ctx.size, pass: 'drift: edits undone', wrongNodes: wrong.length, sample: wrong.slice(0, 5) }, wrong.length === 0);
}
