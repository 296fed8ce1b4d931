/**
 * A fleet of eight real sites: each its own etcd, kube-apiserver and KWOK
 * (stack/fleet-sites.ts), one Temporal on PostgreSQL, one worker process per
 * site holding only its own site's kubeconfig (a user of its own) and store
 * on `relabel-<site>`, and the centre worker holding neither. A rollout
 * from the CLI, a canary then waves of 3 and 4 sites, leaves every node of
 * every site as its design wants, each written once, and each site's API
 * server's audit log shows writes to its Nodes from its own worker's user
 * only; `fleet plan`'s per-site counts beforehand are what the rollout then
 * did to the nodes. A second rollout goes through a site's worker SIGKILLed
 * and the Temporal server restarted: that site waits, then finishes once its
 * worker is back, the other sites go on. A DaemonSet whose pods can never
 * be Ready on the canary site makes that site's run halt at its health
 * gate: the fleet halts naming the site and why; `fleet resume` takes it
 * and the fleet on, `fleet abort` ends the site's run at its gate and
 * starts no other site.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { parseAllDocuments } from 'yaml';
import { fleetRolloutWorkflowId, type FleetRolloutResult, type FleetProgress } from '../../src/contracts/fleet-messages.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import type { EndedSurvey } from '../../src/facade/fleet-survey.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import type { SourceFile } from '../../src/store/revisions/revision-store.ts';
import type { Store } from '../../src/store/store.ts';
import { auditMark, auditedNodeWrites, siteWorkerUser, startCentreWorker, startFleetStack, startSiteWorker, type FleetStack } from '../../stack/fleet-sites.ts';
import { exits, relabelCli, uniqueSuffix } from '../helpers.ts';
import { createPauseDaemonSet } from '../kit/kube/daemon-sets.ts';
import { scaledSite, storeWithSite } from '../site.ts';

const SITES = 8;
const NODES = 20;

/** `files` with every node given the label `fleet-round: round` (its owner data), so that a new revision changes every node once. */
function withRound(files: SourceFile[], round: string): SourceFile[] {
  return files.map((f) => {
    if (f.source !== 'nodes.yaml') return f;
    const docs = parseAllDocuments(f.text).map((d) => d.toJS() as Record<string, any>);
    for (const doc of docs) doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, 'fleet-round': round };
    return { source: f.source, text: docs.map((d) => `---\n${JSON.stringify(d)}\n`).join('') };
  });
}

