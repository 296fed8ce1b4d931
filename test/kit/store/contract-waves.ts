/**
 * The wave part of the store contract: a run's waves in order, each node in
 * one wave, pages of pending nodes by wave, and each wave's nodes counted by
 * status, the same on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

/** Register the waves contract for one backend. */
export function wavesContract(fixture: StoreFixture): void {
  describe('waves', () => {
    test('waves are recorded in order; pending nodes page by wave; each wave counts its nodes by status', async (t) => {
      const store = await freshStore(t, fixture);
      const { id } = await store.runs.create({ targets: ['a', 'b', 'c', 'd', 'e'] });
      assert.deepEqual(await store.runs.waves(id, { limit: 10 }), [], 'a run without waves');
      await store.runs.setNodeResults(
        id,
        ['a', 'b', 'c', 'd'].map((node) => ({ node, status: 'pending' as const })),
      );
      await store.runs.setWaves(id, [
        { name: 'canary', nodes: ['c'] },
        { name: 'rack r1', nodes: ['d', 'a'] },
        { name: 'rack r2', nodes: ['b'] },
      ]);
      const pending = async (wave: number, afterSeq = -1) => (await store.runs.nodes(id, { status: 'pending', wave, afterSeq, limit: 10 })).map((r) => r.node);
      assert.deepEqual(await pending(0), ['c']);
      assert.deepEqual(await pending(1), ['a', 'd'], 'target order within a wave');
      assert.deepEqual(await pending(1, 0), ['d']);
      await store.runs.setNodeResults(id, [
        { node: 'a', status: 'success', written: true },
        { node: 'd', status: 'failure' },
      ]);
      assert.deepEqual(await pending(1), []);
      const waves = await store.runs.waves(id, { limit: 10 });
      assert.deepEqual(waves, [
        { index: 0, name: 'canary', nodes: 1, success: 0, failure: 0, cancelled: 0, pending: 1 },
        { index: 1, name: 'rack r1', nodes: 2, success: 1, failure: 1, cancelled: 0, pending: 0 },
        { index: 2, name: 'rack r2', nodes: 1, success: 0, failure: 0, cancelled: 0, pending: 1 },
      ]);
      assert.deepEqual(
        (await store.runs.waves(id, { afterIndex: 0, limit: 1 })).map((w) => w.name),
        ['rack r1'],
      );

      await store.runs.setWaves(id, [{ name: 'all', nodes: ['b', 'c'] }]);
      assert.deepEqual(
        (await store.runs.waves(id, { limit: 10 })).map((w) => [w.name, w.nodes]),
        [['all', 2]],
        'recording again replaces',
      );
      assert.deepEqual(await pending(1), []);
    });

    test('bad waves are refused and change nothing', async (t) => {
      const store = await freshStore(t, fixture);
      const { id } = await store.runs.create({ targets: ['a', 'b'] });
      await store.runs.setWaves(id, [{ name: 'one', nodes: ['a'] }]);
      await rejectsWith(
        store.runs.setWaves(id, [
          { name: 'w', nodes: ['a'] },
          { name: 'x', nodes: ['a'] },
        ]),
        'InvalidArgument',
        /node a is in waves 0 and 1/,
      );
      await rejectsWith(store.runs.setWaves(id, [{ name: 'w', nodes: ['a', 'zz'] }]), 'InvalidArgument', /not targets of the run/);
      await rejectsWith(store.runs.setWaves(id, [{ name: '', nodes: ['a'] }]), 'InvalidArgument', /name/);
      await rejectsWith(store.runs.setWaves(99, [{ name: 'w', nodes: ['a'] }]), 'NotFound', /run 99 not found/);
      assert.deepEqual(
        (await store.runs.waves(id, { limit: 10 })).map((w) => [w.name, w.nodes]),
        [['one', 1]],
      );
      await rejectsWith(store.runs.waves(id, { limit: 0 }), 'InvalidArgument', /limit/);
      await rejectsWith(store.runs.nodes(id, { wave: -1, limit: 1 }), 'InvalidArgument', /wave/);
    });
  });
}
