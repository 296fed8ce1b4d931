/**
 * A fleet rollout against the real Temporal server and kube-apiserver: two
 * sites, each with its own store and its own relabel worker on its own task
 * queue, rolled out from a centre whose store holds only the registry. Each
 * site's run is prepared by its own worker in its own store and runs as the
 * rollout's child on the site's queue; a registry entry pointing at another
 * site's queue is refused by that site's worker, writing nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { APPLIED_ANNOTATION } from '../../src/core/plan/constants.ts';
import { fleetRolloutWorkflowId, type FleetRolloutInput } from '../../src/contracts/fleet-messages.ts';
import { runWorkflowId } from '../../src/contracts/messages.ts';
import type { fleetRollout } from '../../src/workflows/fleet-rollout.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Relabel = Awaited<ReturnType<typeof startRelabel>>;

describe('a fleet rollout over two sites, each on its own worker and queue', () => {
  const suffix = uniqueSuffix();
  const sites = ['fa', 'fb'].map((p) => ({ prefix: `${p}${suffix}`, ...prefixedSite(`${p}${suffix}`) }));
  const workers: Relabel[] = [];
  let centre: Relabel;
  let centreUrl = '';

  before(async () => {
    for (const site of sites) workers.push(await startRelabel((await storeWithSite(site.files)).url));
    centreUrl = (await storeWithSite([])).url;
    centre = await startRelabel(centreUrl);
    const core = adminCore();
    for (const site of sites) for (const name of site.nodes) await createNode(core, name);
  });
  after(async () => {
    for (const w of [...workers, centre]) await w?.stop();
  });

  const registry = () => sites.map((s, i) => ({ name: `${s.prefix}-site`, taskQueue: workers[i]?.taskQueue ?? '', labels: { wave: String(i) } }));

  it("runs each site's update run as a child on the site's own queue, in the site's own store, canary first", async () => {
    const input: FleetRolloutInput = { name: `two-${suffix}`, sites: registry(), rollout: { canary: { count: 1 } }, run: {} };
    const handle = await centre.client.workflow.start<typeof fleetRollout>('fleetRollout', {
      taskQueue: centre.taskQueue,
      workflowId: fleetRolloutWorkflowId(input.name),
      args: [input],
    });
    const result = await handle.result();
    assert.deepEqual([result.status, result.counts.succeeded, result.waves], ['success', 2, 2], JSON.stringify(result));

    const core = adminCore();
    for (const [i, site] of sites.entries()) {
      const worker = workers[i] as Relabel;
      const child = await centre.client.workflow.getHandle(runWorkflowId(`${site.prefix}-site`)).describe();
      assert.equal(child.taskQueue, worker.taskQueue, 'the child ran on its site’s queue');
      assert.equal(child.parentExecution?.workflowId, handle.workflowId);
      const run = await worker.store.runs.get(1);
      assert.equal(run.workflowId, runWorkflowId(`${site.prefix}-site`), "the run is in the site's own store");
      assert.equal(run.startedVia, 'fleet');
      for (const name of site.nodes) {
        const applied = (await core.readNode({ name })).metadata?.annotations?.[APPLIED_ANNOTATION] ?? '';
        assert.match(applied, new RegExp(`site=${site.prefix}-site`), `${name} was written by its site's run`);
      }
    }
    await assert.rejects(centre.store.runs.get(1), /not found/, 'the centre holds no run');
  });

  it("is refused by a site's worker when the registry points another site at its queue, writing nothing", async () => {
    const [first] = registry();
    const wrong = { name: 'elsewhere', taskQueue: first?.taskQueue ?? '', labels: {} };
    const handle = await centre.client.workflow.start<typeof fleetRollout>('fleetRollout', {
      taskQueue: centre.taskQueue,
      workflowId: fleetRolloutWorkflowId(`wrong-${suffix}`),
      args: [{ name: `wrong-${suffix}`, sites: [wrong], rollout: {}, run: {} }],
    });
    const result = await handle.result();
    assert.deepEqual([result.status, result.failures[0]?.state], ['failure', 'failed']);
    assert.match(result.failures[0]?.reason ?? '', new RegExp(`InvalidRequest: this worker serves site ${sites[0]?.prefix}-site, not site elsewhere`));
    await assert.rejects((workers[0] as Relabel).store.runs.get(2), /not found/, 'no run was made');
  });
  it('is started and followed from the CLI over the registry, and refuses bad input starting nothing', async () => {
    const cli = (...args: string[]) => relabelCli(['--store', centreUrl, '--fleet-task-queue', centre.taskQueue, 'fleet', ...args]);
    for (const s of registry()) exits(await cli('sites', 'add', s.name, '--queue', s.taskQueue, '--label', `wave=${s.labels.wave}`), 0);
    const name = `cli-${suffix}`;
    assert.match(exits(await cli('rollout', name, '--canary', 'nope'), 2).stderr, /canary: "nope": not among the rollout's sites/);
    assert.match(exits(await cli('rollout', name, '--select', 'wave=9'), 2).stderr, /the selection matches no registered site/);
    assert.match(exits(await cli('rollout', name, '--waves', '0'), 2).stderr, /waves "0"/);
    await assert.rejects(centre.client.workflow.getHandle(fleetRolloutWorkflowId(name)).describe(), /not found/i, 'nothing started');
    const started = JSON.parse(exits(await cli('rollout', name, '--waves', '1', '-o', 'json'), 0).stdout) as { sites: number; waves: unknown[] };
    assert.deepEqual([started.sites, started.waves.length], [2, 2]);
    await centre.client.workflow.getHandle(fleetRolloutWorkflowId(name)).result();
    const status = exits(await cli('status', name), 0).stdout;
    assert.match(status, /COMPLETED\nsuccess: 2 of 2 site\(s\) succeeded/);
    assert.match(exits(await cli('approve', name), 3).stderr, /cannot approve fleet rollout/);
  });
});
