/**
 * `relabel plan` over 1,000 nodes of the real cluster: one dry run (no
 * child, no write, every payload small), per-key counts and sources summed
 * from the store, the whole answer bounded by the label keys rather than
 * the nodes. Prints the time the facade and the CLI take.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { historyFigures } from '../../bench/history.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createPlans, type FleetPlan } from '../../src/facade/plan.ts';
import { adminCore, createNode, exits, nodePatchCount, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { scaledSite, storeWithSite } from '../site.ts';

const NODES = 1000;

describe(`relabel plan over ${NODES} nodes`, () => {
  const prefix = `fps${uniqueSuffix()}`;
  const site = scaledSite(prefix, NODES);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;

  before(async () => {
    storeUrl = (await storeWithSite(site.files)).url;
    relabel = await startRelabel(storeUrl);
    const core = adminCore();
    for (let i = 0; i < site.nodes.length; i += 25) await Promise.all(site.nodes.slice(i, i + 25).map((name) => createNode(core, name)));
  });
  after(async () => relabel?.stop());

  it('plans every node in one dry run, without a child or a write, and answers in size bounded by the label keys', async () => {
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    const patches = await nodePatchCount();
    const plans = createPlans(relabel.runs);
    const started = Date.now();
    const plan = await plans.plan({ select: { all: true } });
    const facadeMs = Date.now() - started;
    assert.equal(plan.targets, NODES);
    assert.deepEqual(plan.statuses, { success: NODES });
    const desired = (key: string) => Object.values(validation.design.nodes).filter((n) => Object.hasOwn(n.labels, key)).length;
    assert.equal(plan.labels['node-exporter']?.gain, NODES);
    assert.equal(plan.labels['openstack-libvirt']?.desired, desired('openstack-libvirt'));
    assert.equal(plan.labels['openstack-libvirt']?.gain, desired('openstack-libvirt'));
    assert.equal(
      plan.labels['power-domain']?.sources.reduce((n, s) => n + s.nodes, 0),
      NODES,
    );
    assert.equal(await nodePatchCount(), patches, 'nothing written');
    const size = JSON.stringify(plan).length;
    assert.ok(size < 64 * 1024, `plan of ${size} bytes`);
    const history = await historyFigures(relabel.client, plan.workflowId, plan.runId);
    assert.equal(history.children, 0);
    assert.ok(history.largestPayload < 16 * 1024, `largest payload ${history.largestPayload} bytes`);

    // Where the time goes: the dry run itself (validation in the worker, the LIST, the plans recorded) against the summary.
    const summaryStarted = Date.now();
    await plans.report(plan);
    const summaryMs = Date.now() - summaryStarted;

    // Once more, with the revision's design already validated by the worker and the facade.
    const warmStarted = Date.now();
    await plans.plan({ select: { all: true } });
    const warmMs = Date.now() - warmStarted;

    const env = { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const cliStarted = Date.now();
    const json = JSON.parse(exits(await relabelCli(['plan', '--all', '-o', 'json'], env), 0).stdout) as FleetPlan;
    const cliMs = Date.now() - cliStarted;
    assert.deepEqual(json.labels, plan.labels);
    console.log(
      `relabel plan over ${NODES} nodes: facade ${facadeMs} ms (of which the summary ${summaryMs} ms; again with the design cached ${warmMs} ms), CLI process ${cliMs} ms; answer ${size} bytes`,
    );
  });
});
