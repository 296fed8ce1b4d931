/**
 * `relabel fleet plan` and `relabel fleet status` against the real
 * Temporal server and kube-apiserver: two sites, each with its own store
 * and its own relabel worker on its own task queue, asked from a centre
 * whose store holds only the registry. Each site's plan is its own dry
 * run, computed by its own worker; the counts it gives equal what a real
 * rollout then does to the nodes (read from the nodes before and after).
 * A site no worker serves is reported unreachable; an unknown site is
 * refused, nothing started.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { fleetRolloutWorkflowId } from '../../src/contracts/fleet-messages.ts';
import type { EndedSurvey } from '../../src/facade/fleet-survey.ts';
import { facadeSiteRuns } from '../../src/facade/runs/run-starter.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Relabel = Awaited<ReturnType<typeof startRelabel>>;

/** What a rollout did to a site's nodes, worked out from the nodes themselves: label × node gains, changes and losses, and nodes written. */
function groundTruth(before: Map<string, V1Node>, after: Map<string, V1Node>) {
  const truth = { gain: 0, change: 0, lose: 0, written: 0 };
  for (const [name, was] of before) {
    const now = after.get(name) as V1Node;
    const a = was.metadata?.labels ?? {};
    const b = now.metadata?.labels ?? {};
    for (const key of Object.keys(b)) {
      if (!Object.hasOwn(a, key)) truth.gain++;
      else if (a[key] !== b[key]) truth.change++;
    }
    for (const key of Object.keys(a)) if (!Object.hasOwn(b, key)) truth.lose++;
    if (was.metadata?.resourceVersion !== now.metadata?.resourceVersion) truth.written++;
  }
  return truth;
}

