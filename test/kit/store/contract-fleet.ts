/**
 * The fleet registry's part of the store contract: sites added, read back,
 * listed in name order a page at a time and removed; a second site of one
 * name or one task queue refused, a bad entry refused, and neither changes
 * anything; the same on every backend, also when two processes register
 * the same queue at once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultTaskQueue, type FleetSite } from '../../../src/core/fleet/sites.ts';
import { openStore } from '../../../src/store/open-store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const site = (name: string, labels: Record<string, string> = {}): FleetSite => ({ name, taskQueue: defaultTaskQueue(name), labels });

/** Register the fleet registry contract for one backend. */
export function fleetContract(fixture: StoreFixture): void {
  describe('the fleet registry', () => {
    test('adds, reads back, lists a page at a time in name order, counts and removes sites', async (t) => {
      const store = await freshStore(t, fixture);
      assert.deepEqual(await store.fleet.list(), []);
      const added = await store.fleet.add(site('edge-02', { type: 'edge', region: 'east' }), 'ops');
      assert.deepEqual([added.name, added.taskQueue, added.addedBy], ['edge-02', 'relabel-edge-02', 'ops']);
      await store.fleet.add(site('edge-01'));
      await store.fleet.add({ name: 'core', taskQueue: 'core-queue', labels: {} });
      const read = await store.fleet.get('edge-02');
      assert.deepEqual(read && { ...read, addedAt: undefined }, { ...site('edge-02', { region: 'east', type: 'edge' }), addedAt: undefined, addedBy: 'ops' });
      assert.ok(read?.addedAt instanceof Date);
      assert.deepEqual(Object.keys(read?.labels ?? {}), ['region', 'type'], 'labels by key');
      assert.deepEqual(
        (await store.fleet.list({ limit: 2 })).map((s) => s.name),
        ['core', 'edge-01'],
      );
      assert.deepEqual(
        (await store.fleet.list({ after: 'edge-01' })).map((s) => s.name),
        ['edge-02'],
      );
      assert.equal(await store.fleet.count(), 3);
      assert.equal(await store.fleet.remove('edge-01'), true);
      assert.equal(await store.fleet.remove('edge-01'), false);
      assert.equal(await store.fleet.get('edge-01'), null);
      assert.equal(await store.fleet.count(), 2);
    });

    test('refuses a second site of one name or one task queue, and a bad entry, changing nothing', async (t) => {
      const store = await freshStore(t, fixture);
      await store.fleet.add(site('edge-01'));
      await rejectsWith(store.fleet.add({ ...site('edge-01'), taskQueue: 'other' }), 'Conflict', /^site edge-01 is already registered$/);
      await rejectsWith(
        store.fleet.add({ name: 'edge-02', taskQueue: 'relabel-edge-01', labels: {} }),
        'Conflict',
        /^task queue relabel-edge-01 is already site edge-01's: each site's worker polls a queue of its own$/,
      );
      await rejectsWith(store.fleet.add({ name: 'Edge_03', taskQueue: 'q', labels: {} }), 'InvalidArgument', /site name "Edge_03"/);
      await rejectsWith(store.fleet.add({ name: 'edge-04', taskQueue: 'q 4', labels: { 'bad key!': 'v' } }), 'InvalidArgument', /site edge-04: task queue/);
      await rejectsWith(store.fleet.list({ limit: 0 }), 'InvalidArgument');
      assert.deepEqual(
        (await store.fleet.list()).map((s) => [s.name, s.taskQueue]),
        [['edge-01', 'relabel-edge-01']],
      );
    });

    test('two registrations of one task queue at once: one wins, the other is refused', async (t) => {
      const url = await fixture.freshUrl();
      const [a, b] = [await openStore(url), await openStore(url)];
      t.after(() => Promise.all([a.close(), b.close()]));
      const results = await Promise.allSettled([
        a.fleet.add({ name: 'one', taskQueue: 'shared', labels: {} }),
        b.fleet.add({ name: 'two', taskQueue: 'shared', labels: {} }),
      ]);
      assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
      assert.equal(await a.fleet.count(), 1);
    });
  });
}
