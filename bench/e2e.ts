/**
 * `npm run bench:e2e -- [--nodes 500,5000] [--concurrency 50] [--passes …] [--continue-as-new-after N] [--heartbeat 20] [--idle-seconds 0] [--fresh-nodes] [--fresh-temporal] [--apiserver-profile DIR] [--join-kube-qps 50] [--join-delay-ms 25] [--temporal dev,postgres]`:
 * update_labels end to end (`--search-attributes off`: runs and children
 * without relabel's search attributes, to measure what they cost), on a local stack of its own per size (real
 * Temporal, real kube-apiserver, and by default the simulated cluster: KWOK
 * plays every node's kubelet, posting its status every `--heartbeat`
 * seconds, with the real controller manager and scheduler; `--heartbeat 0`
 * runs on plain nodes nobody else writes), against the floor measured in the
 * same run. `--temporal` names the Temporals the engine floor and relabel's
 * passes run on, one after the other on the same nodes (bench/bench-temporal.ts):
 * `dev` (the stack's dev server, the default) and `postgres` (temporal-server
 * on PostgreSQL, started beside it); every row names its Temporal, and the
 * summary ends with relabel's ratio to the engine floor on each. Join and NFD
 * run once, on the first.
 *
 * Per size: register the nodes (Ready, with KWOK); `floor` (a plain client
 * with kept-alive connections: one paginated LIST, then one
 * resourceVersion-guarded merge patch of 16 labels and an annotation per
 * node, `concurrency` at once, a patch refused by a heartbeat sent again
 * after a GET; measured twice, the faster counts); `engine-floor` (bench/engine-floor: a minimal Temporal workflow
 * on the same stack and worker settings, one child per node writing it with
 * one guarded patch in a local activity: relabel's ratio to it is its own
 * overhead; `engine-floor-again`, not by default: the same once more after
 * relabel's passes, on the nodes as they left them, since the first pass
 * meets the freshest stack and the smallest nodes; the summary gives
 * relabel's time over each and over their mean); then relabel, each pass with
 * a fresh worker process (its peak RSS is read from /proc):
 * - `all`: every node changed; `noop`: nothing changed; `noop-warm`: nothing
 *   changed, timed on a worker that ran the same no-op just before (as a
 *   long-lived worker has planned before: its code compiled, its connections
 *   and the revision's design loaded); `one-percent`: a new revision
 *   changing every 100th node;
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
 * - `members`, `members-noop`, `seed-members` (bench/member-passes.ts; not
 *   by default): the same nodes as node-set members. Every node registers
 *   with a Cluster API label (`cluster.x-k8s.io/deployment-name`); a
 *   revision names none of them, only NodeSets (one per kind of node of the
 *   sample site) selecting them by it, each giving its members what their
 *   BaremetalNodes gave them plus a `bench-round` value no named revision
 *   gives, and the run targets the sets. `members`: every node changed
 *   (after the named passes, on the same nodes); `members-noop`: nothing
 *   changed; `seed-members`: the nodes created already as the sets want
 *   (with `members-noop` for the large no-op: `--heartbeat 0 --passes
 *   seed-members,members-noop`). Checked and reported as `all` and `noop`
 *   are; the summary adds members ÷ named for every node changed.
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
 *
 * What relabel's extra cost is made of, per pass, for the engine floor and
 * relabel's passes alike (bench/write-figures.ts; read before and after the
 * timed run): `nodeWrites.server`, the PATCH and PUT requests on Nodes the
 * API server answered and the request body bytes it received (its body
 * size histogram does not tell a status heartbeat from a write, so on the
 * simulated cluster `statusWrites` are in `bodies` too); `nodeWrites.worker`,
 * the Node writes the worker sent, their bytes, JSON Patch operations and
 * `test`s, per write too, and the operations per write by kind and target
 * (`test labels`, `add annotations`, …; bench/write-meter.ts, preloaded in
 * every worker);
 * `nodeSize`, the JSON bytes of 50 nodes after the pass, averaged, whole and
 * by part (labels, annotations, managedFields, status), and `grownBytes`
 * over the pass (the passes write the same nodes one after the other);
 * `temporalServer`, persistence operations per changed node by operation and
 * by service, visibility operations by operation; `parentEventsPerChild`,
 * `parentBytesPerChild`, `parentEventTypesPerChild` from the parent's
 * histories, and `child`: 5 children's events, history bytes, input, result
 * and other payload bytes, averaged. The summary shows bytes, operations and
 * tests per write (`writeB`, `ops`, `tests`), `nodeKB`, `visOps`,
 * `parentEv`, `childInB` and `childOutB`.
 *
 * `--fresh-nodes`: before each engine floor and `all`, the nodes are deleted
 * and registered anew (rows `fresh nodes before <pass>`), so that each meets
 * the nodes as they registered: without it the passes write the same nodes
 * one after the other, and each later pass meets larger nodes (labels,
 * annotations, managedFields) whose heartbeats cost the cluster more.
 *
 * `--fresh-temporal` (the dev server only): before each engine floor and
 * `all`, the stack's dev server is restarted on an empty database (rows
 * `fresh Temporal before <pass>`), so that no timed pass meets the earlier
 * passes' workflows in it.
 *
 * `--idle-seconds N` (default 0: none): before the engine floors and
 * `all`, N quiet seconds, the CPU each stack process uses a second then and
 * the nodes' size (rows `idle before <pass>`, bench/idle.ts): what the
 * heartbeats and controllers take from the two cores at that node size.
 *
 * `--apiserver-profile DIR`: the API server's CPU profile of the first 30 s
 * of each engine floor and `all`, in DIR/<pass>.pprof (bench/apiserver-profile.ts).
 *
 * Profiling: `BENCH_WORKER_NODE_OPTIONS` adds Node flags to every worker
 * forked, `{pass}` replaced by the pass's name (`engine-floor`,
 * `all-changed`, …): with `--cpu-prof --cpu-prof-dir=/tmp/prof/{pass}` each
 * pass's worker writes its profiles (its main thread's and each workflow
 * thread's) there when it stops; `node bench/profile-top.ts --top 30
 * /tmp/prof/all-changed` prints the functions with the most self time over
 * them (`--by file`: by source file). A profile spans the worker's life
 * (its start, the run, its stop; relabel's worker bundles its workflows in
 * a child process, whose profile lands there too): `--window FROM,TO` with
 * the pass row's `profileWindowUs` keeps the timed run only. The profiler
 * slows the worker: time a run without it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createRuns } from '../src/facade/runs/runs.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { createDesignCache } from '../src/store/designs/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { benchSite, commitSite } from './bench-site.ts';
import { benchCore, floor, registerNodes, renewNodes } from './bench-nodes.ts';
import { engineFloorPass } from './engine-floor/pass.ts';
import { reportIdle } from './idle.ts';
import { apiserverProfile } from './apiserver-profile.ts';
import { nfdPasses } from './nfd/pass.ts';
import { joinPasses } from './joins/pass.ts';
import { concurrency, continueAsNewAfter, freshNodes, freshTemporal, heartbeat, opts, passes, sizes, temporals } from './bench-options.ts';
import { report, reportContext, rows, runBench } from './bench-report.ts';
import { printSummary } from './bench-summary.ts';
import { restartEmptyTemporal, withBenchTemporal, type BenchTemporal } from './bench-temporal.ts';
import { relabelPasses, startWorker, type SizeContext } from './relabel-passes.ts';
import { memberBench, memberPasses, memberPassesWanted, type MemberBench } from './member-passes.ts';

/** The plain client's floor, twice, the faster counting (the best a plain client does here); its row, and its time. */
async function floorPass(core: CoreV1Api, prefix: string, size: number): Promise<number> {
  const tries = [await floor(core, prefix, concurrency), await floor(core, prefix, concurrency)];
  const floorMs = Math.min(...tries.map((f) => f.ms));
  const row = {
    nodes: size,
    pass: 'floor',
    seconds: +(floorMs / 1000).toFixed(2),
    ratioToFloor: 1,
    nodesPerSecond: Math.round(size / (floorMs / 1000)),
    tries: tries.map((f) => +(f.ms / 1000).toFixed(2)),
    refused: tries.map((f) => f.conflicts),
  };
  report(
    row,
    tries.every((f) => f.nodes === size),
  );
  return floorMs;
}

