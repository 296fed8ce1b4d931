/**
 * A fleet rollout over real sites (`npm run bench:fleet`): `--sites` (8),
 * each its own etcd, kube-apiserver and KWOK with `--nodes` Nodes (500),
 * one Temporal on PostgreSQL, one worker process per site with only its own
 * kubeconfig and store on its own queue, and the centre worker
 * (stack/fleet-sites.ts). Revision 1 is applied first, unmeasured. Then,
 * `--rounds` times: by hand, each site's run of the next revision started
 * through its runs facade as `relabel update-labels` would, wave after wave
 * (a canary site, then `--waves`, each wave's sites at once, at most
 * `--concurrency`); and the fleet rollout of the revision after, the same
 * waves at the same concurrency, through the centre's facade with its
 * preflight, after `fleet plan`, whose per-site counts are checked against
 * what the rollout did to the nodes. Each revision flips one label every
 * node inherits. Reported: each pass's wall time, the rollout's over the
 * by-hand one (target: at most 1.1), the rollout's history, and whether
 * every node ends with its own site's record of the revision, written once
 * by its own site's worker only (each API server's audit log). Exits
 * non-zero when a run does not succeed or a node or a count is wrong.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { APPLIED_ANNOTATION } from '../src/core/plan/constants.ts';
import { parseFleetWaveSizes } from '../src/core/fleet/fleet-waves.ts';
import type { FleetRolloutResult } from '../src/contracts/fleet-messages.ts';
import { SurveyKind } from '../src/contracts/fleet-survey.ts';
import { createFleet } from '../src/facade/fleet.ts';
import { createFleetRollouts, type FleetRollouts } from '../src/facade/fleet-rollouts.ts';
import { createFleetSurveys, type EndedSurvey, type FleetSurveys } from '../src/facade/fleet-survey.ts';
import { createRuns, type Runs } from '../src/facade/runs/runs.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createDesignCache } from '../src/store/designs/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import type { SourceFile } from '../src/store/revisions/revision-store.ts';
import type { Store } from '../src/store/store.ts';
import {
  auditMark,
  auditedNodeWrites,
  siteWorkerUser,
  startCentreWorker,
  startFleetStack,
  startSiteWorker,
  type FleetSiteCluster,
  type FleetStack,
} from '../stack/fleet-sites.ts';
import { scaledSite } from '../test/site.ts';
import { pool } from './bench-nodes.ts';
import { report, runBench } from './bench-report.ts';
import { historyFigures } from './history.ts';

const { values: opts } = parseArgs({
  options: {
    sites: { type: 'string', default: '8' },
    nodes: { type: 'string', default: '500' },
    waves: { type: 'string', default: '3,4' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '1' },
  },
});
const counts = { sites: Number(opts.sites), nodes: Number(opts.nodes), concurrency: Number(opts.concurrency), rounds: Number(opts.rounds) };
for (const [flag, value] of Object.entries(counts)) {
  if (!Number.isInteger(value) || value < 1) {
    console.error(`bench: --${flag}: a whole number of at least 1, not "${String(opts[flag as keyof typeof opts])}"`);
    process.exit(2);
  }
}
const waveSizes = parseFleetWaveSizes(opts.waves);
if (!waveSizes.ok || !('sizes' in waveSizes.value)) {
  console.error(`bench: --waves: site counts such as 3,4${waveSizes.ok ? '' : `: ${waveSizes.message}`}`);
  process.exit(2);
}
const sizes = waveSizes.value.sizes;

const NAMESPACE = 'default';
/** The label every revision after the first flips, in the base host profile every node inherits. */
const FLIP = ['"fluentd": "enabled"', '"fluentd": "disabled"'] as const;
const TARGET_RATIO = 1.1; // the rollout over the same runs by hand, at most

/** The centre's facades the rollout pass uses. */
interface Centre {
  surveys: FleetSurveys;
  rollouts: FleetRollouts;
}

/** What the bench reads of a Node. */
interface NodeSeen {
  labels: Record<string, string>;
  version: string;
  applied: string;
}

