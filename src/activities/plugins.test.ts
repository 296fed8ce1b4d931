import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PluginSpec } from '../core/site/label-plugin.ts';
import { nodeDoc, source, yamlDoc } from '../../test/kit/site/documents.ts';
import { createDesignCache } from '../store/designs/design-cache.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import type { PluginRead } from './plugin-runner.ts';
import { pollSite, preparePluginChangeRun } from './plugins.ts';

const plugin = (name: string, ns: string) => yamlDoc('relabel/LabelPlugin/v1', name, `  source: json\n  path: /p/${name}.json\n  namespaces: ["${ns}"]`);

async function commit(store: Store, ...docs: string[]): Promise<void> {
  await store.revisions.stage(
    'site',
    [source('s.yaml', yamlDoc('drydock/Region/v1', 'lab', ''), nodeDoc('n1', ''), nodeDoc('n2', ''), ...docs)].map((s) => ({ source: s.source, text: s.text })),
  );
  await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
}

describe('polling a site', () => {
  it("stores good output, keeps a failed plugin's last good labels, stores nothing when nothing changed, and empties the set when the plugins go", async (t) => {
    const store = await openStore('sqlite::memory:');
    t.after(() => store.close());
    const designs = createDesignCache(store);
    const outputs = new Map<string, PluginRead>();
    const deps = { store, designs, read: async (p: PluginSpec) => outputs.get(p.name) ?? { ok: false as const, error: 'no output' } };

    await commit(store);
    const none = await pollSite(deps, { site: 'lab' });
    assert.deepEqual([none.status, none.set, none.plugins], ['none', null, []]);
    await assert.rejects(pollSite(deps, { site: 'other' }), /the latest revision \(1\) is of site lab, not other/);

    await commit(store, plugin('a', 'a.example.com/*'), plugin('b', 'b.example.com/*'));
    outputs.set('a', { ok: true, text: '{"n1": {"a.example.com/x": "1"}}' });
    outputs.set('b', { ok: true, text: '{"n2": {"b.example.com/y": "2"}, "n9": {"b.example.com/y": "9"}}' });
    const first = await pollSite(deps, { site: 'lab' });
    assert.equal(first.status, 'ok');
    assert.deepEqual(first.set, { id: 1, created: true, nodes: 3, labels: 3, previous: null });

    const same = await pollSite(deps, { site: 'lab' });
    assert.deepEqual(same.set, { id: 1, created: false, nodes: 3, labels: 3, previous: null });

    outputs.set('a', { ok: true, text: '{"n1": {"a.example.com/x": "1", "b.example.com/y": "smuggled"}}' });
    const refused = await pollSite(deps, { site: 'lab' });
    assert.equal(refused.status, 'partial');
    assert.equal(refused.set?.id, 1, 'a refused output changes nothing');
    assert.deepEqual(refused.plugins[0], { plugin: 'a', ok: false, error: refused.plugins[0]?.error, keptLastGood: true });
    assert.match(refused.plugins[0]?.error ?? '', /"b\.example\.com\/y": key is outside the plugin's namespaces/);

    outputs.set('b', { ok: true, text: '{"n2": {"b.example.com/y": "3"}}' });
    const carried = await pollSite(deps, { site: 'lab' });
    assert.deepEqual(carried.set, { id: 2, created: true, nodes: 2, labels: 2, previous: 1 });
    assert.deepEqual(Object.fromEntries(await store.plugins.labels(2, ['n1', 'n2'])), {
      n1: [{ plugin: 'a', labels: { 'a.example.com/x': '1' } }],
      n2: [{ plugin: 'b', labels: { 'b.example.com/y': '3' } }],
    });
    assert.deepEqual(
      (await store.plugins.status('lab')).map((r) => [r.plugin, r.ok, r.lastGoodSet]),
      [
        ['a', false, 1],
        ['b', true, 2],
      ],
    );

    const change = await preparePluginChangeRun({ store, designs }, { site: 'lab', set: 2, previous: 1 });
    assert.ok('run' in change);
    assert.equal(change.targets, 1, 'n2 changed; n9 is not in the design');
    assert.deepEqual(
      (await store.runs.nodes(change.run, { limit: 10 })).map((r) => r.node),
      ['n2'],
    );
    assert.equal(await store.plugins.pinnedSet(change.run), 2);

    await commit(store);
    const gone = await pollSite(deps, { site: 'lab' });
    assert.deepEqual([gone.status, gone.set?.created, gone.set?.labels], ['none', true, 0]);
    assert.deepEqual(Object.fromEntries(await store.plugins.labels(gone.set?.id ?? 0, ['n1', 'n2'])), {}, 'labels of removed plugins are no longer desired');
  });
});