describe('a fleet plan and the fleet status over two sites, each computed by its own worker', () => {
  const suffix = uniqueSuffix();
  const sites = ['pa', 'pb'].map((p) => ({ prefix: `${p}${suffix}`, ...prefixedSite(`${p}${suffix}`) }));
  const workers: Relabel[] = [];
  let centre: Relabel;
  let centreUrl = '';
  const core = adminCore();
  const cli = (...args: string[]) => relabelCli(['--store', centreUrl, '--fleet-task-queue', centre.taskQueue, 'fleet', ...args]);
  const nodesOf = async (names: readonly string[]) => new Map(await Promise.all(names.map(async (n) => [n, await core.readNode({ name: n })] as const)));

  before(async () => {
    for (const site of sites) workers.push(await startRelabel((await storeWithSite(site.files)).url));
    centreUrl = (await storeWithSite([])).url;
    centre = await startRelabel(centreUrl);
    for (const site of sites) for (const name of site.nodes) await createNode(core, name, { 'example.com/kept': 'yes' });
    for (const [i, s] of sites.entries()) exits(await cli('sites', 'add', `${s.prefix}-site`, '--queue', workers[i]?.taskQueue ?? '', '--label', `n=${i}`), 0);
  });
  after(async () => {
    for (const w of [...workers, centre]) await w?.stop();
  });

  it("plans each site in the site, and its counts equal what the rollout then does to the site's nodes", async () => {
    const planned = JSON.parse(exits(await cli('plan', '-o', 'json'), 0).stdout) as EndedSurvey;
    assert.deepEqual([planned.result.sites, planned.result.answered], [2, 2]);
    assert.match(planned.workflowId, /^fleet-survey\/plan\//);
    const before = await Promise.all(sites.map((s) => nodesOf(s.nodes)));
    for (const [i, site] of sites.entries()) {
      const answer = planned.page.items.find((a) => a.site === `${site.prefix}-site`);
      assert.equal(answer?.state, 'answered');
      const plan = answer?.plan;
      assert.ok(plan);
      // The dry run is the site's own: in its store, on its queue, nothing written to its nodes.
      assert.equal((await (workers[i] as Relabel).store.runs.get(plan.run)).dryRun, true);
      const dry = await centre.client.workflow.getHandle(plan.workflowId).describe();
      assert.equal(dry.taskQueue, workers[i]?.taskQueue);
      for (const [name, node] of await nodesOf(site.nodes))
        assert.equal(node.metadata?.resourceVersion, before[i]?.get(name)?.metadata?.resourceVersion, `${name} untouched`);
      assert.deepEqual([plan.targets, plan.planned, plan.changing], [site.nodes.length, site.nodes.length, site.nodes.length]);
      assert.ok(plan.keys.length > 0 && plan.keys.every((k) => k.sources.length > 0), 'each listed key names where it comes from');
    }
    const totals = planned.result.plan;
    assert.ok(totals);
    assert.equal(totals.reached, 2);

    const name = `plan-${suffix}`;
    exits(await cli('rollout', name, '--waves', '1'), 0);
    await centre.client.workflow.getHandle(fleetRolloutWorkflowId(name)).result();
    for (const [i, site] of sites.entries()) {
      const plan = planned.page.items.find((a) => a.site === `${site.prefix}-site`)?.plan;
      const truth = groundTruth(before[i] as Map<string, V1Node>, await nodesOf(site.nodes));
      assert.deepEqual(
        { gain: plan?.gain, change: plan?.change, lose: plan?.lose, written: plan?.changing },
        truth,
        `${site.prefix}: the plan's counts are what the rollout did`,
      );
    }
    assert.equal(
      totals.gain,
      planned.page.items.reduce((n, a) => n + (a.plan?.gain ?? 0), 0),
    );

    // A hand edit at one site: the next fleet plan reaches that site only, with the one change.
    const [first] = sites;
    const edited = first?.nodes[0] as string;
    const owned = Object.keys((await core.readNode({ name: edited })).metadata?.labels ?? {}).find(
      (k) => k !== 'example.com/kept' && !k.startsWith('kubernetes.io/'),
    );
    assert.ok(owned);
    await core.patchNode({
      name: edited,
      body: [{ op: 'replace', path: `/metadata/labels/${owned.replaceAll('~', '~0').replaceAll('/', '~1')}`, value: 'by-hand' }],
    });
    const again = JSON.parse(exits(await cli('plan', '-o', 'json'), 0).stdout) as EndedSurvey;
    assert.deepEqual([again.result.plan?.reached, again.result.plan?.changing, again.result.plan?.change, again.result.plan?.gain], [1, 1, 1, 0]);
    assert.equal(again.page.items[0]?.site, `${first?.prefix}-site`, 'the site written most comes first');
    const text = exits(await cli('plan'), 0).stdout;
    assert.match(text, /^reached: 1 site\(s\) would change; 1 of \d+ planned node\(s\) would be written/m);
    assert.match(text, new RegExp(`^${owned.replaceAll('.', '\\.')}\\s+1\\s+0\\s+1\\s+0\\s+0\\s+`, 'm'));
  });

  it("shows every site's last run, drift and joins in one view", async () => {
    const state = JSON.parse(exits(await cli('status', '-o', 'json'), 0).stdout) as EndedSurvey;
    assert.deepEqual([state.result.kind, state.result.answered], ['state', 2]);
    for (const [i, site] of sites.entries()) {
      const status = state.page.items.find((a) => a.site === `${site.prefix}-site`)?.status;
      assert.ok(status);
      assert.equal(status.revision, 1);
      assert.deepEqual([status.lastRun?.outcome, status.lastRun?.startedVia], ['success', 'fleet'], 'the rollout’s run, not a plan');
      assert.equal((await (workers[i] as Relabel).store.runs.get(status.lastRun?.run ?? 0)).dryRun, false);
      assert.equal(status.joins.enabled, false);
      assert.deepEqual(status.alerts, []);
    }
    assert.match(exits(await cli('status'), 0).stdout, /^alerts: none$/m);
  });

  it('reports a site no worker serves as unreachable, and refuses an unknown site starting nothing', async () => {
    exits(await cli('sites', 'add', `gone${suffix}`, '--queue', `nobody-${suffix}`), 0);
    const run = exits(await cli('plan', '--site-wait', '2'), 4);
    assert.match(
      run.stdout,
      new RegExp(`gone${suffix}\\s+unreachable\\s+no worker took site gone${suffix}'s question on task queue nobody-${suffix} within 2 s`),
    );
    assert.match(run.stdout, /: 2 answered, 0 failed, 1 unreachable/);
    assert.match(exits(await cli('plan', '--sites', `nope${suffix},${sites[0]?.prefix}-site`), 2).stderr, new RegExp(`unknown site\\(s\\): "nope${suffix}"`));
    assert.match(exits(await cli('status', '--select', 'n=7'), 2).stderr, /the selection matches no registered site/);

    // A rollout is refused before anything starts: a site with no worker, and a revision no site's documents hold.
    const before = await Promise.all(sites.map((s) => nodesOf(s.nodes)));
    const refused = exits(await cli('rollout', `gone-${suffix}`, '--preflight-wait', '2'), 2).stderr;
    assert.match(refused, new RegExp(`1 of 3 site\\(s\\) would not start the rollout's run, so nothing started: gone${suffix} \\(unreachable: no worker took`));
    exits(await cli('sites', 'remove', `gone${suffix}`), 0);
    const unknown = exits(await cli('rollout', `rev-${suffix}`, '--revision', '99'), 2).stderr;
    for (const site of sites) assert.match(unknown, new RegExp(`${site.prefix}-site \\(failed: RevisionNotFound: [^)]*99`));
    for (const name of [`gone-${suffix}`, `rev-${suffix}`])
      await assert.rejects(centre.client.workflow.getHandle(fleetRolloutWorkflowId(name)).describe(), /not found/i, `${name}: nothing started`);
    for (const [i, site] of sites.entries())
      for (const [name, node] of await nodesOf(site.nodes))
        assert.equal(node.metadata?.resourceVersion, before[i]?.get(name)?.metadata?.resourceVersion, `${name} untouched`);
  });

  it("gives a retried prepare of a site's run the run its first attempt made, so none is left unstarted", async () => {
    const worker = workers[0] as Relabel;
    const preparer = facadeSiteRuns({ taskQueue: worker.taskQueue, namespace: 'default' })({ store: worker.store, designs: worker.designs });
    const request = { site: `${sites[0]?.prefix}-site`, fleet: fleetRolloutWorkflowId(`retry-${suffix}`), run: {} };
    const first = await preparer.prepare(worker.client, request, `fleet:retry-${suffix}/a`);
    const retried = await preparer.prepare(worker.client, request, `fleet:retry-${suffix}/a`);
    assert.equal(retried.run, first.run, 'the same run');
    const other = await preparer.prepare(worker.client, request, `fleet:retry-${suffix}/b`);
    assert.notEqual(other.run, first.run, 'another prepare, another run');
    for (const run of [first.run, other.run]) await preparer.settle(worker.client, { site: request.site, run });
  });
});