/** What one size's passes share on every Temporal. */
type SizeRun = Omit<SizeContext, 'runs' | 'client' | 'taskQueue' | 'engineFloorMs' | 'round' | 'stack'> & {
  stack: StackInfo;
  dir: string;
  kc: KubeConfig;
  /** The member passes' state, when any is asked for. */
  members?: MemberBench;
};

/**
 * The engine floor and relabel's passes on one Temporal (`first`: also the
 * join and NFD passes, which run once), its kind in every row.
 */
async function temporalPasses(run: SizeRun, t: BenchTemporal, first: boolean): Promise<void> {
  const { size, prefix, core, store, designs, storeUrl, dir, kc, floorMs, site } = run;
  const { stack, client, taskQueue } = t;
  const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default', searchAttributes: opts['search-attributes'] !== 'off' });
  const engineFloor = async (pass: string): Promise<number> => {
    await run.freshen?.(pass);
    await reportIdle({ stack, size, prefix }, pass);
    const profiled = apiserverProfile(stack, pass);
    const ef = await engineFloorPass({
      stack,
      client,
      taskQueue: t.engineFloorTaskQueue,
      core,
      size,
      prefix,
      concurrency,
      kubeQps: Number(opts['kube-qps']),
      floorMs,
      othersWrite: heartbeat > 0,
      pass,
      ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}),
    });
    await profiled;
    report(ef.row, ef.problems.length === 0, ef.problems.join('; '));
    return ef.ms;
  };
  const engineFloorMs = passes.includes('engine-floor') ? await engineFloor('engine-floor') : Number.NaN;
  const ctx = { ...run, stack, runs, client, taskQueue, engineFloorMs, ...(first ? {} : { round: t.kind }) };
  await relabelPasses(ctx);
  // Once more after relabel's passes, on the nodes as they left them (or, with --fresh-nodes, registered
  // anew): the first pass meets a fresh stack and the smallest nodes, the last the largest; the summary
  // sets relabel beside both.
  if (passes.includes('engine-floor-again')) await engineFloor('engine-floor-again');
  if (run.members) await memberPasses(ctx, run.members);
  if (!first) return;
  if (passes.includes('join')) {
    const [joinQps, batchDelayMs] = [opts['join-kube-qps'], Number(opts['join-delay-ms'])];
    const joined = await joinPasses({
      stack,
      kc,
      client,
      store,
      designs,
      runs,
      taskQueue,
      dir,
      size,
      registered: site.nodes,
      prefix,
      concurrency,
      kubeQps: Number(joinQps),
      batchDelayMs,
      startWorker: () => startWorker(stack, storeUrl, taskQueue, joinQps, 'join'),
    });
    for (const j of joined) report(j.row, j.problems.length === 0, j.problems.join('; '));
  }
  if (passes.includes('nfd')) {
    const relabel = rows.find((r) => r.nodes === size && r.pass === 'all-changed' && r.temporal === t.kind && typeof r.seconds === 'number');
    const nfd = await nfdPasses({
      stack,
      kc,
      dir,
      nodes: site.nodes,
      prefix,
      concurrency,
      kubeQps: Number(opts['kube-qps']),
      floorMs,
      ...(relabel ? { relabelMs: (relabel.seconds as number) * 1000 } : {}),
    });
    for (const n of nfd) report(n.row, n.problems.length === 0, n.problems.join('; '));
  }
}

