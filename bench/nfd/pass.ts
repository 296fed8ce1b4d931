/**
 * The benchmark's `nfd` passes: Node Feature Discovery's nfd-master labels
 * the same nodes with the floors' 16 labels (new values each pass), from
 * one NodeFeature per node published beforehand as nfd-worker would. Timed
 * from nfd-master's start (informer sync, its first tick a second later,
 * then one GET and one JSON Patch per node) until every node carries the
 * labels. Twice: at NFD's defaults, and matched to relabel's client rate
 * as far as NFD lets it be: NFD offers no client QPS setting (see
 * {@link NFD_CLIENT_RATE}), only the number of node updaters, each a
 * client of its own; so as many updaters as make relabel's `--kube-qps`,
 * or, when relabel's client has no limit (the bench's default), as many
 * as relabel's window (`--concurrency`).
 */
import { join } from 'node:path';
import { CoreV1Api, ApiException, type KubeConfig } from '@kubernetes/client-node';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { isAlive, logTail, stopProcess } from '../../stack/processes.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { nodesWithout } from '../bench-nodes.ts';
import { floorValues } from '../floor-labels.ts';
import { cpuSeconds } from '../proc-figures.ts';
import { NFD_CLIENT_RATE, NFD_DEFAULT_PARALLELISM, nfdMasterPath, nodesUpdated, startNfdMaster, type NfdMaster } from './master.ts';
import { applyNfdCrds, ensureNamespace, nfdModuleDir, publishNodeFeatures } from './setup.ts';

/** Where nfd-worker's NodeFeatures live, and nfd-master's namespace. */
export const NFD_NAMESPACE = 'node-feature-discovery';

/** The node nfd-master annotates with its version when it starts (not a bench node). */
export const MASTER_NODE = 'nfd-master';

/** What the passes need of the benchmark's run. */
export interface NfdPassContext {
  stack: StackInfo;
  /** Admin kubeconfig, loaded: CRDs, NodeFeatures, the master's node. */
  kc: KubeConfig;
  /** Directory for nfd-master's logs. */
  dir: string;
  nodes: readonly string[];
  prefix: string;
  concurrency: number;
  /** relabel's client QPS in this run (0: no limit). */
  kubeQps: number;
  floorMs: number;
  /** relabel's all-changed time in the same run, when measured. */
  relabelMs?: number;
}

/** CPU seconds of the stack's Kubernetes processes so far. */
function stackCpu(stack: StackInfo): Record<string, number> {
  return Object.fromEntries(stack.processes.filter((p) => p.name !== 'temporal').map((p) => [p.name, cpuSeconds(p.pid)]));
}

/** One timed run of nfd-master; undefined `ms` when not every node was labelled in time. */
async function timedRun(ctx: NfdPassContext, master: NfdMaster, tag: string): Promise<{ ms?: number; firstWriteMs?: number; why?: string }> {
  const core = ctx.kc.makeApiClient(CoreV1Api);
  const t0 = performance.now();
  // Generous: at NFD's defaults a node costs two requests of 5 per second per updater.
  const deadline = t0 + 60_000 + ctx.nodes.length * 100;
  let firstWriteMs: number | undefined;
  while (performance.now() < deadline) {
    if (!isAlive(master.process.pid)) return { why: `nfd-master exited; last lines of ${master.process.log}:\n${logTail(master.process.log)}` };
    const updated = await nodesUpdated(master);
    if (updated !== undefined && updated > 0) firstWriteMs ??= performance.now() - t0;
    if (updated !== undefined && updated >= ctx.nodes.length && (await nodesWithout(core, ctx.prefix, tag)).length === 0) {
      return { ms: performance.now() - t0, ...(firstWriteMs === undefined ? {} : { firstWriteMs }) };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const wrong = await nodesWithout(core, ctx.prefix, tag);
  return { why: `${wrong.length} nodes not labelled after ${Math.round((deadline - t0) / 1000)} s` };
}

/** Creates the CRDs, the namespace and the node nfd-master needs, unless there; the CRDs' names. */
export async function prepareNfd(kc: KubeConfig): Promise<string[]> {
  const crds = await applyNfdCrds(kc, nfdModuleDir());
  await ensureNamespace(kc, NFD_NAMESPACE);
  try {
    await kc.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: MASTER_NODE, labels: { 'kubernetes.io/hostname': MASTER_NODE } } } });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
  return crds;
}

