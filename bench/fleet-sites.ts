/**
 * A fleet rollout over many sites on one simulated cluster
 * (`npm run bench:fleet-sites`): each site a disjoint set of the cluster's
 * KWOK nodes, with its own SQLite store, its own SDK worker on its own task
 * queue (`relabel-<site>`) under its own identity, all in this process
 * sharing one workflow bundle and one Temporal connection (a process per
 * site would not fit the machine at 200). A centre worker runs the rollout
 * on the fleet queue, the registry holds every site, and the rollout is
 * started through the facade (createFleetRollouts, without its preflight).
 *
 * The baseline in the same run: every site's run started by hand through
 * the facade's runs.start on that site's store, `--concurrency` at a time,
 * applying revision 1. The rollout then applies revision 2 (one label of the
 * base host profile changed, so every node is written again): a canary site,
 * then waves of `--waves`, `--concurrency` sites at once. Reported: both wall
 * times and their ratio, the orchestration's cost per site (wall time and the
 * rollout's history events, every execution of its continue-as-new chain),
 * the process's peak RSS, and whether every node ends with its own site's
 * applied annotation of revision 2. Exits non-zero when a run does not
 * succeed or a node is wrong.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { APPLIED_ANNOTATION } from '../src/core/plan/constants.ts';
import type { SourceFile } from '../src/store/revisions/revision-store.ts';
import type { FleetRolloutResult } from '../src/contracts/fleet-messages.ts';
import { createFleet, type Fleet } from '../src/facade/fleet.ts';
import { createFleetRollouts } from '../src/facade/fleet-rollouts.ts';
import { facadeRunStarter, facadeSiteRuns } from '../src/facade/runs/run-starter.ts';
import { createRuns, type Runs } from '../src/facade/runs/runs.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createDesignCache } from '../src/store/designs/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { buildBundle } from '../src/worker/bundle.ts';
import { createCentreWorker } from '../src/worker/centre.ts';
import { createWorker } from '../src/worker/wiring.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { scaledSite } from '../test/site.ts';
import { pool, registerNodes } from './bench-nodes.ts';
import { report, runBench } from './bench-report.ts';
import { historyFigures } from './history.ts';

const { values: opts } = parseArgs({
  options: {
    sites: { type: 'string', default: '200' },
    nodes: { type: 'string', default: '5' },
    waves: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '20' },
  },
});
const siteCount = Number(opts.sites);
const nodesPerSite = Number(opts.nodes);
const waveSize = Number(opts.waves);
const concurrency = Number(opts.concurrency);
for (const [flag, value] of Object.entries({ sites: siteCount, nodes: nodesPerSite, waves: waveSize, concurrency })) {
  if (!Number.isInteger(value) || value < 1) {
    console.error(`bench: --${flag}: a whole number of at least 1, not "${String(opts[flag as keyof typeof opts])}"`);
    process.exit(2);
  }
}

const NAMESPACE = 'default';
const FLEET_QUEUE = 'relabel-fleet-bench';
/** The label revision 2 changes, in the base host profile every node inherits. */
const CHANGED = { from: '"fluentd": "enabled"', to: '"fluentd": "disabled"' };

interface Site {
  name: string;
  taskQueue: string;
  nodes: string[];
  files: SourceFile[];
  store: Store;
  runs: Runs;
}

/** Commits `files` to `store` as the next revision, tagged as a site action so a run may apply it. */
async function commitRevision(store: Store, files: SourceFile[], message: string): Promise<void> {
  await store.revisions.stage('site', files);
  const revision = await store.revisions.commit({ message });
  await store.revisions.tag(revision.id, 'site-action-success');
}

/** The nodes of `sites` whose applied annotation does not name their own site and `revision`, each with what it has. */
async function wrongNodes(core: CoreV1Api, sites: Site[], revision: number): Promise<string[]> {
  const applied = new Map<string, string>();
  let next: string | undefined;
  do {
    const page = await core.listNode({ limit: 500, ...(next ? { _continue: next } : {}) });
    for (const n of page.items) applied.set(n.metadata?.name ?? '', n.metadata?.annotations?.[APPLIED_ANNOTATION] ?? '');
    next = page.metadata?._continue;
  } while (next);
  const wrong: string[] = [];
  for (const site of sites) {
    for (const name of site.nodes) {
      const fields = (applied.get(name) ?? '').split(',');
      if (!fields.includes(`site=${site.name}`) || !fields.includes(`revision=${revision}`)) wrong.push(`${name}: "${applied.get(name) ?? 'no node'}"`);
    }
  }
  return wrong;
}

