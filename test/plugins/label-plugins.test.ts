/**
 * Label plugins against the real Temporal server and kube-apiserver: a JSON
 * plugin and an executable plugin (a shell script run by its shebang) add
 * labels to the right nodes through real update runs; a first poll that
 * fails leaves runs applying document labels; an executable that times
 * out, prints bad JSON, prints too much or writes outside its namespace
 * keeps its last good labels and the error shows in the poll's result and
 * `relabel plugins status`; a label a plugin stops reporting is removed;
 * the per-site Temporal Schedule is created with overlap SKIP; `relabel
 * plan` and `POST plans` name the plugin each plugin label comes from, and
 * the document as the source of a key where the document wins.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { PlanView } from '../../src/api/http/response-schemas.ts';
import type { FleetPlan } from '../../src/facade/plan.ts';
import { createPlugins, ensurePluginSchedule, pluginScheduleId } from '../../src/facade/plugins.ts';
import type { NodeOutcome } from '../../src/facade/runs/runs.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { startTestApi } from '../api-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'relabel-plugins-'));
const JSON_PATH = join(dir, 'features.json');
const SCRIPT_PATH = join(dir, 'nics.sh');
const MODE_PATH = join(dir, 'mode');

/**
 * The executable plugin: prints labels for the nodes listed in `nodes`,
 * or misbehaves as the file `mode` says.
 */
const SCRIPT = `#!/bin/sh
mode=$(cat ${MODE_PATH})
case "$mode" in
  ok) cat ${dir}/nics-output.json ;;
  timeout) sleep 30; cat ${dir}/nics-output.json ;;
  badjson) printf '{"oops": ' ;;
  toomuch) yes '{"x":1}' | head -c 200000 ;;
  outside) printf '{"%s": {"evil.example.org/owned": "yes"}}' "$(cat ${dir}/first-node)" ;;
  env) printf '{"%s": {"nic.example.com/env": "%s"}}' "$(cat ${dir}/first-node)" "$(env | grep -v '^PATH=' | grep -v '^PWD=' | grep -v '^SHLVL=' | grep -v '^_=' | wc -l | tr -d ' ')" ;;
esac
`;

function pluginDocs(): string {
  const doc = (name: string, data: Record<string, unknown>) =>
    `---\n${JSON.stringify({ schema: 'relabel/LabelPlugin/v1', metadata: { schema: 'metadata/Document/v1', name }, data }, null, 1)}\n`;
  return (
    doc('features', { source: 'json', path: JSON_PATH, namespaces: ['feature.example.com/*'] }) +
    doc('nics', {
      source: 'exec',
      path: SCRIPT_PATH,
      namespaces: ['nic.example.com/*', 'feature.example.com/shared'],
      timeout_seconds: 2,
      max_output_bytes: 65536,
    })
  );
}

