/**
 * The benchmark's `join` pass: relabel's join watcher (`relabel join
 * enable`) labelling nodes that join, on the simulated cluster (KWOK nodes
 * heartbeating, the real controller manager and scheduler), with one worker
 * process for the whole pass. The design names every joiner (`${prefix}j0001`
 * on, not registered at the start) and each registers with relabel's
 * uninitialized taint. Rows: (a) 50 nodes joining one at a time, (b) 1,000
 * at once, Node Feature Discovery's nfd-master labelling the same burst of
 * other nodes beside it, (c) 200 joining during an operator's run over
 * every registered node, from creation and from that run's end; and the
 * watcher's own history. The nodes it created are deleted at the end, so
 * the passes after it find the cluster as they would without it.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { joinWorkflowId } from '../../src/contracts/join-messages.ts';
import { createJoins } from '../../src/facade/joins.ts';
import type { Runs } from '../../src/facade/runs/runs.ts';
import type { DesignMemory } from '../../src/store/designs/design-cache.ts';
import type { Store } from '../../src/store/store.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { pool } from '../bench-nodes.ts';
import { benchSite, commitSite } from '../bench-site.ts';
import { NFD_GROUP } from '../nfd/setup.ts';
import { NFD_NAMESPACE } from '../nfd/pass.ts';
import { peakRssMiB } from '../proc-figures.ts';
import { historyOf, historyProblems } from './join-runs.ts';
import { startLabelWatch, type LabelWatch } from './label-watch.ts';
import { percentiles } from './latency.ts';
import { nfdBurst } from './nfd-burst.ts';
import { burst, duringRun, oneAtATime, type PassOutcome, type Scene } from './scenarios.ts';

/** Nodes joining in each scenario. */
export const JOINERS = { oneAtATime: 50, burst: 1000, duringRun: 200 } as const;

/** Nodes the bench creates at once in a burst. */
const CREATE_WIDTH = 32;

/** What the pass needs of the benchmark's run. */
export interface JoinPassContext {
  stack: StackInfo;
  /** Admin kubeconfig, loaded (kept-alive connections): creates and watches the nodes. */
  kc: KubeConfig;
  client: Client;
  store: Store;
  /** The designs the bench commits are told to, as the API server's facade. */
  designs: DesignMemory;
  runs: Runs;
  taskQueue: string;
  /** Directory for nfd-master's log. */
  dir: string;
  /** Registered nodes: the operator's run of (c) goes over all of them. */
  size: number;
  registered: readonly string[];
  prefix: string;
  concurrency: number;
  /** The worker's client QPS in this pass (0: no limit), for the rows. */
  kubeQps: number;
  /** The watcher's wait for more joins before it starts a run (ms). */
  batchDelayMs: number;
  /** A worker process on the pass's task queue, polling. */
  startWorker(): Promise<ChildProcess>;
}

/** `scenario`'s rows, or one failed row saying why it could not finish. */
async function guarded(size: number, pass: string, scenario: () => Promise<PassOutcome | PassOutcome[]>): Promise<PassOutcome[]> {
  try {
    const out = await scenario();
    return Array.isArray(out) ? out : [out];
  } catch (err) {
    return [{ row: { nodes: size, pass }, problems: [`${pass} did not finish: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`] }];
  }
}

/** Deletes the nodes and NodeFeatures the pass created; those already gone are fine. */
async function removeCreated(kc: KubeConfig, nodes: readonly string[], features: readonly string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const gone = (err: unknown) => {
    if ((err as { code?: number }).code !== 404) throw err;
  };
  await pool(features, CREATE_WIDTH, (name) =>
    custom.deleteNamespacedCustomObject({ group: NFD_GROUP, version: 'v1alpha1', namespace: NFD_NAMESPACE, plural: 'nodefeatures', name }).catch(gone),
  );
  await pool(nodes, CREATE_WIDTH, (name) => core.deleteNode({ name }).catch(gone));
}