type Running = { worker: Worker; running: Promise<void>; close(): Promise<void> };

/** `siteCount` sites, each with its store holding revision 1 and its runs facade; their nodes not yet registered. */
async function makeSites(dir: string, client: Client, stores: Store[]): Promise<Site[]> {
  const sites: Site[] = [];
  for (let i = 1; i <= siteCount; i++) {
    const prefix = `f${String(i).padStart(4, '0')}`;
    const { files, nodes } = scaledSite(prefix, nodesPerSite);
    const name = `${prefix}-site`;
    const store = await openStore(storeUrlOf(dir, name));
    stores.push(store);
    await commitRevision(store, files, 'revision 1');
    const taskQueue = `relabel-${name}`;
    const runs = createRuns({ client, store, designs: createDesignCache(store), taskQueue, namespace: NAMESPACE });
    sites.push({ name, taskQueue, nodes, files, store, runs });
  }
  return sites;
}

const storeUrlOf = (dir: string, site: string) => `sqlite:${join(dir, `${site}.db`)}`;

/** Every site's worker, each on its own queue and store under its own identity, and the centre on the fleet queue; all polling. */
async function startWorkers(stack: StackInfo, dir: string, sites: Site[], native: NativeConnection, workers: Running[]): Promise<void> {
  const workflowBundle = await buildBundle();
  for (const site of sites) {
    const ports = { taskQueue: site.taskQueue, namespace: NAMESPACE };
    const made = await createWorker(
      {
        temporalAddress: stack.temporalAddress,
        namespace: NAMESPACE,
        taskQueue: site.taskQueue,
        identity: `${site.name}/${process.pid}`,
        kubeconfig: stack.kubeconfig,
        storeUrl: storeUrlOf(dir, site.name),
        workflowBundle,
        kubeQps: 0,
        // A watched copy of every Node per worker would be a watch of the whole cluster per site; each plan LISTs instead.
        nodeCacheMax: 0,
        // A site here has a handful of nodes: the defaults' slots, times the sites, would only add pollers.
        maxCachedWorkflows: 20,
        maxConcurrentWorkflowTasks: 10,
        maxConcurrentActivities: 5,
        maxConcurrentLocalActivities: 10,
        // The dev server takes 1,200 long polls a namespace: the SDK's 10 + 10 a worker, times 200, are refused (ResourceExhausted).
        taskPolls: { workflow: 2, activity: 1 },
      },
      { runStarter: facadeRunStarter(ports), siteRuns: facadeSiteRuns(ports), connection: native },
    );
    workers.push({ worker: made.worker, running: made.worker.run(), close: made.close });
  }
  const centre = await createCentreWorker({
    temporalAddress: stack.temporalAddress,
    namespace: NAMESPACE,
    taskQueue: FLEET_QUEUE,
    role: 'centre',
    fleetTaskQueue: FLEET_QUEUE,
    workflowBundle,
  });
  workers.push({ worker: centre.worker, running: centre.worker.run(), close: centre.close });
}

/** The baseline: each site's run started by hand, as an operator would with `relabel update-labels`, as many at once as the rollout takes. */
async function byHand(client: Client, core: CoreV1Api, sites: Site[]): Promise<{ ms: number; ok: boolean }> {
  const failed: string[] = [];
  const t0 = performance.now();
  await pool(sites, concurrency, async (site) => {
    const started = await site.runs.start({ targets: site.nodes });
    const result = (await client.workflow.getHandle(started.workflowId, started.runId).result()) as { status: string };
    if (result.status !== 'success') failed.push(`${site.name}: ${result.status}`);
  });
  const ms = performance.now() - t0;
  const wrong = await wrongNodes(core, sites, 1);
  const ok = failed.length === 0 && wrong.length === 0;
  report(
    { pass: 'by-hand', sites: siteCount, nodes: siteCount * nodesPerSite, concurrency, wallS: +(ms / 1000).toFixed(2), wrongNodes: wrong.length },
    ok,
    [...failed, ...wrong].slice(0, 5).join('; '),
  );
  return { ms, ok };
}