interface Site {
  name: string;
  cluster: FleetSiteCluster;
  nodes: string[];
  files: SourceFile[];
  store: Store;
  runs: Runs;
}

/** The sites' waves as the rollout makes them: a canary site, then `sizes` in turn (the last repeating), in name order. */
function wavesOf(sites: Site[]): Site[][] {
  const sorted = [...sites].sort((a, b) => (a.name < b.name ? -1 : 1));
  const waves = [sorted.slice(0, 1)];
  for (let at = 1, i = 0; at < sorted.length; i++) {
    const size = sizes[Math.min(i, sizes.length - 1)] ?? 1;
    waves.push(sorted.slice(at, at + size));
    at += size;
  }
  return waves;
}

/** Commits revision `n` of every site, tagged as a site action: odd ones as the site's documents are, even ones with {@link FLIP} flipped. */
async function commitRevision(sites: Site[], n: number): Promise<void> {
  for (const site of sites) {
    const files = n % 2 === 1 ? site.files : site.files.map((f) => ({ source: f.source, text: f.text.replaceAll(FLIP[0], FLIP[1]) }));
    if (files.every((f, i) => f.text === site.files[i]?.text) && n % 2 === 0) throw new Error(`${site.name}: ${FLIP[0]} is not in its documents`);
    await site.store.revisions.stage('site', files);
    const revision = await site.store.revisions.commit({ message: `revision ${n}` });
    await site.store.revisions.tag(revision.id, 'site-action-success');
  }
}

/** Every node of `site` by name: its labels, resourceVersion and applied record. */
async function nodeLabels(site: Site): Promise<Map<string, NodeSeen>> {
  const core = loadKubeConfig(site.cluster.kube.adminKubeconfig).makeApiClient(CoreV1Api);
  const nodes = new Map<string, NodeSeen>();
  let next: string | undefined;
  do {
    const page = await core.listNode({ limit: 500, ...(next ? { _continue: next } : {}) });
    for (const n of page.items)
      nodes.set(n.metadata?.name ?? '', {
        labels: n.metadata?.labels ?? {},
        version: n.metadata?.resourceVersion ?? '',
        applied: n.metadata?.annotations?.[APPLIED_ANNOTATION] ?? '',
      });
    next = page.metadata?._continue;
  } while (next);
  return nodes;
}

/** What is wrong with `sites` after a pass of `revision` since `marks`: a node without its own site's record of it, or not written exactly once by its own worker. */
async function wrongNodes(sites: Site[], revision: number, marks: number[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const [i, site] of sites.entries()) {
    const applied = new Map([...(await nodeLabels(site))].map(([name, n]) => [name, n.applied]));
    const writes = auditedNodeWrites(site.cluster.kube.auditLog ?? '', marks[i] ?? 0);
    const others = [...writes.keys()].filter((u) => u !== siteWorkerUser(site.name));
    if (others.length > 0) wrong.push(`${site.name}: Nodes written by ${others.join(', ')}`);
    const byNode = writes.get(siteWorkerUser(site.name)) ?? new Map<string, number>();
    for (const name of site.nodes) {
      const fields = (applied.get(name) ?? '').split(',');
      if (!fields.includes(`site=${site.name}`) || !fields.includes(`revision=${revision}`)) wrong.push(`${name}: "${applied.get(name) ?? 'no node'}"`);
      else if (byNode.get(name) !== 1) wrong.push(`${name}: written ${byNode.get(name) ?? 0} time(s)`);
    }
  }
  return wrong;
}

/** Every site's run of its latest revision started by hand, `waves` after one another, each wave's sites at once; the wall time. */
async function byHand(client: Client, waves: Site[][]): Promise<{ ms: number; failed: string[] }> {
  const failed: string[] = [];
  const t0 = performance.now();
  for (const wave of waves) {
    await pool(wave, counts.concurrency, async (site) => {
      const started = await site.runs.start({ targets: site.nodes });
      const result = (await client.workflow.getHandle(started.workflowId, started.runId).result()) as { status: string };
      if (result.status !== 'success') failed.push(`${site.name}: ${result.status}`);
    });
  }
  return { ms: performance.now() - t0, failed };
}