describe('a fleet of eight sites, each its own cluster, store and worker', () => {
  const suffix = uniqueSuffix();
  const dir = mkdtempSync(join(tmpdir(), 'relabel-fleet8-'));
  const specs = Array.from({ length: SITES }, (_, i) => {
    const prefix = `f${i}${suffix}`;
    const built = scaledSite(prefix, NODES);
    return { site: `${prefix}-site`, prefix, files: built.files, nodes: built.nodes };
  });
  let fleet: FleetStack;
  const stores: { url: string; store: Store }[] = [];
  const workers: (ChildProcess | undefined)[] = [];
  let centre: ChildProcess | undefined;
  let client: Client;
  let connection: Connection;
  const centreUrl = `sqlite:${join(dir, 'centre.db')}`;
  const cli = (...args: string[]) => relabelCli(['--address', fleet.temporalAddress, '--store', centreUrl, 'fleet', ...args], {}, { timeoutMs: 180_000 });
  const coreOf = (i: number) => loadKubeConfig(fleet.sites[i]?.kube.adminKubeconfig).makeApiClient(CoreV1Api);
  const nodesOf = async (i: number) =>
    new Map(await Promise.all((specs[i]?.nodes ?? []).map(async (n) => [n, await coreOf(i).readNode({ name: n })] as const)));

  before(async () => {
    const t0 = Date.now();
    fleet = await startFleetStack({
      dir,
      // The canary site runs the DaemonSet controller and the scheduler: its health gate has pods to wait for.
      sites: specs.map((s, i) => ({ site: s.site, nodes: s.nodes, controlPlane: i === 0 })),
      heartbeatSeconds: 60,
      log: (l) => console.log(`# fleet: ${l}`),
    });
    console.log(`# fleet: ${SITES} sites and Temporal up in ${Date.now() - t0} ms`);
    for (const [i, s] of specs.entries()) {
      stores.push(await storeWithSite(s.files));
      workers.push(await startSiteWorker(fleet, fleet.sites[i] as FleetStack['sites'][number], stores[i]?.url ?? ''));
    }
    centre = await startCentreWorker(fleet);
    console.log(`# fleet: ${SITES} site workers and the centre's ready ${Date.now() - t0} ms after the start`);
    connection = await Connection.connect({ address: fleet.temporalAddress });
    client = new Client({ connection });
    for (const [i, s] of specs.entries()) exits(await cli('sites', 'add', s.site, '--queue', fleet.sites[i]?.taskQueue ?? '', '--label', `n=${i}`), 0);
  });
  after(async () => {
    for (const w of [...workers, centre]) w?.kill('SIGKILL');
    await connection?.close();
    for (const s of stores) await s.store.close();
    await fleet?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every node of every site as its design wants; each written exactly once since `marks`, by its own site's worker only. */
  async function assertRolledOut(marks: number[], files: (i: number) => SourceFile[]): Promise<void> {
    for (const [i, spec] of specs.entries()) {
      const design = validateSite(files(i));
      assert.ok(design.ok);
      for (const [name, node] of await nodesOf(i)) {
        for (const [k, v] of Object.entries(design.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
      }
      const writes = auditedNodeWrites(fleet.sites[i]?.kube.auditLog ?? '', marks[i]);
      assert.deepEqual([...writes.keys()], [siteWorkerUser(spec.site)], `${spec.site}: only its own worker wrote its Nodes`);
      const byNode = writes.get(siteWorkerUser(spec.site)) as Map<string, number>;
      assert.deepEqual(
        spec.nodes.filter((n) => byNode.get(n) !== 1),
        [],
        `${spec.site}: each node written once (${JSON.stringify(Object.fromEntries(byNode))})`,
      );
    }
  }

  it("rolls a canary then waves of 3 and 4 sites out, as fleet plan said: every node as desired, written once, by its own site's worker", async () => {
    const planned = JSON.parse(exits(await cli('plan', '-o', 'json'), 0).stdout) as EndedSurvey;
    assert.deepEqual([planned.result.sites, planned.result.answered], [SITES, SITES]);
    const before = await Promise.all(specs.map((_, i) => nodesOf(i)));
    const marks = fleet.sites.map((s) => auditMark(s.kube.auditLog ?? ''));
    const name = `eight-${suffix}`;
    const started = JSON.parse(exits(await cli('rollout', name, '--canary', '1', '--waves', '3,4', '-o', 'json'), 0).stdout) as { waves: { sites: number }[] };
    assert.deepEqual(
      started.waves.map((w) => w.sites),
      [1, 3, 4],
    );
    const result = (await client.workflow.getHandle(fleetRolloutWorkflowId(name)).result()) as FleetRolloutResult;
    assert.deepEqual([result.status, result.counts.succeeded, result.waves], ['success', SITES, 3], JSON.stringify(result));
    await assertRolledOut(marks, (i) => specs[i]?.files ?? []);
    for (const [i, spec] of specs.entries()) {
      const plan = planned.page.items.find((a) => a.site === spec.site)?.plan;
      const after = await nodesOf(i);
      const truth = { gain: 0, change: 0, lose: 0, written: 0 };
      for (const [n, was] of before[i] as Map<string, V1Node>) {
        const a = was.metadata?.labels ?? {};
        const b = after.get(n)?.metadata?.labels ?? {};
        for (const k of Object.keys(b)) {
          if (!Object.hasOwn(a, k)) truth.gain++;
          else if (a[k] !== b[k]) truth.change++;
        }
        for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) truth.lose++;
        if (was.metadata?.resourceVersion !== after.get(n)?.metadata?.resourceVersion) truth.written++;
      }
      assert.deepEqual({ gain: plan?.gain, change: plan?.change, lose: plan?.lose, written: plan?.changing }, truth, `${spec.site}: fleet plan's counts`);
    }
  });

  it("goes through a site's worker SIGKILLed and the Temporal server restarted: that site finishes once its worker is back, the others go on", async () => {
    const round = (i: number) => withRound(specs[i]?.files ?? [], '2');
    for (const [i, s] of stores.entries()) {
      await s.store.revisions.stage('site', round(i));
      const revision = await s.store.revisions.commit({ message: 'round 2' });
      await s.store.revisions.tag(revision.id, 'site-action-success');
    }
    const marks = fleet.sites.map((s) => auditMark(s.kube.auditLog ?? ''));
    const name = `faults-${suffix}`;
    exits(await cli('rollout', name, '--canary', '1', '--waves', '3,4'), 0);
    // The last site is in the last wave: killed once the rollout has started (a rollout with a site no worker serves is
    // refused), before the rollout reaches it, it waits there while the canary and wave 2 go on.
    const killed = SITES - 1;
    workers[killed]?.kill('SIGKILL');
    workers[killed] = undefined;
    const handle = client.workflow.getHandle(fleetRolloutWorkflowId(name));
    const progress = async () => handle.query<FleetProgress>('fleetProgress');
    for (let p = await progress(); p.counts.succeeded < 1; p = await progress()) await sleep(250);
    await fleet.restartTemporal(2000);
    for (let p = await progress(); p.counts.succeeded < SITES - 1; p = await progress()) await sleep(500);
    const waiting = await progress();
    assert.deepEqual([waiting.counts.succeeded, waiting.running], [SITES - 1, [specs[killed]?.site]], 'the others went on; the killed site waits');
    await sleep(5000);
    workers[killed] = await startSiteWorker(fleet, fleet.sites[killed] as FleetStack['sites'][number], stores[killed]?.url ?? '');
    const result = (await handle.result()) as FleetRolloutResult;
    assert.deepEqual([result.status, result.counts.succeeded], ['success', SITES], JSON.stringify(result));
    await assertRolledOut(marks, round);
    const status = exits(await cli('status', name), 0).stdout;
    assert.match(status, new RegExp(`success: ${SITES} of ${SITES} site\\(s\\) succeeded`));
  });

  it("halts the fleet when the canary site's run halts at its health gate, naming why; resume goes on, abort ends that run there", async () => {
    const apps = loadKubeConfig(fleet.sites[0]?.kube.adminKubeconfig).makeApiClient(AppsV1Api);
    const ds = { name: `never-ready-${suffix}`, namespace: 'default' };
    /** Every node of the canary site may run the DaemonSet's pod (each asking more CPU than a KWOK node has: never Ready), or none. */
    const select = (every: boolean) =>
      apps.patchNamespacedDaemonSet({
        ...ds,
        body: [{ op: 'replace', path: '/spec/template/spec/nodeSelector', value: every ? {} : { 'relabel-test/none': 'x' } }],
      });
    await createPauseDaemonSet(apps, ds, { nodeSelector: {}, cpu: '100' });
    const roundOf = (r: string) => (i: number) => withRound(specs[i]?.files ?? [], r);
    const commitRound = async (r: string) => {
      for (const [i, s] of stores.entries()) {
        await s.store.revisions.stage('site', roundOf(r)(i));
        await s.store.revisions.tag((await s.store.revisions.commit({ message: `round ${r}` })).id, 'site-action-success');
      }
    };
    const rollout = (name: string) => cli('rollout', name, '--canary', '1', '--waves', '3,4', '--site-waves', 'rack', '--site-health-timeout', '5');
    const haltedAt = async (handle: ReturnType<Client['workflow']['getHandle']>) => {
      for (let p = await handle.query<FleetProgress>('fleetProgress'); ; p = await handle.query<FleetProgress>('fleetProgress')) {
        if (p.waiting === 'halted') return p;
        await sleep(500);
      }
    };
    const canary = specs[0]?.site ?? '';
    const why = new RegExp(
      `^1 site\\(s\\) failed or halted, more than the 0 allowed; site ${canary}'s run halted: wave 1 \\(rack [^)]+\\): the health gate timed out after 5 s: \\d+ DaemonSet pod\\(s\\) not as they should be`,
    );

    await commitRound('3');
    const marks = fleet.sites.map((s) => auditMark(s.kube.auditLog ?? ''));
    const resumed = `halt-${suffix}`;
    exits(await rollout(resumed), 0);
    const handle = client.workflow.getHandle(fleetRolloutWorkflowId(resumed));
    const halted = await haltedAt(handle);
    assert.match(halted.reason ?? '', why);
    assert.deepEqual([halted.running, halted.counts.pending, halted.halted?.map((h) => h.site)], [[canary], SITES - 1, [canary]]);
    assert.match(exits(await cli('status', resumed), 0).stdout, new RegExp(`halted site runs:\\n  ${canary}: wave 1 \\(rack`));
    await select(false);
    exits(await cli('resume', resumed), 0);
    const result = (await handle.result()) as FleetRolloutResult;
    assert.deepEqual([result.status, result.counts.succeeded], ['success', SITES], JSON.stringify(result));
    await assertRolledOut(marks, roundOf('3'));

    await commitRound('4');
    await select(true);
    const aborted = `abort-${suffix}`;
    exits(await rollout(aborted), 0);
    const second = client.workflow.getHandle(fleetRolloutWorkflowId(aborted));
    assert.match((await haltedAt(second)).reason ?? '', why);
    exits(await cli('abort', aborted), 0);
    const ended = (await second.result()) as FleetRolloutResult;
    assert.deepEqual([ended.aborted, ended.counts.failed, ended.counts.skipped], [true, 1, SITES - 1], JSON.stringify(ended));
    const rounds = [...(await nodesOf(0)).values()].map((n) => n.metadata?.labels?.['fleet-round']);
    const fourth = rounds.filter((r) => r === '4').length;
    assert.ok(
      fourth > 0 && fourth < NODES && rounds.every((r) => r === '3' || r === '4'),
      `the canary's run ended at its gate after wave 1: ${JSON.stringify(rounds)}`,
    );
    for (const i of specs.keys()) {
      if (i === 0) continue;
      for (const n of (await nodesOf(i)).values()) assert.equal(n.metadata?.labels?.['fleet-round'], '3', `${n.metadata?.name}: its site never started`);
    }
    await apps.deleteNamespacedDaemonSet(ds);
  });
});
