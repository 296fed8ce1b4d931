/**
 * The run half of the store contract: runs and their per-node rows, the same
 * on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

/** Register the run contract for one backend. */
export function runsContract(fixture: StoreFixture): void {
  describe('runs', () => {
    test('numbers runs 1, 2, …, keeps targets in order, and is idempotent on a key', async (t) => {
      const store = await freshStore(t, fixture);
      const first = await store.createRun({ workflowId: 'update-labels/s', revision: 3, targets: ['b', 'a', 'c'] });
      assert.deepEqual({ ...first, createdAt: undefined }, { id: 1, key: null, createdAt: undefined, workflowId: 'update-labels/s', revision: 3, dryRun: false, retryOf: null, targetCount: 3 });
      const keyed = await store.createRun({ key: 'wf/run', dryRun: true, retryOf: 1, targets: ['x'] });
      assert.equal(keyed.id, 2);
      assert.equal((await store.createRun({ key: 'wf/run', targets: ['other'] })).id, 2, 'same key, same run');
      assert.deepEqual((await store.runNodes(1, { limit: 10 })).map((r) => [r.seq, r.node, r.status, r.written, r.detail]), [
        [0, 'b', 'queued', false, null],
        [1, 'a', 'queued', false, null],
        [2, 'c', 'queued', false, null],
      ]);
      assert.deepEqual((await store.getRun(2)).dryRun, true);
      await rejectsWith(store.getRun(9), 'NotFound', /run 9 not found/);
      await rejectsWith(store.runCounts(9), 'NotFound', /run 9 not found/);
    });

    test('refuses bad target lists, naming the problem, and creates nothing', async (t) => {
      const store = await freshStore(t, fixture);
      await rejectsWith(store.createRun({ targets: [] }), 'InvalidArgument', /at least one target/);
      await rejectsWith(store.createRun({ targets: ['a', 'a'] }), 'InvalidArgument', /target a is listed more than once/);
      await rejectsWith(store.createRun({ targets: ['a', ''] }), 'InvalidArgument', /target #2 is not a node name/);
      await rejectsWith(store.createRun({ targets: ['x'.repeat(254)] }), 'InvalidArgument', /longer than 253/);
      assert.equal((await store.createRun({ targets: ['a'] })).id, 1);
    });

    test('records results: statuses, details, observed state; written stays true; counts', async (t) => {
      const store = await freshStore(t, fixture);
      const run = (await store.createRun({ targets: ['a', 'b', 'c', 'd'] })).id;
      await store.setNodeResults(run, [
        { node: 'a', status: 'pending', observed: { resourceVersion: '5', labels: { k: 'v' } } },
        { node: 'b', status: 'success', detail: { unchanged: 3 } },
        { node: 'c', status: 'failure', detail: { error: { type: 'NodeNotFound', message: 'gone' } } },
      ]);
      assert.deepEqual(await store.observedState(run, 'a'), { resourceVersion: '5', labels: { k: 'v' } });
      await store.setNodeResults(run, [{ node: 'a', status: 'success', written: true, detail: { set: { k: 'w' } }, observed: null }]);
      await store.setNodeResults(run, [{ node: 'a', status: 'success', written: false }]);
      assert.equal(await store.observedState(run, 'a'), null);
      const a = (await store.runNodes(run, { limit: 1 }))[0];
      assert.deepEqual(a, { seq: 0, node: 'a', status: 'success', written: true, detail: { set: { k: 'w' } } });
      assert.deepEqual(await store.runCounts(run), { total: 4, queued: 1, pending: 0, success: 2, failure: 1, written: 1 });
      await rejectsWith(store.setNodeResults(run, [{ node: 'b', status: 'failure' }, { node: 'zz', status: 'success' }]), 'InvalidArgument', /no target node zz/);
      assert.equal((await store.runNodes(run, { status: 'failure', limit: 10 })).length, 1, 'nothing of the refused batch was written');
    });

    test('pages 50,000 targets by keyset and offset, filtered by status; discards a run', async (t) => {
      const store = await freshStore(t, fixture);
      const targets = Array.from({ length: 50_000 }, (_, i) => `node-${String(i).padStart(5, '0')}`);
      const run = (await store.createRun({ targets })).id;
      await store.setNodeResults(run, targets.filter((_, i) => i % 1000 === 7).map((node) => ({ node, status: 'failure' as const })));
      const seen: string[] = [];
      for (let afterSeq = -1; ; ) {
        const rows = await store.runNodes(run, { afterSeq, limit: 5000 });
        seen.push(...rows.map((r) => r.node));
        if (rows.length < 5000) break;
        afterSeq = rows.at(-1)?.seq ?? afterSeq;
      }
      assert.deepEqual(seen, targets);
      const failed = await store.runNodes(run, { status: ['failure'], offset: 10, limit: 5 });
      assert.deepEqual(failed.map((r) => r.node), [10, 11, 12, 13, 14].map((k) => `node-${String(k * 1000 + 7).padStart(5, '0')}`));
      assert.equal((await store.runCounts(run)).failure, 50);
      await rejectsWith(store.runNodes(run, { limit: 5001 }), 'InvalidArgument', /limit must be 1 to 5000/);
      await store.discardRun(run);
      await rejectsWith(store.getRun(run), 'NotFound');
      assert.deepEqual(await store.runNodes(run, { limit: 10 }), []);
    });
  });
}