/** Runs the join scenarios; a row and its problems for each. */
export async function joinPasses(ctx: JoinPassContext): Promise<PassOutcome[]> {
  const site = benchSite(ctx.prefix, ctx.size, JOINERS.oneAtATime + JOINERS.burst + JOINERS.duringRun);
  const one = site.joiners.slice(0, JOINERS.oneAtATime);
  const many = site.joiners.slice(one.length, one.length + JOINERS.burst);
  const during = site.joiners.slice(one.length + many.length);
  const nfdNodes = Array.from({ length: JOINERS.burst }, (_, i) => `nfd-join-${String(i + 1).padStart(4, '0')}`);
  const design = await commitSite(ctx.store, ctx.designs, site.files, 'bench: the site with the nodes that will join');
  const joins = createJoins({ client: ctx.client, store: ctx.store, designs: ctx.designs, taskQueue: ctx.taskQueue, namespace: 'default' });
  const worker = await ctx.startWorker();
  let watch: LabelWatch | undefined;
  const out: PassOutcome[] = [];
  try {
    // A node relabel never wrote is joining: the registered nodes are written first (unmeasured), or the watcher's first LIST would take them all.
    const t = performance.now();
    const setup = await ctx.runs.start({ targets: ctx.registered, concurrency: ctx.concurrency });
    const setupDone = await ctx.runs.wait(setup, undefined, 100);
    console.log(
      `# join: the ${ctx.size} registered nodes brought to the revision by run ${setup.run} (${setupDone.result?.status ?? setupDone.execution}, ${setupDone.result?.counts.written ?? 0} written) in ${Math.round(performance.now() - t)} ms`,
    );
    watch = await startLabelWatch(ctx.kc);
    const enabled = await joins.enable({ by: 'bench', watch: { batchDelayMs: ctx.batchDelayMs } });
    const enabledAt = performance.now();
    // Its first report comes before its first LIST: wait for one that has a version to watch from.
    for (let s = await joins.status(); !s.watcher?.resourceVersion; s = await joins.status()) {
      if (performance.now() - enabledAt > 60_000) throw new Error(`the join watcher has not listed the nodes after 60 s: ${JSON.stringify(s)}`);
      await sleep(100);
    }
    console.log(
      `# join: the watcher of site ${enabled.site} watches, ${Math.round(performance.now() - enabledAt)} ms after joins were enabled (batch delay ${ctx.batchDelayMs} ms, worker at ${ctx.kubeQps || 'no'} QPS)`,
    );
    const scene: Scene = {
      stack: ctx.stack,
      core: ctx.kc.makeApiClient(CoreV1Api),
      client: ctx.client,
      store: ctx.store,
      runs: ctx.runs,
      watch,
      size: ctx.size,
      concurrency: ctx.concurrency,
      width: CREATE_WIDTH,
      registered: ctx.registered,
      siteFiles: site.files,
      design,
      nextRun: setup.run + 1,
      commit: (files, message) => commitSite(ctx.store, ctx.designs, files, message),
    };
    const workerQps = { workerKubeQps: ctx.kubeQps };
    const withQps = (rows: PassOutcome[]) => rows.map((o) => ({ ...o, row: { ...o.row, ...workerQps } }));
    out.push(...withQps(await guarded(ctx.size, `join-${one.length}-one-at-a-time`, () => oneAtATime(scene, `join-${one.length}-one-at-a-time`, one))));
    out.push(...withQps(await guarded(ctx.size, `join-${many.length}-at-once`, () => burst(scene, `join-${many.length}-at-once`, many))));
    const relabelBurst = out.at(-1)?.row.seconds;
    out.push(...(await guarded(ctx.size, `nfd-${nfdNodes.length}-at-once`, () => nfdBurstRow(ctx, scene, nfdNodes, relabelBurst))));
    out.push(...withQps(await guarded(ctx.size, `join-${during.length}-during-a-run`, () => duringRun(scene, `join-${during.length}-during-a-run`, during))));
    // The watcher's own history, so far: it must stay within the limits however long it runs.
    const status = await joins.status();
    const history = await historyOf(ctx.client, joinWorkflowId(enabled.site), enabled.runId ?? '');
    out.push({
      row: {
        nodes: ctx.size,
        pass: 'join-watcher',
        seconds: +((performance.now() - enabledAt) / 1000).toFixed(2),
        executions: history.executions,
        maxEventsPerExecution: history.maxEvents,
        largestPayloadKB: +(history.largestPayload / 1024).toFixed(1),
        joinRuns: status.watcher?.runs,
        dispatched: status.watcher?.dispatched,
        unmanaged: status.watcher?.unmanaged,
        workerPeakRssMiB: peakRssMiB(worker.pid as number),
      },
      problems: [
        ...historyProblems([{ run: joinWorkflowId(enabled.site), ...history }], 'watcher'),
        ...(status.enabled ? [] : [`the watcher stopped: ${status.ended ?? '?'}`]),
      ],
    });
  } finally {
    await joins.disable().catch(() => undefined);
    await watch?.stop();
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
    await removeCreated(ctx.kc, [...site.joiners, ...nfdNodes], nfdNodes);
  }
  return out;
}

/** NFD labelling a burst of nodes beside relabel's: the row, with relabel's time over NFD's. */
async function nfdBurstRow(ctx: JoinPassContext, scene: Scene, nfdNodes: string[], relabelBurst: unknown): Promise<PassOutcome> {
  const nfd = await nfdBurst({ stack: ctx.stack, kc: ctx.kc, core: scene.core, dir: ctx.dir, watch: scene.watch, names: nfdNodes, width: CREATE_WIDTH });
  const seconds = +(nfd.ms / 1000).toFixed(2);
  return {
    row: {
      nodes: ctx.size,
      pass: `nfd-${nfdNodes.length}-at-once`,
      seconds,
      ...percentiles(nfd.latencies),
      joiners: nfdNodes.length,
      labelled: nfd.latencies.length,
      relabelRatio: typeof relabelBurst === 'number' ? +(relabelBurst / seconds).toFixed(2) : null,
      writesCounted: nfd.writes,
      createSeconds: +(nfd.createMs / 1000).toFixed(2),
      updaters: nfd.updaters,
      args: nfd.args,
    },
    problems: nfd.missing.length > 0 ? [`${nfd.missing.length} of ${nfdNodes.length} not labelled by nfd-master by the deadline`] : [],
  };
}