/**
 * Runs both nfd passes; returns a row and its problems for each, or one
 * failed `nfd` row saying why NFD could not be set up (its module or
 * binary missing: run `npm run tools`).
 */
export async function nfdPasses(ctx: NfdPassContext): Promise<{ row: Record<string, unknown>; problems: string[] }[]> {
  const size = ctx.nodes.length;
  let crds: string[];
  try {
    nfdMasterPath();
    crds = await prepareNfd(ctx.kc);
  } catch (err) {
    return [{ row: { nodes: size, pass: 'nfd' }, problems: [`Node Feature Discovery not set up: ${err instanceof Error ? err.message : String(err)}`] }];
  }
  const settings = [
    { pass: 'nfd-defaults', parallelism: undefined },
    { pass: 'nfd-matched', parallelism: ctx.kubeQps > 0 ? Math.ceil(ctx.kubeQps / NFD_CLIENT_RATE.qps) : ctx.concurrency },
  ];
  const out: { row: Record<string, unknown>; problems: string[] }[] = [];
  for (const [i, setting] of settings.entries()) {
    const tag = `nfd${i}${Date.now().toString(36)}`;
    const p0 = performance.now();
    await publishNodeFeatures(ctx.kc, NFD_NAMESPACE, ctx.nodes, floorValues(tag).labels);
    const publishMs = performance.now() - p0;
    const writesBefore = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const master = await startNfdMaster({
      kubeconfig: ctx.stack.adminKubeconfig,
      nodeName: MASTER_NODE,
      namespace: NFD_NAMESPACE,
      log: join(ctx.dir, `${setting.pass}.log`),
      ...(setting.parallelism === undefined ? {} : { parallelism: setting.parallelism }),
    });
    const cpu0 = stackCpu(ctx.stack);
    let run: Awaited<ReturnType<typeof timedRun>>;
    let cpu: Record<string, number>;
    try {
      run = await timedRun(ctx, master, tag);
    } finally {
      // Read before it stops: the CPU of a process that is gone reads as 0.
      const cpu1 = { ...stackCpu(ctx.stack), 'nfd-master': cpuSeconds(master.process.pid) };
      cpu = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, +(v - (cpu0[k] ?? 0)).toFixed(1)]));
      await stopProcess(master.process);
    }
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const updaters = setting.parallelism ?? NFD_DEFAULT_PARALLELISM;
    const ms = run.ms;
    out.push({
      row: {
        nodes: size,
        pass: setting.pass,
        seconds: ms === undefined ? null : +(ms / 1000).toFixed(2),
        ratioToFloor: ms === undefined ? null : +(ms / ctx.floorMs).toFixed(2),
        nodesPerSecond: ms === undefined ? null : Math.round(size / (ms / 1000)),
        relabelRatio: ms === undefined || ctx.relabelMs === undefined ? null : +(ctx.relabelMs / ms).toFixed(2),
        firstWriteSeconds: run.firstWriteMs === undefined ? null : +(run.firstWriteMs / 1000).toFixed(2),
        writesCounted: writes,
        updaters,
        clientLimit: `${NFD_CLIENT_RATE.qps} QPS / ${NFD_CLIENT_RATE.burst} burst per updater (≤ ${NFD_CLIENT_RATE.qps * updaters} requests/s)`,
        cpuSeconds: cpu,
        publishSeconds: +(publishMs / 1000).toFixed(2),
        args: master.args.join(' '),
        crds: crds.length,
      },
      // One node write each, plus the version annotation on nfd-master's own node.
      problems: [run.why, run.ms !== undefined && writes < size && `${writes} writes, expected at least ${size}`].filter(
        (p): p is string => typeof p === 'string',
      ),
    });
  }
  return out;
}
