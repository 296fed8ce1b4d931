/**
 * Node Feature Discovery beside the join pass's burst: nfd-master already
 * running at its defaults, the same number of new Nodes created as fast as
 * the bench can, each followed at once by its NodeFeature (what nfd-worker
 * would publish at best, with no pod to schedule, start or scan), timed
 * from each Node's creation until nfd-master's labels are seen on it. The
 * nodes are named apart from relabel's joiners: the design does not name
 * them, so the join watcher counts them unmanaged and writes none.
 */
import { join } from 'node:path';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { kwokNode } from '../../stack/kwok.ts';
import { stopProcess } from '../../stack/processes.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { pool } from '../bench-nodes.ts';
import { floorValues } from '../floor-labels.ts';
import { NFD_DEFAULT_PARALLELISM, nfdMasterPath, nodesUpdated, startNfdMaster } from '../nfd/master.ts';
import { MASTER_NODE, NFD_NAMESPACE, prepareNfd } from '../nfd/pass.ts';
import { publishNodeFeatures } from '../nfd/setup.ts';
import { carries, type LabelWatch } from './label-watch.ts';

/** What the NFD burst needs of the pass. */
export interface NfdBurstContext {
  stack: StackInfo;
  kc: KubeConfig;
  core: CoreV1Api;
  /** Directory for nfd-master's log. */
  dir: string;
  watch: LabelWatch;
  /** Nodes to create: not in relabel's design. */
  names: readonly string[];
  /** Nodes created at once. */
  width: number;
}

/** The burst's figures: per-node milliseconds from creation to labelled, and the rest of its row. */
export interface NfdBurst {
  latencies: number[];
  /** From the first creation until the last node was seen labelled (or the deadline). */
  ms: number;
  createMs: number;
  writes: number;
  missing: string[];
  updaters: number;
  args: string;
}

/** Seconds nfd-master is given after its metrics answer, for its informers' first sync. */
const SETTLE_MS = 2000;

/** Starts nfd-master, waits until it runs, creates the nodes and their NodeFeatures, and times each until labelled; nfd-master is stopped after. */
export async function nfdBurst(ctx: NfdBurstContext): Promise<NfdBurst> {
  nfdMasterPath();
  await prepareNfd(ctx.kc);
  const master = await startNfdMaster({
    kubeconfig: ctx.stack.adminKubeconfig,
    nodeName: MASTER_NODE,
    namespace: NFD_NAMESPACE,
    log: join(ctx.dir, 'nfd-join-burst.log'),
  });
  try {
    for (let i = 0; (await nodesUpdated(master)) === undefined; i++) {
      if (i > 300) throw new Error(`nfd-master's metrics did not answer within 30 s (log: ${master.process.log})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const { labels } = floorValues(`join${Date.now().toString(36)}`);
    for (const name of ctx.names) ctx.watch.expect(name, carries(labels));
    const created = new Map<string, number>();
    const writes0 = await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 });
    const t0 = performance.now();
    await pool(ctx.names, ctx.width, async (name) => {
      created.set(name, performance.now());
      await ctx.core.createNode({ body: kwokNode(name) });
      await publishNodeFeatures(ctx.kc, NFD_NAMESPACE, [name], labels);
    });
    const createMs = performance.now() - t0;
    // Generous: at its defaults nfd-master writes about 25 nodes a second.
    const arrivals = await ctx.watch.until(ctx.names, t0 + 60_000 + ctx.names.length * 200);
    const ms = (arrivals.size === ctx.names.length ? Math.max(...[...arrivals.values()].map((a) => a.at)) : performance.now()) - t0;
    const writes = (await nodeRequestCount(ctx.stack.adminKubeconfig, 'PATCH', { code: 200 })) - writes0;
    return {
      latencies: [...arrivals].map(([name, a]) => a.at - (created.get(name) ?? t0)),
      ms,
      createMs,
      writes,
      missing: ctx.names.filter((n) => !arrivals.has(n)),
      updaters: NFD_DEFAULT_PARALLELISM,
      args: master.args.join(' '),
    };
  } finally {
    await stopProcess(master.process);
  }
}