/** Revision `revision` of every site by hand, wave after wave, reported; its wall time. */
async function handPass(client: Client, sites: Site[], waves: Site[][], revision: number, round: number): Promise<number> {
  await commitRevision(sites, revision);
  const marks = sites.map((s) => auditMark(s.cluster.kube.auditLog ?? ''));
  const hand = await byHand(client, waves);
  const wrong = await wrongNodes(sites, revision, marks);
  report(
    {
      pass: 'by-hand',
      round,
      revision,
      sites: counts.sites,
      nodes: counts.sites * counts.nodes,
      waves: waves.length,
      wallS: +(hand.ms / 1000).toFixed(2),
      wrongNodes: wrong.length,
    },
    hand.failed.length === 0 && wrong.length === 0,
    [...hand.failed, ...wrong].slice(0, 5).join('; '),
  );
  return hand.ms;
}

/** How `fleet plan`'s counts for each site differ from what the rollout then did to its nodes (labels gained, changed, lost; nodes written). */
async function planErrors(sites: Site[], planned: EndedSurvey, before: Map<string, Awaited<ReturnType<typeof nodeLabels>>>): Promise<string[]> {
  const wrong: string[] = [];
  for (const site of sites) {
    const truth = { gain: 0, change: 0, lose: 0, changing: 0 };
    const after = await nodeLabels(site);
    for (const [name, was] of before.get(site.name) ?? new Map()) {
      const now = after.get(name) ?? { labels: {}, version: '', applied: '' };
      for (const [k, v] of Object.entries(now.labels)) {
        if (!Object.hasOwn(was.labels, k)) truth.gain++;
        else if (was.labels[k] !== v) truth.change++;
      }
      for (const k of Object.keys(was.labels)) if (!Object.hasOwn(now.labels, k)) truth.lose++;
      if (was.version !== now.version) truth.changing++;
    }
    const plan = planned.page.items.find((a) => a.site === site.name)?.plan;
    const said = { gain: plan?.gain, change: plan?.change, lose: plan?.lose, changing: plan?.changing };
    if (JSON.stringify(said) !== JSON.stringify(truth))
      wrong.push(`${site.name}: fleet plan said ${JSON.stringify(said)}, the nodes show ${JSON.stringify(truth)}`);
  }
  return wrong;
}

/**
 * Revision `revision` of every site by a fleet rollout, reported with its
 * history, after `fleet plan` of it (its counts then checked against what
 * the rollout did); its wall time from the start request (the preflight
 * included).
 */
