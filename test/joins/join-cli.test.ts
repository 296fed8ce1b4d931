/**
 * `relabel join` as an operator uses it: enable, status (text and JSON),
 * the join run in `relabel runs` as `via join`, disable; another site
 * refused.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

describe('relabel join', () => {
  const prefix = `jc${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;

  before(async () => {
    const { url } = await storeWithSite(site.files);
    relabel = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
  });
  after(async () => {
    await relabelCli(['join', 'disable'], env);
    await relabel.stop();
  });

  it('enables, shows, labels a joining node in a run via join, and disables', async () => {
    const off = JSON.parse(exits(await relabelCli(['join', 'status', '-o', 'json'], env), 0).stdout) as { enabled: boolean; site: string };
    assert.deepEqual([off.enabled, off.site], [false, `${prefix}-site`]);

    const on = JSON.parse(exits(await relabelCli(['join', 'enable', '--delay-ms', '50', '-o', 'json'], env), 0).stdout) as {
      enabled: boolean;
      changed: boolean;
      workflowId: string;
    };
    assert.deepEqual([on.enabled, on.changed, on.workflowId], [true, true, `relabel-join/${prefix}-site`]);
    assert.match(exits(await relabelCli(['join', 'enable'], env), 0).stdout, /joins of site .*: enabled \(already enabled\)/);

    const name = site.nodes[0] as string;
    await createNode(adminCore(), name, {}, [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    const deadline = Date.now() + 30_000;
    while ((await adminCore().readNode({ name })).metadata?.annotations?.[APPLIED_ANNOTATION] === undefined) {
      assert.ok(Date.now() < deadline, `${name} labelled within 30 s`);
      await sleep(100);
    }
    const runs = exits(await relabelCli(['runs', '--site', `${prefix}-site`], env), 0).stdout;
    assert.match(runs, new RegExp(`join:relabel-join/${prefix}-site.* +join +`), 'the run is listed via join, by the watcher');

    let status = '';
    while (!/join runs +1 started, 1 node\(s\) handed to them/.test(status)) {
      assert.ok(Date.now() < deadline + 30_000, `join status counts the run: ${status}`);
      status = exits(await relabelCli(['join', 'status'], env), 0).stdout;
      await sleep(500);
    }
    assert.match(status, /joins of site .*: enabled/);

    const disabled = JSON.parse(exits(await relabelCli(['join', 'disable', '-o', 'json'], env), 0).stdout) as { enabled: boolean; changed: boolean };
    assert.deepEqual([disabled.enabled, disabled.changed], [false, true]);
  });

  it("refuses another site, naming the store's", async () => {
    const r = exits(await relabelCli(['join', 'enable', '--site', 'elsewhere'], env), 2);
    assert.match(r.stderr, /unknown site "elsewhere": this store's site is .*-site/);
  });
});
