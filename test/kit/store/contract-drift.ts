/**
 * The drift part of the store contract: reports and their per-node rows,
 * the same on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { emptyDriftCounts } from '../../../src/core/plan/drift.ts';
import { DRIFT_REPORTS_KEPT, type DriftNodeRow } from '../../../src/store/drift/drift-store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const keys = { labels: [{ key: 'role', change: 'changed' as const, want: 'a', have: 'b' }], annotations: [], taints: [], records: [] };

/** Register the drift contract for one backend. */
export function driftContract(fixture: StoreFixture): void {
  describe('drift reports', () => {
    test('numbers reports, keeps rows paged and filtered, and finds the latest finished one per site', async (t) => {
      const store = await freshStore(t, fixture);
      const first = await store.drift.createReport({ key: 'relabel-drift/s/run-1', site: 's', revision: 2, workflowId: 'relabel-drift/s', action: 'heal' });
      assert.deepEqual(
        { ...first, createdAt: undefined },
        {
          id: 1,
          key: 'relabel-drift/s/run-1',
          createdAt: undefined,
          finishedAt: null,
          site: 's',
          revision: 2,
          workflowId: 'relabel-drift/s',
          action: 'heal',
          counts: null,
          heal: null,
        },
      );
      const rows: DriftNodeRow[] = Array.from({ length: 1200 }, (_, i) => ({
        seq: i,
        node: `n${String(i).padStart(4, '0')}`,
        state: i % 3 === 0 ? 'drifted' : i % 3 === 1 ? 'pending' : 'missing',
        revision: i % 3 === 2 ? null : 1 + (i % 2),
        detail: i % 3 === 0 ? { run: 4, keys } : {},
      }));
      await store.drift.addNodes(1, rows);
      assert.equal(await store.drift.latestReport('s'), null, 'an unfinished report is not the latest');
      const counts = { ...emptyDriftCounts(), total: 1300, drifted: 400, pending: 400, missing: 400, in_sync: 100 };
      await store.drift.finishReport(1, counts);
      await store.drift.setHeal(1, { skipped: 'RunInProgress' });
      const latest = await store.drift.latestReport('s');
      assert.deepEqual(latest?.counts, counts);
      assert.deepEqual(latest?.heal, { skipped: 'RunInProgress' });
      assert.ok(latest?.finishedAt instanceof Date);
      assert.equal(await store.drift.latestReport('other'), null);
      assert.equal((await store.drift.latestReport())?.id, 1);
      const drifted = await store.drift.nodes(1, { states: ['drifted'], limit: 5000 });
      assert.equal(drifted.length, 400);
      assert.deepEqual(drifted[0], { seq: 0, node: 'n0000', state: 'drifted', revision: 1, detail: { run: 4, keys } });
      assert.deepEqual((await store.drift.nodes(1, { states: ['drifted'], revision: 2, limit: 5000 })).map((r) => r.seq).slice(0, 3), [3, 9, 15]);
      assert.deepEqual(
        (await store.drift.nodes(1, { offset: 1198, limit: 10 })).map((r) => r.node),
        ['n1198', 'n1199'],
      );
      assert.deepEqual(
        (await store.drift.nodes(1, { afterSeq: 1197, limit: 1 })).map((r) => r.seq),
        [1198],
      );
      assert.deepEqual(await store.drift.nodes(1, { states: [], limit: 10 }), []);
      assert.deepEqual(await store.drift.nodes(9, { limit: 10 }), []);
    });

    test("finds a node set's rows and counts them by state, a name with LIKE's wildcards matched exactly", async (t) => {
      const store = await freshStore(t, fixture);
      const report = await store.drift.createReport({ site: 's', revision: 1, action: 'report' });
      const sets = ['md', 'md_0', 'mdx0', 'pool%', 'a\\b', undefined];
      const rows: DriftNodeRow[] = Array.from({ length: 60 }, (_, i) => {
        const nodeSet = sets[i % sets.length];
        return {
          seq: i,
          node: `n${i}`,
          state: i % 4 === 0 ? 'drifted' : 'unmanaged',
          revision: 1,
          ...(nodeSet !== undefined ? { nodeSet } : {}),
          detail: i % 2 === 0 ? { run: 3, keys } : {},
        };
      });
      await store.drift.addNodes(report.id, rows);
      for (const set of sets.filter((x) => x !== undefined)) {
        const want = rows.filter((r) => r.nodeSet === set);
        assert.deepEqual(await store.drift.nodes(report.id, { nodeSet: set, limit: 100 }), want, set);
        const drifted = want.filter((r) => r.state === 'drifted').length;
        assert.deepEqual(
          await store.drift.countNodes(report.id, { nodeSet: set }),
          { drifted, moved: 0, pending: 0, unmanaged: want.length - drifted, missing: 0, orphaned: 0 },
          set,
        );
      }
      assert.deepEqual((await store.drift.nodes(report.id, { limit: 1 }))[0], rows[0], 'a member row reads back with its set');
      assert.equal((await store.drift.nodes(report.id, { nodeSet: 'md', states: ['drifted'], limit: 100 })).length, 5);
      assert.deepEqual(await store.drift.nodes(report.id, { nodeSet: 'm', limit: 100 }), []);
      assert.deepEqual(await store.drift.countNodes(report.id), { drifted: 15, moved: 0, pending: 0, unmanaged: 45, missing: 0, orphaned: 0 });
    });

    test('keeps moved and orphaned rows with the set they were written as, counts them, and reads earlier counts with none of either', async (t) => {
      const store = await freshStore(t, fixture);
      const report = await store.drift.createReport({ site: 's', revision: 3, action: 'report' });
      const rows: DriftNodeRow[] = [
        { seq: 0, node: 'kp-1', state: 'moved', revision: 3, nodeSet: 'gpu', detail: { run: 5, changes: 1, lastSet: 'general' } },
        { seq: 1, node: 'kp-2', state: 'orphaned', revision: 3, detail: { run: 5, lastSet: 'general' } },
        { seq: 2, node: 'bm-gone', state: 'orphaned', revision: 1, detail: { run: 2 } },
      ];
      await store.drift.addNodes(report.id, rows);
      assert.deepEqual(await store.drift.nodes(report.id, { states: ['orphaned'], limit: 10 }), rows.slice(1));
      assert.deepEqual(await store.drift.nodes(report.id, { states: ['moved'], nodeSet: 'gpu', limit: 10 }), rows.slice(0, 1));
      assert.deepEqual(await store.drift.countNodes(report.id), { drifted: 0, moved: 1, pending: 0, unmanaged: 0, missing: 0, orphaned: 2 });
      // A report finished before moved and orphaned were counted.
      const { moved: _moved, orphaned: _orphaned, ...earlier } = { ...emptyDriftCounts(), total: 3, drifted: 3 };
      await store.drift.finishReport(report.id, earlier as ReturnType<typeof emptyDriftCounts>);
      assert.deepEqual((await store.drift.getReport(report.id)).counts, { ...emptyDriftCounts(), total: 3, drifted: 3 });
    });

    test('a retried detection (same key) gets its report back, emptied', async (t) => {
      const store = await freshStore(t, fixture);
      const input = { key: 'k', site: 's', revision: 1, action: 'report' };
      const report = await store.drift.createReport(input);
      await store.drift.addNodes(report.id, [{ seq: 0, node: 'a', state: 'missing', revision: null, detail: {} }]);
      assert.equal((await store.drift.createReport(input)).id, report.id);
      assert.deepEqual(await store.drift.nodes(report.id, { limit: 10 }), []);
      await store.drift.addNodes(report.id, [{ seq: 0, node: 'a', state: 'missing', revision: null, detail: {} }]);
      await store.drift.finishReport(report.id, { ...emptyDriftCounts(), total: 1, missing: 1 });
      const again = await store.drift.createReport(input);
      assert.deepEqual({ id: again.id, counts: again.counts, finishedAt: again.finishedAt }, { id: report.id, counts: null, finishedAt: null });
      assert.deepEqual(await store.drift.nodes(report.id, { limit: 10 }), []);
      assert.equal(await store.drift.latestReport('s'), null);
    });

    test(`keeps the newest ${DRIFT_REPORTS_KEPT} reports of a site`, async (t) => {
      const store = await freshStore(t, fixture);
      const other = await store.drift.createReport({ site: 'other', revision: 1, action: 'report' });
      for (let i = 0; i < DRIFT_REPORTS_KEPT + 2; i++) {
        const r = await store.drift.createReport({ site: 's', revision: 1, action: 'report' });
        await store.drift.addNodes(r.id, [{ seq: 0, node: 'a', state: 'missing', revision: null, detail: {} }]);
      }
      await rejectsWith(store.drift.getReport(2), 'NotFound', /^drift report 2 not found$/);
      await rejectsWith(store.drift.getReport(3), 'NotFound');
      assert.equal((await store.drift.getReport(4)).site, 's');
      assert.equal((await store.drift.getReport(other.id)).site, 'other', 'other sites are not pruned');
      assert.deepEqual(await store.drift.nodes(2, { limit: 10 }), [], 'rows of pruned reports are gone');
    });

    test('refuses bad input, naming it', async (t) => {
      const store = await freshStore(t, fixture);
      await rejectsWith(store.drift.createReport({ site: '', revision: 1, action: 'report' }), 'InvalidArgument', /invalid site ""/);
      await rejectsWith(store.drift.createReport({ site: 's', revision: 0, action: 'report' }), 'InvalidArgument', /invalid revision 0/);
      const r = await store.drift.createReport({ site: 's', revision: 1, action: 'report' });
      await rejectsWith(
        store.drift.addNodes(r.id, [{ seq: 0, node: 'a', state: 'weird' as 'missing', revision: null, detail: {} }]),
        'InvalidArgument',
        /invalid drift state "weird"/,
      );
      await rejectsWith(store.drift.addNodes(99, [{ seq: 0, node: 'a', state: 'missing', revision: null, detail: {} }]), 'NotFound', /drift report 99/);
      await rejectsWith(store.drift.nodes(r.id, { limit: 0 }), 'InvalidArgument', /invalid limit 0/);
      await rejectsWith(store.drift.finishReport(77, emptyDriftCounts()), 'NotFound', /drift report 77/);
    });
  });
}