async function benchSize(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-'));
  // With heartbeats, KWOK plays the nodes' kubelets (status every `heartbeat` s; no Leases, which touch no Node).
  const kwok = heartbeat > 0 ? { nodes: 0, heartbeatSeconds: heartbeat, leaseSeconds: 0 } : undefined;
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts(), ...(kwok ? { kwok } : {}) });
  let store: Store | undefined;
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
    // With member passes every node registers with its MachineDeployment's label, which their node sets select.
    const members = memberBench(site.files, site.nodes);
    const seeded = seed ? design : members?.seed;
    const labels = members ? { labels: members.site.labels } : {};
    const register = () => registerNodes(kc, site.nodes, { kwok: kwok !== undefined, ...(seeded ? { design: seeded } : {}), ...labels });
    const t0 = performance.now();
    await register();
    console.log(
      `# ${size} nodes registered${kwok ? ` and Ready, heartbeating every ${heartbeat} s,` : ''} in ${Math.round(performance.now() - t0)} ms${seed ? ' (already as desired)' : seeded ? ' (already as their node sets want)' : ''}`,
    );

    const floorMs = passes.includes('floor') ? await floorPass(core, prefix, size) : Number.NaN;
    const withMembers = members ? { members, registrationLabels: members.site.labels } : {};
    // The first timed pass meets the nodes just registered, unless the plain client's floor wrote them.
    let untouched = !passes.includes('floor');
    const freshen = async (pass: string) => {
      if (freshTemporal) {
        const ms = await restartEmptyTemporal(stack);
        report({ nodes: size, pass: `fresh Temporal before ${pass}`, restartSeconds: +(ms / 1000).toFixed(1) }, true);
      }
      if (!freshNodes) return;
      if (untouched) {
        untouched = false;
        return;
      }
      const ms = await renewNodes(kc, site.nodes, prefix, register);
      report({ nodes: size, pass: `fresh nodes before ${pass}`, registeredSeconds: +(ms / 1000).toFixed(1) }, true);
    };
    const fresh = freshNodes || freshTemporal ? { freshen } : {};
    const run: SizeRun = { stack, dir, kc, core, store, designs, storeUrl, floorMs, size, site, prefix, design, seed, ...withMembers, ...fresh };
    // One Temporal at a time, each with its own workers and task queues, on the same nodes.
    for (const [i, kind] of temporals.entries()) {
      reportContext({ temporal: kind });
      await withBenchTemporal(stack, dir, kind, (t) => temporalPasses(run, t, i === 0));
    }
    reportContext({});
  } finally {
    await store?.close();
    await stopStack(join(dir, 'stack'), { purge: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // A combination of member passes that cannot measure what it says is refused before any stack starts.
  memberPassesWanted();
  for (const size of sizes) await benchSize(size);
  printSummary(temporals);
}

runBench(main);
