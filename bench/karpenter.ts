/**
 * `node bench/karpenter.ts [--pods 100] [--delay-ms 25]`: the join pass's
 * Karpenter variant, on a simulated cluster of its own (the real controller
 * manager and scheduler, KWOK playing the kubelets) with Karpenter's KWOK
 * cloud provider creating the nodes. `--pods` pending pods make Karpenter
 * create the nodes of a NodePool whose `startupTaints` list relabel's
 * uninitialized taint, a node set selects them by `karpenter.sh/nodepool`,
 * and the join watcher (one worker process) labels each and lifts the taint;
 * in the same run the same pods go to a NodePool without the taint. Rows:
 * - `karpenter-relabelled`: nodes Karpenter created, pods running, each
 *   node's time from first seen by the bench's watch (its creation, to the
 *   watch event) to labelled, untainted and registered (p50/p95/p99/max),
 *   the same from its creationTimestamp (whole seconds), and from first
 *   seen registered by Karpenter (relabel's taint then on it);
 * - `karpenter-plain`: the pool without relabel's taint: nodes, pods, each
 *   node's time to registered by Karpenter;
 * - `karpenter-nodes`: the two node counts side by side (relabel's taint
 *   must not make Karpenter create more);
 * - `karpenter-removed`: every NodeClaim deleted during an operator's run
 *   over the set: how long until the nodes are gone, and whether every run
 *   (the join runs, that run, one more after) succeeded, and how many join
 *   runs there were.
 * Exits non-zero when any row is not ok.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { StartedVia } from '../src/core/plan/run-audit.ts';
import { createJoins } from '../src/facade/joins.ts';
import { createRuns } from '../src/facade/runs/runs.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createDesignCache } from '../src/store/designs/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import { WORKER_ENV } from '../src/worker/config.ts';
import { startKarpenter } from '../stack/karpenter.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { report, runBench } from './bench-report.ts';
import { benchSite, commitSite } from './bench-site.ts';
import { karpenterSetFile, provision, registered, relabelled, removePool, RELABEL_STARTUP_TAINT, watchPool, type Provisioned } from './joins/karpenter.ts';
import { percentiles } from './joins/latency.ts';

const { values: opts } = parseArgs({ options: { pods: { type: 'string', default: '100' }, 'delay-ms': { type: 'string', default: '25' } } });
const PODS = Number(opts.pods);
const PROVISION_MS = 120_000 + PODS * 300;
const TIER = { 'example.com/tier': 'gold' };

/** A worker process on `taskQueue`; resolves once it polls. */
function startWorker(stack: StackInfo, storeUrl: string, taskQueue: string): Promise<ChildProcess> {
  const child = fork(new URL('../src/worker.ts', import.meta.url).pathname, [], {
    env: {
      ...process.env,
      ...WORKER_ENV,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      KUBECONFIG: stack.kubeconfig,
      RELABEL_STORE_URL: storeUrl,
      RELABEL_TASK_QUEUE: taskQueue,
      RELABEL_LOG_LEVEL: 'warn',
      RELABEL_METRICS_PORT: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/** A pool's row: its counts, and its nodes' times to done (ms) as percentiles; `relabelled`: also from Karpenter's registration. */
function poolRow(pass: string, p: Provisioned, relabelled: boolean): Record<string, unknown> {
  const [fromCreation, fromRegistered] = [percentiles(p.fromCreationMs), percentiles(p.fromRegisteredMs)];
  return {
    pass,
    pods: PODS,
    podsRunning: p.podsRunning,
    nodes: p.nodes,
    nodeClaims: p.nodeClaims,
    seconds: +(p.ms / 1000).toFixed(2),
    until: relabelled ? 'labelled by relabel, its taint lifted' : 'registered by Karpenter',
    ...percentiles(p.latencies),
    fromCreationP50Ms: fromCreation.p50Ms,
    fromCreationP99Ms: fromCreation.p99Ms,
    ...(relabelled ? { fromRegisteredP50Ms: fromRegistered.p50Ms, fromRegisteredP99Ms: fromRegistered.p99Ms } : {}),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-karpenter-'));
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts(), kwok: { nodes: 0, heartbeatSeconds: 20, leaseSeconds: 40 } });
  const storeUrl = `sqlite:${join(dir, 'revisions.db')}`;
  const store = await openStore(storeUrl);
  const taskQueue = 'relabel-bench-karpenter';
  let worker: ChildProcess | undefined;
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const [pool, plainPool] = ['relabelled', 'plain'];
    const site = benchSite('bench-', 0);
    const designs = createDesignCache(store);
    await commitSite(store, designs, [...site.files, karpenterSetFile('karpenter', pool, TIER)], 'bench: a node set of the Karpenter pool');
    await store.revisions.tag((await store.revisions.latest())?.id ?? 0, 'site-action-success');
    const client = new Client({ connection });
    const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default' });
    const joins = createJoins({ client, store, designs, taskQueue, namespace: 'default' });
    worker = await startWorker(stack, storeUrl, taskQueue);
    const enabled = await joins.enable({ by: 'bench', watch: { batchDelayMs: Number(opts['delay-ms']) } });
    for (let s = await joins.status(); !s.watcher?.resourceVersion; s = await joins.status()) await sleep(100);
    const t0 = performance.now();
    const karpenter = await startKarpenter(dir, { adminKubeconfig: stack.adminKubeconfig });
    console.log(`# Karpenter ready in ${Math.round(performance.now() - t0)} ms; the join watcher of ${enabled.site} watches`);
    try {
      const c = { kc: loadKubeConfig(stack.adminKubeconfig), namespace: 'default' };
      const [plainWatch, watch] = [await watchPool(c.kc, plainPool, registered), await watchPool(c.kc, pool, relabelled)];
      const [plain, tainted] = await Promise.all([
        provision(c, plainWatch, { name: plainPool, labels: TIER }, PODS, PROVISION_MS),
        provision(c, watch, { name: pool, labels: TIER, startupTaints: [RELABEL_STARTUP_TAINT] }, PODS, PROVISION_MS),
      ]);
      report(
        { ...poolRow('karpenter-relabelled', tainted, true), retainted: tainted.undone, writtenBeforeRegistered: tainted.early },
        tainted.podsRunning === PODS && tainted.notDone.length === 0,
        tainted.notDone.length > 0 ? `${tainted.notDone.length} node(s) never labelled and untainted (one is ${tainted.notDone[0]})` : '',
      );
      report(poolRow('karpenter-plain', plain, false), plain.podsRunning === PODS && plain.notDone.length === 0);
      report(
        { pass: 'karpenter-nodes', pods: PODS, relabelled: tainted.nodes, plain: plain.nodes },
        tainted.nodes <= plain.nodes,
        tainted.nodes > plain.nodes ? `relabel's taint made Karpenter create ${tainted.nodes - plain.nodes} more node(s)` : '',
      );
      const started = new Date();
      const during = await runs.start({ targets: undefined, select: { nodeSets: ['karpenter'] } });
      const [removed] = await Promise.all([removePool(c, watch, pool, 120_000), removePool(c, plainWatch, plainPool, 120_000)]);
      const duringDone = await runs.wait(during);
      const after = await runs.wait(await runs.start({ targets: undefined, select: { nodeSets: ['karpenter'] } }));
      let listed = await runs.list(500, { site: enabled.site });
      for (let i = 0; i < 50 && listed.some((r) => r.outcome === undefined); i++) {
        await sleep(200);
        listed = await runs.list(500, { site: enabled.site });
      }
      const notOk = listed.filter((r) => r.outcome !== 'success');
      report(
        {
          pass: 'karpenter-removed',
          nodeClaims: removed.removed,
          seconds: +(removed.ms / 1000).toFixed(2),
          runDuringRemoval: duringDone.result?.status,
          runDuringTargets: duringDone.result?.counts.total,
          runAfter: after.result?.status,
          runs: listed.length,
          joinRuns: listed.filter((r) => r.startedVia === StartedVia.join).length,
          runsNotSuccess: notOk.length,
          sinceRemovalSeconds: +((Date.now() - started.getTime()) / 1000).toFixed(1),
        },
        notOk.length === 0 && duringDone.result?.status === 'success' && after.result?.status === 'success',
        notOk.map((r) => `run ${r.run}: ${r.outcome ?? r.execution}`).join('; '),
      );
      await Promise.all([watch.stop(), plainWatch.stop()]);
    } finally {
      await joins.disable().catch(() => undefined);
      await karpenter.stop();
    }
  } finally {
    worker?.kill('SIGTERM');
    await connection.close();
    await store.close();
    await stopStack(join(dir, 'stack'), { purge: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