describe('label plugins', () => {
  const prefix = `pl${uniqueSuffix()}`;
  const site = prefixedSite(prefix, (doc) => {
    // The first node's documents give it a label a plugin will also report, with another value.
    if (doc.schema === 'drydock/BaremetalNode/v1' && doc.metadata.name === `${prefix}-cab23-r720-11`) {
      doc.data.metadata.owner_data = { ...(doc.data.metadata.owner_data ?? {}), 'feature.example.com/doc': 'from-doc' };
    }
  });
  site.files.push({ source: 'plugins.yaml', text: pluginDocs() });
  const siteName = `${prefix}-site`;
  const [n1, n2, n3] = site.nodes.slice(0, 3) as [string, string, string];
  const targets = [n1, n2, n3];
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let url = '';
  let plugins: ReturnType<typeof createPlugins>;

  const writeJson = (labels: Record<string, Record<string, string>>) => writeFileSync(JSON_PATH, JSON.stringify(labels));
  const setMode = (mode: string) => writeFileSync(MODE_PATH, mode);
  const labelsOf = async (name: string) => (await adminCore().readNode({ name })).metadata?.labels ?? {};
  const runOnce = async () => {
    const started = await relabel.runs.start({ targets });
    const done = await relabel.runs.wait(started);
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result ?? done.failure));
    const nodes = (await relabel.runs.nodes(started.run, { limit: 100 })).items;
    return { started, done, nodes: new Map(nodes.map((n: NodeOutcome) => [n.node, n])) };
  };
  const cliStatus = async () => {
    const run = await relabelCli(['plugins', 'status', '--site', siteName, '-o', 'json'], { RELABEL_STORE_URL: url });
    return { code: run.code, rows: JSON.parse(run.stdout) as { plugin: string; ok: boolean; error: string | null; lastGoodSet: number | null }[], run };
  };

  before(async () => {
    writeFileSync(SCRIPT_PATH, SCRIPT);
    chmodSync(SCRIPT_PATH, 0o755);
    writeFileSync(join(dir, 'first-node'), n1);
    writeFileSync(
      join(dir, 'nics-output.json'),
      JSON.stringify({ [n1]: { 'nic.example.com/speed': '100g', 'feature.example.com/shared': 'from-nics' }, [n2]: { 'nic.example.com/speed': '25g' } }),
    );
    setMode('badjson');
    ({ url } = await storeWithSite(site.files));
    relabel = await startRelabel(url);
    plugins = createPlugins({ store: relabel.store, designs: relabel.designs, client: relabel.client, taskQueue: relabel.taskQueue });
    const core = adminCore();
    for (const name of targets) await createNode(core, name);
  });
  after(async () => {
    await relabel.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a first poll that fails stores no set, shows each error, and runs apply document labels only', async () => {
    const polled = await plugins.poll(siteName);
    assert.equal(polled.status, 'failed');
    assert.equal(polled.set, null);
    const byName = new Map(polled.plugins.map((p) => [p.plugin, p]));
    assert.match(byName.get('features')?.error ?? '', /cannot open .*features\.json: ENOENT/);
    assert.match(byName.get('nics')?.error ?? '', /output is not valid JSON/);
    assert.equal(byName.get('nics')?.keptLastGood, false);
    const status = await cliStatus();
    exits(status.run, 4);
    assert.deepEqual(
      status.rows.map((r) => [r.plugin, r.ok, r.lastGoodSet]),
      [
        ['features', false, null],
        ['nics', false, null],
      ],
    );

    const { started, nodes } = await runOnce();
    assert.equal(await relabel.store.plugins.pinnedSet(started.run), 0, 'the run pinned no plugin set');
    const labels = await labelsOf(n1);
    assert.equal(labels['feature.example.com/doc'], 'from-doc', 'document labels applied');
    assert.equal(labels['nic.example.com/speed'], undefined);
    assert.equal(nodes.get(n1)?.status, 'success');
  });

  it('a JSON and an executable plugin add labels to the right nodes through a run; conflicts are reported, documents win', async () => {
    writeJson({
      [n1]: { 'feature.example.com/gpu': 'a100', 'feature.example.com/doc': 'from-plugin', 'feature.example.com/shared': 'from-features' },
      [n3]: { 'feature.example.com/gpu': 'h100' },
      'not-in-design': { 'feature.example.com/gpu': 'x' },
    });
    setMode('ok');
    const polled = await plugins.poll(siteName);
    assert.equal(polled.status, 'ok', JSON.stringify(polled));
    assert.ok(polled.set?.created);
    const setId = polled.set.id;

    const { started, nodes } = await runOnce();
    assert.equal(await relabel.store.plugins.pinnedSet(started.run), setId, 'the run pinned the new set');
    const [l1, l2, l3] = await Promise.all([labelsOf(n1), labelsOf(n2), labelsOf(n3)]);
    assert.equal(l1['feature.example.com/gpu'], 'a100');
    assert.equal(l1['nic.example.com/speed'], '100g');
    assert.equal(l1['feature.example.com/doc'], 'from-doc', 'the document wins over the plugin');
    assert.equal(l1['feature.example.com/shared'], 'from-features', 'plugin "features" sorts before "nics"');
    assert.equal(l2['nic.example.com/speed'], '25g');
    assert.equal(l2['feature.example.com/gpu'], undefined);
    assert.equal(l3['feature.example.com/gpu'], 'h100');
    assert.equal(l3['nic.example.com/speed'], undefined);
    const outcome = nodes.get(n1);
    assert.equal(outcome?.pluginConflictCount, 2);
    assert.deepEqual(outcome?.pluginConflicts?.map((c) => `${c.key}:${c.plugin}=${c.value} kept ${c.kept} (${c.keptFrom})`).sort(), [
      'feature.example.com/doc:features=from-plugin kept from-doc (document)',
      'feature.example.com/shared:nics=from-nics kept from-features (plugin features)',
    ]);
    assert.deepEqual((await relabel.runs.summary(started.run)).pluginConflicts, { nodes: 1, labels: 2 });
    const owned = (await adminCore().readNode({ name: n1 })).metadata?.annotations?.['relabel.airshipit.org/owned-labels'] ?? '';
    assert.ok(owned.split(',').includes('feature.example.com/gpu'), `plugin labels are owned: ${owned}`);
  });

  it('relabel plan and POST plans name the plugin a label comes from; a key where the document wins keeps its document source', async () => {
    const setId = (await relabel.store.plugins.latestSet(siteName))?.id;
    assert.ok(setId, 'the previous test stored a set');
    const bySource = (labels: Record<string, { sources: { source: Record<string, unknown>; nodes: number }[] }>) =>
      Object.fromEntries(
        ['feature.example.com/gpu', 'nic.example.com/speed', 'feature.example.com/shared', 'feature.example.com/doc'].map((key) => [
          key,
          labels[key]?.sources.map((s) => `${JSON.stringify(s.source)} x${s.nodes}`),
        ]),
      );
    const expected = {
      'feature.example.com/gpu': ['{"kind":"plugin","plugin":"features"} x2'],
      'nic.example.com/speed': ['{"kind":"plugin","plugin":"nics"} x2'],
      'feature.example.com/shared': ['{"kind":"plugin","plugin":"features"} x1'],
      'feature.example.com/doc': ['{"kind":"node"} x1'],
    };
    const env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const plan = JSON.parse(exits(await relabelCli(['plan', '--nodes', targets.join(','), '--nodes-detail', '-o', 'json'], env), 0).stdout) as FleetPlan;
    assert.equal(await relabel.store.plugins.pinnedSet(plan.run), setId, 'the plan pinned the latest set');
    assert.deepEqual(bySource(plan.labels), expected);
    assert.equal(plan.labels['feature.example.com/gpu']?.desired, 2);
    const first = plan.nodes?.items.find((n) => n.node === n1)?.labels ?? {};
    assert.deepEqual(first['feature.example.com/gpu'], { value: 'a100', source: { kind: 'plugin', plugin: 'features' } });
    assert.deepEqual(first['nic.example.com/speed'], { value: '100g', source: { kind: 'plugin', plugin: 'nics' } });
    assert.deepEqual(
      first['feature.example.com/shared'],
      { value: 'from-features', source: { kind: 'plugin', plugin: 'features' } },
      'the plugin that sorts first',
    );
    assert.deepEqual(first['feature.example.com/doc'], { value: 'from-doc', source: { kind: 'node' } }, 'the document wins, and stays the source');
    const third = plan.nodes?.items.find((n) => n.node === n3)?.labels ?? {};
    assert.equal(third['nic.example.com/speed'], undefined);
    assert.deepEqual(third['feature.example.com/gpu'], { value: 'h100', source: { kind: 'plugin', plugin: 'features' } });

    const text = exits(await relabelCli(['plan', '--nodes', targets.join(','), '--nodes-detail'], env), 0).stdout;
    assert.match(text, /feature\.example\.com\/gpu .*plugin features ×2/);
    assert.match(text, new RegExp(`${n1}\\s+feature\\.example\\.com/doc\\s+from-doc\\s+node *$`, 'm'));
    assert.match(text, new RegExp(`${n2}\\s+nic\\.example\\.com/speed\\s+25g\\s+plugin nics *$`, 'm'));

    const api = await startTestApi({ storeUrl: url, taskQueue: relabel.taskQueue });
    try {
      const created = await api.call('POST', '/api/v1.0/plans', { body: { target_nodes: targets, nodes_detail: true } });
      assert.equal(created.status, 201, created.text);
      const view = PlanView.parse(created.json);
      assert.deepEqual(bySource(view.labels), expected);
      const apiFirst = view.nodes?.items.find((n) => n.node === n1)?.labels ?? {};
      assert.deepEqual(apiFirst['feature.example.com/gpu'], { value: 'a100', source: { kind: 'plugin', plugin: 'features' } });
      assert.deepEqual(apiFirst['feature.example.com/doc'], { value: 'from-doc', source: { kind: 'node' } });
    } finally {
      await api.close();
    }
  });

  it('an executable that times out, prints bad JSON, prints too much or writes outside its namespace keeps its last good labels; the error shows', async () => {
    const before = await relabel.store.plugins.latestSet(siteName);
    for (const [mode, error] of [
      ['timeout', /did not finish within 2 s; killed/],
      ['badjson', /output is not valid JSON/],
      ['toomuch', /printed more than the plugin's limit of 65536 bytes; killed/],
      ['outside', /label "evil\.example\.org\/owned": key is outside the plugin's namespaces/],
    ] as const) {
      setMode(mode);
      const startedAt = Date.now();
      const polled = await plugins.poll(siteName);
      assert.ok(Date.now() - startedAt < 20_000, `${mode}: the poll ended promptly`);
      assert.equal(polled.status, 'partial', mode);
      const nics = polled.plugins.find((p) => p.plugin === 'nics');
      assert.equal(nics?.ok, false, mode);
      assert.match(nics?.error ?? '', error);
      assert.equal(nics?.keptLastGood, true);
      assert.equal(polled.set?.id, before?.id, `${mode}: the set in use is unchanged`);
      assert.equal(polled.set?.created, false);
      const status = await cliStatus();
      exits(status.run, 4);
      const row = status.rows.find((r) => r.plugin === 'nics');
      assert.equal(row?.ok, false);
      assert.match(row?.error ?? '', error);
      assert.equal(row?.lastGoodSet, before?.id);
    }
    const text = await relabelCli(['plugins', 'status', '--site', siteName], { RELABEL_STORE_URL: url });
    assert.match(text.stdout, /nics\s+\S+\s+NO\s+\S+\s+\d+/);
    // The CLI polls through Temporal too: the last failure (outside its namespace) again, exit 4.
    const cli = exits(
      await relabelCli(['plugins', 'poll', '--site', siteName, '-o', 'json'], { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue }),
      4,
    );
    const polled = JSON.parse(cli.stdout) as { status: string; workflowId: string; plugins: { plugin: string; ok: boolean; error?: string }[] };
    assert.equal(polled.status, 'partial');
    assert.match(polled.workflowId, new RegExp(`^relabel-plugins/${siteName}/now-`));
    assert.match(polled.plugins.find((p) => p.plugin === 'nics')?.error ?? '', /outside the plugin's namespaces/);
    const { done } = await runOnce();
    assert.equal(done.result?.counts.written, 0, 'the last good labels are what the nodes carry: nothing to write');
    assert.equal((await labelsOf(n1))['nic.example.com/speed'], '100g');
  });

  it('an executable gets only PATH in its environment', async () => {
    setMode('env');
    const polled = await plugins.poll(siteName);
    assert.equal(polled.plugins.find((p) => p.plugin === 'nics')?.ok, true, JSON.stringify(polled));
    const rows = await relabel.store.plugins.labels(polled.set?.id ?? 0, [n1]);
    assert.deepEqual(rows.get(n1)?.find((e) => e.plugin === 'nics')?.labels, { 'nic.example.com/env': '0' });
  });

  it('a label a plugin stops reporting is removed by the next run', async () => {
    setMode('ok');
    writeJson({ [n1]: { 'feature.example.com/shared': 'from-features' }, [n3]: { 'feature.example.com/gpu': 'h100' } });
    const polled = await plugins.poll(siteName);
    assert.equal(polled.status, 'ok');
    await runOnce();
    const l1 = await labelsOf(n1);
    assert.equal(l1['feature.example.com/gpu'], undefined, 'no longer reported: removed');
    assert.equal(l1['nic.example.com/speed'], '100g');
    assert.equal((await labelsOf(n3))['feature.example.com/gpu'], 'h100');
  });

  it('a retry run applies the plugin set of the run it retries, not a newer one', async () => {
    const used = (await relabel.store.plugins.latestSet(siteName))?.id;
    const started = await relabel.runs.start({ targets: [n1, `${prefix}-ghost`] });
    const done = await relabel.runs.wait(started);
    assert.equal(done.result?.status, 'partial_success');
    assert.equal(await relabel.store.plugins.pinnedSet(started.run), used);
    writeJson({ [n3]: { 'feature.example.com/gpu': 'b200' } });
    const newer = await plugins.poll(siteName);
    assert.ok(newer.set?.created && newer.set.id !== used);
    const retried = await relabel.runs.retry(started.workflowId);
    await relabel.runs.wait(retried);
    assert.equal(await relabel.store.plugins.pinnedSet(retried.run), used, "the retry pinned its run's set");
    const fresh = await relabel.runs.start({ targets: [n3] });
    await relabel.runs.wait(fresh);
    assert.equal(await relabel.store.plugins.pinnedSet(fresh.run), newer.set.id, 'a new run takes the newest set');
    assert.equal((await labelsOf(n3))['feature.example.com/gpu'], 'b200');
  });

  it('the site gets a Temporal Schedule relabel-plugins/<site>, every 10 minutes by default, overlap SKIP', async () => {
    const made = await ensurePluginSchedule(relabel.client, { site: siteName, taskQueue: relabel.taskQueue });
    assert.deepEqual(made, { scheduleId: pluginScheduleId(siteName), every: '10m', created: true });
    const handle = relabel.client.schedule.getHandle(made.scheduleId);
    try {
      const d = await handle.describe();
      assert.equal(d.policies.overlap, ScheduleOverlapPolicy.SKIP);
      assert.equal(d.spec.intervals?.[0]?.every, 600_000);
      assert.equal(d.action.type, 'startWorkflow');
      assert.equal(d.action.type === 'startWorkflow' ? d.action.workflowType : '', 'pollPlugins');
      const again = await ensurePluginSchedule(relabel.client, { site: siteName, taskQueue: relabel.taskQueue, every: '15m' });
      assert.equal(again.created, false);
      assert.equal((await handle.describe()).spec.intervals?.[0]?.every, 900_000);
      await assert.rejects(ensurePluginSchedule(relabel.client, { site: siteName, taskQueue: relabel.taskQueue, every: '5s' }), /--every "5s"/);
      // A poll the schedule starts is a real poll: the plugins' status moves on.
      const before = Math.max(...(await relabel.store.plugins.status(siteName)).map((r) => r.polledAt.getTime()));
      await handle.trigger();
      const deadline = Date.now() + 60_000;
      while (Math.max(...(await relabel.store.plugins.status(siteName)).map((r) => r.polledAt.getTime())) <= before) {
        assert.ok(Date.now() < deadline, 'the triggered poll ran within 60 s');
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await handle.delete();
    }
  });
});

describe('label plugins with update_on_plugin_change', () => {
  const prefix = `pc${uniqueSuffix()}`;
  const own = mkdtempSync(join(tmpdir(), 'relabel-plugins-change-'));
  const path = join(own, 'racks.json');
  const site = prefixedSite(prefix, (doc) => {
    if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.update_on_plugin_change = true;
  });
  site.files.push({
    source: 'plugins.yaml',
    text: `---\n${JSON.stringify({ schema: 'relabel/LabelPlugin/v1', metadata: { schema: 'metadata/Document/v1', name: 'racks' }, data: { source: 'json', path, namespaces: ['rack.example.com/*'] } })}\n`,
  });
  const siteName = `${prefix}-site`;
  const [n1, n2] = site.nodes.slice(0, 2) as [string, string];
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let plugins: ReturnType<typeof createPlugins>;

  before(async () => {
    const { url } = await storeWithSite(site.files);
    relabel = await startRelabel(url);
    plugins = createPlugins({ store: relabel.store, designs: relabel.designs, client: relabel.client, taskQueue: relabel.taskQueue });
    for (const name of [n1, n2]) await createNode(adminCore(), name);
  });
  after(async () => {
    await relabel.stop();
    rmSync(own, { recursive: true, force: true });
  });

  it('a new set starts an update run for exactly the nodes whose plugin labels changed; an unchanged one starts none', async () => {
    writeFileSync(path, JSON.stringify({ [n1]: { 'rack.example.com/row': 'a' }, [n2]: { 'rack.example.com/row': 'b' } }));
    const first = await plugins.poll(siteName);
    assert.ok(first.updateRun && 'workflowId' in first.updateRun, JSON.stringify(first.updateRun));
    assert.equal(first.updateRun.targets, 2);
    const done = await relabel.runs.wait({ workflowId: first.updateRun.workflowId });
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result ?? done.failure));
    assert.equal(await relabel.store.plugins.pinnedSet(first.updateRun.run), first.set?.id);
    const core = adminCore();
    assert.equal((await core.readNode({ name: n1 })).metadata?.labels?.['rack.example.com/row'], 'a');
    assert.equal((await core.readNode({ name: n2 })).metadata?.labels?.['rack.example.com/row'], 'b');

    const same = await plugins.poll(siteName);
    assert.equal(same.set?.created, false);
    assert.equal(same.updateRun, undefined, 'nothing changed: no run');

    writeFileSync(path, JSON.stringify({ [n1]: { 'rack.example.com/row': 'a' }, [n2]: { 'rack.example.com/row': 'c' } }));
    const changed = await plugins.poll(siteName);
    assert.ok(changed.updateRun && 'workflowId' in changed.updateRun, JSON.stringify(changed.updateRun));
    assert.equal(changed.updateRun.targets, 1, 'only the node whose plugin labels changed');
    const again = await relabel.runs.wait({ workflowId: changed.updateRun.workflowId });
    assert.equal(again.result?.counts.written, 1);
    assert.equal((await core.readNode({ name: n2 })).metadata?.labels?.['rack.example.com/row'], 'c');
  });
});