/** The rollout of revision 2 over the registry, canary first, through the facade; its wall time and its histories' events. */
async function rollout(client: Client, core: CoreV1Api, sites: Site[], fleet: Fleet): Promise<{ ms: number; ok: boolean; events: number; bytes: number }> {
  for (const site of sites) {
    const changed = site.files.map((f) => ({ source: f.source, text: f.text.replaceAll(CHANGED.from, CHANGED.to) }));
    if (changed.every((f, i) => f.text === site.files[i]?.text)) throw new Error(`revision 2 of ${site.name} changes nothing: ${CHANGED.from} not found`);
    await commitRevision(site.store, changed, 'revision 2');
  }
  const rollouts = createFleetRollouts({ client, taskQueue: FLEET_QUEUE, fleet });
  const t0 = performance.now();
  const started = await rollouts.start({
    name: `bench-${siteCount}`,
    rollout: { canary: { count: 1 }, waves: { sizes: [waveSize] } },
    run: {},
    siteConcurrency: concurrency,
    by: 'bench',
  });
  const result = (await client.workflow.getHandle(started.workflowId, started.runId).result()) as FleetRolloutResult;
  const ms = performance.now() - t0;
  const history = await historyFigures(client, started.workflowId, started.runId, 0);
  const wrong = await wrongNodes(core, sites, 2);
  const ok = result.status === 'success' && result.counts.succeeded === siteCount && wrong.length === 0;
  report(
    {
      pass: 'rollout',
      sites: siteCount,
      nodes: siteCount * nodesPerSite,
      concurrency,
      waves: started.waves.length,
      wallS: +(ms / 1000).toFixed(2),
      succeeded: result.counts.succeeded,
      executions: history.executions,
      historyEvents: history.events,
      longestExecutionEvents: history.largestExecutionEvents,
      historyKB: +(history.historyBytes / 1024).toFixed(1),
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1),
      wrongNodes: wrong.length,
    },
    ok,
    [result.status, ...result.failures.slice(0, 5).map((f) => `${f.site}: ${f.state} ${f.reason ?? ''}`), ...wrong.slice(0, 5)].join('; '),
  );
  return { ms, ok, events: history.events, bytes: history.historyBytes };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-fleet-'));
  const stackDir = join(dir, 'stack');
  const stack = await startStack({ dir: stackDir, ports: await freePorts(), kwok: { nodes: 0, heartbeatSeconds: 20, leaseSeconds: 40 } });
  const workers: Running[] = [];
  const stores: Store[] = [];
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const native = await NativeConnection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection, namespace: NAMESPACE });
    const core = loadKubeConfig(stack.adminKubeconfig).makeApiClient(CoreV1Api);
    const sites = await makeSites(dir, client, stores);
    const t0 = performance.now();
    await registerNodes(
      loadKubeConfig(stack.adminKubeconfig),
      sites.flatMap((s) => s.nodes),
      { kwok: true },
    );
    console.error(`bench: ${siteCount * nodesPerSite} KWOK nodes Ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const t1 = performance.now();
    await startWorkers(stack, dir, sites, native, workers);
    console.error(`bench: ${siteCount} site workers and the centre polling after ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    const centreStore = await openStore(`sqlite:${join(dir, 'centre.db')}`);
    stores.push(centreStore);
    const fleet = createFleet({ store: centreStore, namespace: NAMESPACE, client });
    for (const site of sites) await fleet.add({ name: site.name, taskQueue: site.taskQueue }, 'bench');

    const hand = await byHand(client, core, sites);
    const rolled = await rollout(client, core, sites, fleet);
    report(
      {
        pass: 'summary',
        sites: siteCount,
        rolloutOverByHand: +(rolled.ms / hand.ms).toFixed(3),
        orchestrationMsPerSite: +((rolled.ms - hand.ms) / siteCount).toFixed(1),
        historyEventsPerSite: +(rolled.events / siteCount).toFixed(2),
        historyBytesPerSite: Math.round(rolled.bytes / siteCount),
        peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      },
      hand.ok && rolled.ok,
    );
  } finally {
    for (const w of workers) w.worker.shutdown();
    await Promise.allSettled(workers.map((w) => w.running));
    for (const w of workers) await w.close().catch(() => undefined);
    await native.close();
    await connection.close();
    for (const store of stores) await store.close();
    await stopStack(stackDir, { purge: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
