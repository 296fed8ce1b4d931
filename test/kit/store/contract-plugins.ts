/**
 * The plugin part of the store contract: label plugin sets (stored, carried
 * over, looked up per node, paged, pruned), plugin status, and the set each
 * run pins, the same on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KEPT_PLUGIN_SETS } from '../../../src/store/plugins/plugin-store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const node = (i: number) => `node-${String(i).padStart(5, '0')}`;

/** Register the plugin contract for one backend. */
export function pluginsContract(fixture: StoreFixture): void {
  describe('label plugin sets', () => {
    test("a set stores each plugin's labels per node; a failed plugin's last good labels are carried", async (t) => {
      const store = await freshStore(t, fixture);
      assert.equal(await store.plugins.latestSet('s'), null);
      const polledAt = new Date('2026-01-02T03:04:05.000Z');
      const first = await store.plugins.saveSet({
        site: 's',
        digest: 'd1',
        parts: [
          {
            plugin: 'gpu',
            digest: 'g1',
            polledAt,
            labels: { 'n-1': { 'gpu.example.com/model': 'a100' }, 'n-2': { 'gpu.example.com/model': 'h100', 'gpu.example.com/count': '8' } },
          },
          { plugin: 'nics', digest: 'x1', polledAt, labels: { 'n-1': { 'nic.example.com/speed': '100g' } } },
        ],
      });
      assert.equal(first.id, 1);
      assert.equal(first.site, 's');
      assert.deepEqual(first.plugins, [
        { plugin: 'gpu', digest: 'g1', polledAt, nodes: 2, labels: 3 },
        { plugin: 'nics', digest: 'x1', polledAt, nodes: 1, labels: 1 },
      ]);
      assert.deepEqual(await store.plugins.latestSet('s'), first);
      assert.equal(await store.plugins.latestSet('other'), null);
      const looked = await store.plugins.labels(1, ['n-1', 'n-2', 'n-3']);
      assert.deepEqual(Object.fromEntries(looked), {
        'n-1': [
          { plugin: 'gpu', labels: { 'gpu.example.com/model': 'a100' } },
          { plugin: 'nics', labels: { 'nic.example.com/speed': '100g' } },
        ],
        'n-2': [{ plugin: 'gpu', labels: { 'gpu.example.com/model': 'h100', 'gpu.example.com/count': '8' } }],
      });

      // gpu failed this time: its labels come from set 1; nics reported anew.
      const later = new Date('2026-01-02T03:14:05.000Z');
      const second = await store.plugins.saveSet({
        site: 's',
        digest: 'd2',
        parts: [
          { plugin: 'gpu', carryFrom: 1 },
          { plugin: 'nics', digest: 'x2', polledAt: later, labels: { 'n-2': { 'nic.example.com/speed': '25g' } } },
        ],
      });
      assert.equal(second.id, 2);
      assert.deepEqual(second.plugins, [
        { plugin: 'gpu', digest: 'g1', polledAt, nodes: 2, labels: 3 },
        { plugin: 'nics', digest: 'x2', polledAt: later, nodes: 1, labels: 1 },
      ]);
      assert.deepEqual(Object.fromEntries(await store.plugins.labels(2, ['n-1', 'n-2'])), {
        'n-1': [{ plugin: 'gpu', labels: { 'gpu.example.com/model': 'a100' } }],
        'n-2': [
          { plugin: 'gpu', labels: { 'gpu.example.com/model': 'h100', 'gpu.example.com/count': '8' } },
          { plugin: 'nics', labels: { 'nic.example.com/speed': '25g' } },
        ],
      });
      assert.deepEqual((await store.plugins.getSet(1))?.digest, 'd1', 'the earlier set is unchanged');
      assert.equal(await store.plugins.getSet(99), null);
      await rejectsWith(
        store.plugins.saveSet({ site: 's', digest: 'd3', parts: [{ plugin: 'absent', carryFrom: 1 }] }),
        'InvalidArgument',
        /plugin absent is not in plugin set 1/,
      );
      assert.equal((await store.plugins.latestSet('s'))?.id, 2, 'a refused save stores nothing');
    });

    test('a set of many nodes is paged in (node, plugin) order and looked up per node', async (t) => {
      const store = await freshStore(t, fixture);
      const labels = Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [node(i), { 'a.example.com/i': String(i) }]));
      const set = await store.plugins.saveSet({ site: 's', digest: 'd', parts: [{ plugin: 'a', digest: 'a', polledAt: new Date(), labels }] });
      assert.deepEqual(
        set.plugins.map((p) => [p.nodes, p.labels]),
        [[1200, 1200]],
      );
      const seen: string[] = [];
      for (let after: { node: string; plugin: string } | undefined; ;) {
        const page = await store.plugins.rows(set.id, { ...(after ? { after } : {}), limit: 500 });
        seen.push(...page.map((r) => r.node));
        const last = page.at(-1);
        if (page.length < 500 || !last) break;
        after = { node: last.node, plugin: last.plugin };
      }
      assert.equal(seen.length, 1200);
      assert.deepEqual(seen, [...seen].sort());
      const some = await store.plugins.labels(set.id, [node(0), node(777), node(1199), 'not-there']);
      assert.deepEqual([...some.keys()], [node(0), node(777), node(1199)]);
      assert.deepEqual(some.get(node(777)), [{ plugin: 'a', labels: { 'a.example.com/i': '777' } }]);
      await rejectsWith(
        store.plugins.labels(
          set.id,
          Array.from({ length: 5001 }, (_, i) => node(i)),
        ),
        'InvalidArgument',
        /at most 5000 nodes/,
      );
    });

    test('old sets are forgotten unless among the newest or pinned by a run', async (t) => {
      const store = await freshStore(t, fixture);
      const save = (i: number) =>
        store.plugins.saveSet({
          site: 's',
          digest: `d${i}`,
          parts: [{ plugin: 'p', digest: `p${i}`, polledAt: new Date(), labels: { 'n-1': { 'p.example.com/v': String(i) } } }],
        });
      const run = await store.runs.create({ targets: ['n-1'] });
      const first = await save(1);
      assert.equal(await store.plugins.pinRun(run.id, first.id), first.id);
      for (let i = 2; i <= KEPT_PLUGIN_SETS + 3; i++) await save(i);
      assert.ok(await store.plugins.getSet(first.id), 'set 1 is pinned by a run: kept');
      assert.equal(await store.plugins.getSet(2), null, 'set 2 is neither new nor pinned: forgotten');
      assert.deepEqual(Object.fromEntries(await store.plugins.labels(2, ['n-1'])), {});
      assert.deepEqual(Object.fromEntries(await store.plugins.labels(first.id, ['n-1'])), { 'n-1': [{ plugin: 'p', labels: { 'p.example.com/v': '1' } }] });
      const newest = KEPT_PLUGIN_SETS + 3;
      for (let i = newest - KEPT_PLUGIN_SETS + 1; i <= newest; i++) assert.ok(await store.plugins.getSet(i), `set ${i} is among the newest`);
    });

    test('a run pins its set once: later pins return the first; a discarded run forgets it', async (t) => {
      const store = await freshStore(t, fixture);
      const run = await store.runs.create({ targets: ['a'] });
      assert.equal(await store.plugins.pinnedSet(run.id), null);
      assert.equal(await store.plugins.pinRun(run.id, 0), 0, 'no set yet: document labels only');
      assert.equal(await store.plugins.pinRun(run.id, 7), 0, 'a retry keeps what was pinned');
      assert.equal(await store.plugins.pinnedSet(run.id), 0);
      await store.runs.discard(run.id);
      const next = await store.runs.create({ targets: ['b'] });
      assert.equal(next.id, run.id, 'the number is reused');
      assert.equal(await store.plugins.pinnedSet(next.id), null, "and the discarded run's pin went with it");
      await rejectsWith(store.plugins.pinRun(next.id, -1), 'InvalidArgument', /plugin set must be a non-negative integer/);
    });

    test("status keeps each plugin's last poll and last good one; unlisted plugins are forgotten", async (t) => {
      const store = await freshStore(t, fixture);
      const t1 = new Date('2026-01-02T03:00:00.000Z');
      const t2 = new Date('2026-01-02T03:10:00.000Z');
      await store.plugins.setStatus('s', t1, [
        { plugin: 'a', ok: true, set: 4, nodes: 10, labels: 20 },
        { plugin: 'b', ok: false, error: 'exec timed out after 30 s' },
        { plugin: 'gone', ok: true, set: 4, nodes: 1, labels: 1 },
      ]);
      await store.plugins.setStatus('s', t2, [
        { plugin: 'a', ok: false, error: 'output is not valid JSON' },
        { plugin: 'b', ok: true, set: 5, nodes: 3, labels: 3 },
      ]);
      await store.plugins.setStatus('other', t2, [{ plugin: 'z', ok: true, set: 5, nodes: 0, labels: 0 }]);
      assert.deepEqual(await store.plugins.status('s'), [
        { site: 's', plugin: 'a', polledAt: t2, ok: false, error: 'output is not valid JSON', lastGoodAt: t1, lastGoodSet: 4, nodes: 10, labels: 20 },
        { site: 's', plugin: 'b', polledAt: t2, ok: true, error: null, lastGoodAt: t2, lastGoodSet: 5, nodes: 3, labels: 3 },
      ]);
      assert.deepEqual(
        (await store.plugins.status()).map((r) => `${r.site}/${r.plugin}`),
        ['other/z', 's/a', 's/b'],
      );
    });
  });
}