async function rolloutPass(client: Client, centre: Centre, sites: Site[], revision: number, round: number): Promise<number> {
  await commitRevision(sites, revision);
  const planned = await centre.surveys.ask({ kind: SurveyKind.plan }, { limit: sites.length });
  const before = new Map(await Promise.all(sites.map(async (s) => [s.name, await nodeLabels(s)] as const)));
  const rollouts = centre.rollouts;
  const marks = sites.map((s) => auditMark(s.cluster.kube.auditLog ?? ''));
  const t0 = performance.now();
  const started = await rollouts.start({
    name: `bench-${round}`,
    rollout: { canary: { count: 1 }, waves: { sizes } },
    run: {},
    siteConcurrency: counts.concurrency,
    by: 'bench',
  });
  const result = (await client.workflow.getHandle(started.workflowId, started.runId).result()) as FleetRolloutResult;
  const ms = performance.now() - t0;
  const history = await historyFigures(client, started.workflowId, started.runId, 0);
  const wrong = [...(await wrongNodes(sites, revision, marks)), ...(await planErrors(sites, planned, before))];
  const ok = result.status === 'success' && result.counts.succeeded === counts.sites && wrong.length === 0;
  report(
    {
      pass: 'rollout',
      round,
      revision,
      sites: counts.sites,
      nodes: counts.sites * counts.nodes,
      waves: started.waves.length,
      wallS: +(ms / 1000).toFixed(2),
      succeeded: result.counts.succeeded,
      historyEvents: history.events,
      historyKB: +(history.historyBytes / 1024).toFixed(1),
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1),
      wrongNodes: wrong.length,
    },
    ok,
    ok ? '' : [result.status, ...result.failures.slice(0, 5).map((f) => `${f.site}: ${f.state} ${f.reason ?? ''}`), ...wrong.slice(0, 5)].join('; '),
  );
  return ms;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-fleet8-'));
  const specs = Array.from({ length: counts.sites }, (_, i) => {
    const prefix = `b${i}`;
    return { prefix, name: `${prefix}-site`, ...scaledSite(prefix, counts.nodes) };
  });
  let fleetStack: FleetStack | undefined;
  const processes: (ChildProcess | undefined)[] = [];
  const stores: Store[] = [];
  let connection: Connection | undefined;
  try {
    const t0 = performance.now();
    fleetStack = await startFleetStack({
      dir,
      sites: specs.map((s) => ({ site: s.name, nodes: s.nodes })),
      // The benchmark measures the runs, not the simulated kubelets: one status heartbeat a Node every ten minutes.
      heartbeatSeconds: 600,
      log: (line) => console.error(`bench: ${line}`),
    });
    connection = await Connection.connect({ address: fleetStack.temporalAddress });
    const client = new Client({ connection, namespace: NAMESPACE });
    const sites: Site[] = [];
    for (const [i, spec] of specs.entries()) {
      const cluster = fleetStack.sites[i] as FleetSiteCluster;
      const url = `sqlite:${join(dir, `${spec.name}.db`)}`;
      const store = await openStore(url);
      stores.push(store);
      const runs = createRuns({ client, store, designs: createDesignCache(store), taskQueue: cluster.taskQueue, namespace: NAMESPACE });
      sites.push({ name: spec.name, cluster, nodes: spec.nodes, files: spec.files, store, runs });
    }
    await commitRevision(sites, 1);
    for (const site of sites) processes.push(await startSiteWorker(fleetStack, site.cluster, `sqlite:${join(dir, `${site.name}.db`)}`));
    processes.push(await startCentreWorker(fleetStack));
    console.error(
      `bench: ${counts.sites} sites of ${counts.nodes} Nodes, their workers and the centre's up in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const centreStore = await openStore(`sqlite:${join(dir, 'centre.db')}`);
    stores.push(centreStore);
    const fleet = createFleet({ store: centreStore, namespace: NAMESPACE, client });
    for (const site of sites) await fleet.add({ name: site.name, taskQueue: site.cluster.taskQueue }, 'bench');
    const fleetQueue = 'relabel-fleet';
    const surveys = createFleetSurveys({ client, taskQueue: fleetQueue, fleet });
    const centre: Centre = { surveys, rollouts: createFleetRollouts({ client, taskQueue: fleetQueue, fleet, surveys }) };
    const waves = wavesOf(sites);

    const warm = await byHand(client, [sites]);
    if (warm.failed.length > 0) throw new Error(`revision 1 did not apply: ${warm.failed.join('; ')}`);
    console.error(`bench: revision 1 applied to every site in ${(warm.ms / 1000).toFixed(1)} s (not measured)`);

    const ratios: number[] = [];
    let revision = 1;
    for (let round = 1; round <= counts.rounds; round++) {
      revision += 2;
      const hand = await handPass(client, sites, waves, revision - 1, round);
      const rolled = await rolloutPass(client, centre, sites, revision, round);
      ratios.push(rolled / hand);
    }
    const worst = Math.max(...ratios);
    report(
      {
        pass: 'summary',
        sites: counts.sites,
        nodesPerSite: counts.nodes,
        rounds: counts.rounds,
        rolloutOverByHand: ratios.map((r) => +r.toFixed(3)),
        target: TARGET_RATIO,
        met: worst <= TARGET_RATIO,
      },
      true,
    );
  } finally {
    for (const p of processes) p?.kill('SIGTERM');
    await connection?.close();
    for (const store of stores) await store.close();
    await fleetStack?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
