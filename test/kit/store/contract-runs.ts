/**
 * The run part of the store contract: runs and their per-node rows, the same
 * on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../../src/store/open-store.ts';
import type { Store } from '../../../src/store/store.ts';
import type { NodeResultUpdate, RunNodeStatus, RunStore } from '../../../src/store/runs/run-store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const nodeName = (i: number) => `node-${String(i).padStart(5, '0')}`;

/** Every row of a run, paged by keyset, as [node, status, written, detail]. */
async function allRows(store: Store, run: number): Promise<unknown[]> {
  const rows = [];
  for (let afterSeq = -1; ;) {
    const page = await store.runs.nodes(run, { afterSeq, limit: 5000 });
    rows.push(...page.map((r) => [r.node, r.status, r.written, r.detail]));
    if (page.length < 5000) return rows;
    afterSeq = page.at(-1)?.seq ?? afterSeq;
  }
}

/** Register the run contract for one backend. */
export function runsContract(fixture: StoreFixture): void {
  describe('runs', () => {
    test('numbers runs 1, 2, …, keeps targets in order, and is idempotent on a key', async (t) => {
      const store = await freshStore(t, fixture);
      const before = Date.now();
      const first = await store.runs.create({ workflowId: 'update-labels/s', revision: 3, targets: ['b', 'a', 'c'] });
      assert.deepEqual(
        { ...first, createdAt: undefined, actionId: undefined, contextMarker: undefined },
        {
          id: 1,
          key: null,
          createdAt: undefined,
          workflowId: 'update-labels/s',
          revision: 3,
          dryRun: false,
          retryOf: null,
          targetCount: 3,
          startedBy: null,
          startedVia: null,
          outcome: null,
          actionId: undefined,
          contextMarker: undefined,
          executionRunId: null,
        },
      );
      assert.ok(Math.abs(first.createdAt.getTime() - before) < 60_000);
      assert.deepEqual(await store.runs.get(1), first);
      const keyed = await store.runs.create({ key: 'wf/run', dryRun: true, retryOf: 1, targets: ['x', 'y'] });
      assert.deepEqual(
        { ...keyed, createdAt: undefined, actionId: undefined, contextMarker: undefined },
        {
          id: 2,
          key: 'wf/run',
          createdAt: undefined,
          workflowId: null,
          revision: null,
          dryRun: true,
          retryOf: 1,
          targetCount: 2,
          startedBy: null,
          startedVia: null,
          outcome: null,
          actionId: undefined,
          contextMarker: undefined,
          executionRunId: null,
        },
      );
      assert.deepEqual(await store.runs.create({ key: 'wf/run', workflowId: 'other', targets: ['other'] }), keyed, 'same key, same run, unchanged');
      assert.deepEqual(
        (await store.runs.nodes(2, { limit: 10 })).map((r) => r.node),
        ['x', 'y'],
        'the second call added no target',
      );
      assert.deepEqual(await store.runs.nodes(1, { limit: 10 }), [
        { seq: 0, node: 'b', status: 'queued', written: false, detail: null },
        { seq: 1, node: 'a', status: 'queued', written: false, detail: null },
        { seq: 2, node: 'c', status: 'queued', written: false, detail: null },
      ]);
      assert.equal((await store.runs.create({ targets: ['z'] })).id, 3);
      await rejectsWith(store.runs.get(9), 'NotFound', /^run 9 not found$/);
      await rejectsWith(store.runs.counts(9), 'NotFound', /^run 9 not found$/);
      await rejectsWith(store.runs.get(0), 'InvalidArgument', /invalid run number 0/);
    });

    test('keeps who started a run and how, and records how it ended', async (t) => {
      const store = await freshStore(t, fixture);
      const run = await store.runs.create({ workflowId: 'update-labels/s', revision: 1, startedBy: 'ops-alice', startedVia: 'api', targets: ['a'] });
      assert.deepEqual([run.startedBy, run.startedVia, run.outcome], ['ops-alice', 'api', null]);
      const retried = await store.runs.create({ retryOf: run.id, startedBy: 'root', startedVia: 'retry', targets: ['a'] });
      await store.runs.setOutcome(run.id, 'partial_success');
      assert.deepEqual(await store.runs.get(run.id), { ...run, outcome: 'partial_success' });
      await store.runs.setOutcome(run.id, 'success');
      assert.equal((await store.runs.get(run.id)).outcome, 'success', 'recorded again: overwritten');
      assert.deepEqual(await store.runs.get(retried.id), retried, 'another run untouched');
      await store.runs.setOutcome(retried.id, 'rejected');
      assert.equal((await store.runs.get(retried.id)).outcome, 'rejected');
      await rejectsWith(store.runs.setOutcome(9, 'success'), 'NotFound', /^run 9 not found$/);
      await rejectsWith(
        store.runs.setOutcome(run.id, 'done' as 'success'),
        'InvalidArgument',
        /invalid run outcome "done": must be one of success, partial_success, failure, rejected/,
      );
      for (const [input, message] of [
        [{ startedBy: '', targets: ['a'] }, /invalid startedBy ""/],
        [{ startedBy: 'x'.repeat(129), targets: ['a'] }, /longer than 128 characters/],
        [{ startedVia: 'cron', targets: ['a'] }, /invalid startedVia "cron": must be one of cli, api, schedule, retry/],
      ] as const) {
        await rejectsWith(store.runs.create(input), 'InvalidArgument', message);
      }
      assert.equal((await store.runs.create({ targets: ['b'] })).id, retried.id + 1, 'the refused runs took no number');
    });

    test('runs.addNodes appends targets found while planning, each once', async (t) => {
      const store = await freshStore(t, fixture);
      await rejectsWith(store.runs.create({ targets: [] }), 'InvalidArgument');
      const run = await store.runs.create({ targets: [], targetsAtPlan: true });
      assert.equal(run.targetCount, 0);
      assert.equal(await store.runs.addNodes(run.id, ['m-2', 'm-1']), 2);
      assert.equal(await store.runs.addNodes(run.id, ['m-1', 'm-3']), 1);
      assert.deepEqual(
        (await store.runs.nodes(run.id, { limit: 10 })).map((r) => [r.seq, r.node, r.status]),
        [
          [0, 'm-2', 'queued'],
          [1, 'm-1', 'queued'],
          [2, 'm-3', 'queued'],
        ],
      );
      assert.equal((await store.runs.get(run.id)).targetCount, 3);
      await rejectsWith(store.runs.addNodes(run.id, ['x', 'x']), 'InvalidArgument');
      await rejectsWith(store.runs.addNodes(999, ['x']), 'NotFound');
    });

    test('runs.setWorkflow records the workflow ID of a run', async (t) => {
      const store = await freshStore(t, fixture);
      const run = await store.runs.create({ key: 'k', targets: ['a'] });
      await store.runs.setWorkflow(run.id, 'update-labels/site');
      assert.deepEqual(await store.runs.get(run.id), { ...run, workflowId: 'update-labels/site' });
      assert.equal((await store.runs.create({ key: 'k', targets: ['a'] })).workflowId, 'update-labels/site');
      await rejectsWith(store.runs.setWorkflow(7, 'w'), 'NotFound', /^run 7 not found$/);
      await rejectsWith(store.runs.setWorkflow(run.id, ''), 'InvalidArgument', /invalid workflow ID ""/);
    });

    test('refuses bad runs, naming the problem, and creates nothing', async (t) => {
      const store = await freshStore(t, fixture);
      const bad: [Parameters<RunStore['create']>[0], RegExp][] = [
        [{ targets: [] }, /^a run needs at least one target node$/],
        [{ targets: ['a', 'b', 'a'] }, /^target a is listed more than once$/],
        [{ targets: ['a', ''] }, /^target #2 is not a node name \(""\)$/],
        [{ targets: ['a', 42 as unknown as string] }, /^target #2 is not a node name \(42\)$/],
        [{ targets: ['x'.repeat(254)] }, /^target #1 is longer than 253 characters$/],
        [{ targets: ['a\0b'] }, /^target #1 holds a NUL character$/],
        [{ targets: 'abc' as unknown as string[] }, /at least one target/],
        [{ key: '', targets: ['a'] }, /invalid run key ""/],
        [{ workflowId: 7 as unknown as string, targets: ['a'] }, /invalid workflow ID 7/],
        [{ revision: 0, targets: ['a'] }, /invalid revision 0/],
        [{ retryOf: 1.5, targets: ['a'] }, /invalid run number to retry 1.5/],
        [{ dryRun: 'yes' as unknown as boolean, targets: ['a'] }, /invalid dryRun "yes"/],
      ];
      for (const [input, message] of bad) await rejectsWith(store.runs.create(input), 'InvalidArgument', message);
      // Validation comes first even when the key exists.
      await store.runs.create({ key: 'k', targets: ['a'] });
      await rejectsWith(store.runs.create({ key: 'k', targets: [] }), 'InvalidArgument');
      const longest = 'x'.repeat(253);
      const run = await store.runs.create({ targets: [longest] });
      assert.equal(run.id, 2, 'refused calls took no run number');
      assert.deepEqual(
        (await store.runs.nodes(run.id, { limit: 1 })).map((r) => r.node),
        [longest],
      );
    });

    test('records results: statuses, details, observed state; written stays true; counts', async (t) => {
      const store = await freshStore(t, fixture);
      const run = (await store.runs.create({ targets: ['a', 'b', 'c', 'd'] })).id;
      await store.runs.setNodeResults(run, [
        { node: 'a', status: 'pending', observed: { resourceVersion: '5', labels: { k: 'v' } } },
        { node: 'b', status: 'success', detail: { unchanged: 3 } },
        { node: 'c', status: 'failure', detail: { error: { type: 'NodeNotFound', message: 'gone' } } },
      ]);
      assert.deepEqual(await store.runs.observedState(run, 'a'), { resourceVersion: '5', labels: { k: 'v' } });
      assert.equal(await store.runs.observedState(run, 'b'), null);
      assert.equal(await store.runs.observedState(run, 'nobody'), null);
      assert.equal(await store.runs.observedState(99, 'a'), null);
      await store.runs.setNodeResults(run, [{ node: 'a', status: 'success', written: true, detail: { set: { k: 'w' } }, observed: null }]);
      await store.runs.setNodeResults(run, [
        { node: 'a', status: 'success', written: false },
        { node: 'b', status: 'success' },
      ]);
      assert.equal(await store.runs.observedState(run, 'a'), null, 'null clears observed');
      assert.deepEqual(await store.runs.nodes(run, { limit: 2 }), [
        { seq: 0, node: 'a', status: 'success', written: true, detail: { set: { k: 'w' } } },
        { seq: 1, node: 'b', status: 'success', written: false, detail: { unchanged: 3 } },
      ]);
      assert.deepEqual(await store.runs.counts(run), { total: 4, queued: 1, pending: 0, success: 2, failure: 1, cancelled: 0, written: 1 });
      assert.deepEqual(await store.runs.node(run, 'a'), { seq: 0, node: 'a', status: 'success', written: true, detail: { set: { k: 'w' } } });
      assert.deepEqual(await store.runs.node(run, 'd'), { seq: 3, node: 'd', status: 'queued', written: false, detail: null });
      assert.equal(await store.runs.node(run, 'nobody'), null);
      assert.equal(await store.runs.node(99, 'a'), null);
      await store.runs.setNodeResults(run, [{ node: 'b', status: 'success', detail: null }]);
      assert.equal((await store.runs.nodes(run, { afterSeq: 0, limit: 1 }))[0]?.detail, null, 'null clears detail');
      await store.runs.setNodeResults(run, []);
    });

    test('several updates of one node in a call apply in order', async (t) => {
      const store = await freshStore(t, fixture);
      const run = (await store.runs.create({ targets: ['a', 'b'] })).id;
      await store.runs.setNodeResults(run, [
        { node: 'a', status: 'pending', written: true, detail: { attempts: 1 }, observed: { v: 1 } },
        { node: 'b', status: 'pending', observed: { v: 2 } },
        { node: 'a', status: 'failure', written: false, observed: null },
        { node: 'b', status: 'success', detail: { attempts: 2 } },
      ]);
      assert.deepEqual(await store.runs.nodes(run, { limit: 5 }), [
        { seq: 0, node: 'a', status: 'failure', written: true, detail: { attempts: 1 } },
        { seq: 1, node: 'b', status: 'success', written: false, detail: { attempts: 2 } },
      ]);
      assert.equal(await store.runs.observedState(run, 'a'), null);
      assert.deepEqual(await store.runs.observedState(run, 'b'), { v: 2 });
    });

    test('a refused batch of results writes nothing, even past the first 500', async (t) => {
      const store = await freshStore(t, fixture);
      const targets = Array.from({ length: 1200 }, (_, i) => nodeName(i));
      const run = (await store.runs.create({ targets })).id;
      const updates: NodeResultUpdate[] = targets.map((node) => ({ node, status: 'success', written: true }));
      updates.splice(1100, 0, { node: 'stranger', status: 'success' }, { node: 'other', status: 'success' });
      await rejectsWith(store.runs.setNodeResults(run, updates), 'InvalidArgument', /^run 1 has no target node stranger \(and 1 more\)$/);
      await rejectsWith(store.runs.setNodeResults(run, [{ node: '', status: 'success' }]), 'InvalidArgument', /^run 1 has no target node ""$/);
      await rejectsWith(store.runs.setNodeResults(run, [{ node: 'a\0', status: 'success' }]), 'InvalidArgument', /no target node/);
      await rejectsWith(store.runs.setNodeResults(run, [{ node: nodeName(0), status: 'done' as 'success' }]), 'InvalidArgument', /invalid node status "done"/);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await rejectsWith(
        store.runs.setNodeResults(run, [{ node: nodeName(0), status: 'success', observed: cyclic }]),
        'InvalidArgument',
        /observed state of node node-00000 is not JSON-serialisable/,
      );
      await rejectsWith(store.runs.setNodeResults(9, [{ node: nodeName(0), status: 'success' }]), 'NotFound', /^run 9 not found$/);
      assert.deepEqual(await store.runs.counts(run), { total: 1200, queued: 1200, pending: 0, success: 0, failure: 0, cancelled: 0, written: 0 });
      await store.runs.setNodeResults(
        run,
        updates.filter((u) => u.node.startsWith('node-')),
      );
      assert.deepEqual(await store.runs.counts(run), { total: 1200, queued: 0, pending: 0, success: 1200, failure: 0, cancelled: 0, written: 1200 });
    });

    test('creates and pages 50,000 targets in order by keyset and offset, filtered by status', { timeout: 120_000 }, async (t) => {
      const store = await freshStore(t, fixture);
      const targets = Array.from({ length: 50_000 }, (_, i) => nodeName(i));
      const run = (await store.runs.create({ workflowId: 'w', targets })).id;
      assert.equal((await store.runs.get(run)).targetCount, 50_000);
      // Every 1000th (from 7) fails; every 1000th (from 500) is pending.
      const failed = targets.filter((_, i) => i % 1000 === 7);
      const pending = targets.filter((_, i) => i % 1000 === 500);
      await store.runs.setNodeResults(run, [
        ...failed.map((node) => ({ node, status: 'failure' as const, detail: { error: { type: 'Forbidden', message: node } } })),
        ...pending.map((node) => ({ node, status: 'pending' as const })),
      ]);
      assert.deepEqual(
        await allRows(store, run),
        targets.map((node) => {
          const i = Number(node.slice(5));
          if (i % 1000 === 7) return [node, 'failure', false, { error: { type: 'Forbidden', message: node } }];
          return [node, i % 1000 === 500 ? 'pending' : 'queued', false, null];
        }),
      );
      const names = (rows: { node: string }[]) => rows.map((r) => r.node);
      assert.deepEqual(names(await store.runs.nodes(run, { status: ['failure'], offset: 10, limit: 5 })), failed.slice(10, 15));
      assert.deepEqual(names(await store.runs.nodes(run, { status: 'failure', afterSeq: 10_007, limit: 3 })), failed.slice(11, 14));
      const either = await store.runs.nodes(run, { status: ['pending', 'failure'], afterSeq: 1000, limit: 4 });
      assert.deepEqual(
        either.map((r) => [r.seq, r.status]),
        [
          [1007, 'failure'],
          [1500, 'pending'],
          [2007, 'failure'],
          [2500, 'pending'],
        ],
      );
      assert.deepEqual(names(await store.runs.nodes(run, { status: ['pending', 'failure'], afterSeq: 1000, offset: 2, limit: 2 })), names(either.slice(2)));
      assert.deepEqual(names(await store.runs.nodes(run, { offset: 49_998, limit: 5000 })), targets.slice(49_998));
      assert.deepEqual(await store.runs.nodes(run, { status: 'success', limit: 10 }), []);
      assert.deepEqual(await store.runs.nodes(run, { status: [], limit: 10 }), [], 'no status matches nothing');
      assert.deepEqual(await store.runs.counts(run), { total: 50_000, queued: 49_900, pending: 50, success: 0, failure: 50, cancelled: 0, written: 0 });
    });

    test('refuses bad page queries', async (t) => {
      const store = await freshStore(t, fixture);
      const run = (await store.runs.create({ targets: ['a'] })).id;
      await rejectsWith(store.runs.nodes(run, { limit: 5001 }), 'InvalidArgument', /^limit must be an integer from 1 to 5000, not 5001$/);
      await rejectsWith(store.runs.nodes(run, { limit: 0 }), 'InvalidArgument', /limit must be/);
      await rejectsWith(store.runs.nodes(run, { limit: 1.5 }), 'InvalidArgument', /limit must be/);
      await rejectsWith(store.runs.nodes(run, { limit: 1, offset: -1 }), 'InvalidArgument', /^offset must be a non-negative integer, not -1$/);
      await rejectsWith(store.runs.nodes(run, { limit: 1, afterSeq: Number.NaN }), 'InvalidArgument', /^afterSeq must be an integer, not NaN$/);
      await rejectsWith(
        store.runs.nodes(run, { limit: 1, status: ['queued', 'lost'] as unknown as RunNodeStatus[] }),
        'InvalidArgument',
        /invalid node status "lost"/,
      );
      assert.equal((await store.runs.nodes(run, { limit: 5000 })).length, 1);
    });

    test('runs.discard deletes a run and its rows, idempotently, and leaves the others', async (t) => {
      const store = await freshStore(t, fixture);
      const keep = (await store.runs.create({ targets: ['a', 'b'] })).id;
      const drop = (await store.runs.create({ key: 'gone', targets: ['a', 'c'] })).id;
      await store.runs.setNodeResults(drop, [{ node: 'a', status: 'success', observed: { x: 1 } }]);
      await store.runs.discard(drop);
      await store.runs.discard(drop);
      await store.runs.discard(42);
      await rejectsWith(store.runs.get(drop), 'NotFound');
      await rejectsWith(store.runs.counts(drop), 'NotFound');
      assert.deepEqual(await store.runs.nodes(drop, { limit: 10 }), []);
      assert.equal(await store.runs.observedState(drop, 'a'), null);
      assert.deepEqual((await store.runs.counts(keep)).total, 2);
      const again = await store.runs.create({ key: 'gone', targets: ['d'] });
      assert.deepEqual([again.id, again.targetCount], [drop, 1], 'the key is free again; numbering has no gap');
    });

    test('a cancelled run settles its unfinished rows as cancelled, keeps the final ones, and can say it was cancelled', async (t) => {
      const store = await freshStore(t, fixture);
      const { id: run } = await store.runs.create({ targets: ['a', 'b', 'c', 'd', 'e'] });
      const other = (await store.runs.create({ targets: ['a'] })).id;
      await store.runs.setNodeResults(run, [
        { node: 'a', status: 'success', written: true, detail: { set: { k: 'v' } }, observed: null },
        { node: 'b', status: 'failure', detail: { error: { type: 'Forbidden', message: 'no' } } },
        { node: 'c', status: 'pending', observed: { labels: {} } },
      ]);
      const detail = { error: { type: 'NotStarted', message: 'the run was cancelled before this node was started' } };
      assert.equal(await store.runs.cancelNodes(run, detail), 3, 'the pending and the two queued rows');
      assert.deepEqual(
        (await store.runs.nodes(run, { limit: 10 })).map((r) => [r.node, r.status, r.written, r.detail]),
        [
          ['a', 'success', true, { set: { k: 'v' } }],
          ['b', 'failure', false, { error: { type: 'Forbidden', message: 'no' } }],
          ['c', 'cancelled', false, detail],
          ['d', 'cancelled', false, detail],
          ['e', 'cancelled', false, detail],
        ],
      );
      assert.equal(await store.runs.observedState(run, 'c'), null, 'the observed state of a cancelled node is dropped');
      assert.deepEqual(await store.runs.counts(run), { total: 5, queued: 0, pending: 0, success: 1, failure: 1, cancelled: 3, written: 1 });
      assert.deepEqual(
        (await store.runs.nodes(run, { status: 'cancelled', limit: 10 })).map((r) => r.node),
        ['c', 'd', 'e'],
      );
      assert.equal(await store.runs.cancelNodes(run, detail), 0, 'idempotent');
      assert.equal((await store.runs.node(other, 'a'))?.status, 'queued', 'another run untouched');
      await store.runs.setOutcome(run, 'cancelled');
      assert.equal((await store.runs.get(run)).outcome, 'cancelled');
      await rejectsWith(store.runs.cancelNodes(99, detail), 'NotFound', /^run 99 not found$/);
    });

    test('runs created concurrently through two connections get distinct, consecutive numbers', { timeout: 60_000 }, async (t) => {
      const url = await fixture.freshUrl();
      const stores = await Promise.all([openStore(url), openStore(url)]);
      t.after(() => Promise.all(stores.map((s) => s.close())));
      const created = await Promise.all(
        stores.flatMap((store, w) => Array.from({ length: 10 }, (_, i) => store.runs.create({ key: `${w}:${i}`, targets: [`w${w}-${i}-a`, `w${w}-${i}-b`] }))),
      );
      assert.deepEqual(
        created.map((r) => r.id).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      for (const run of created) {
        const [w, i] = (run.key ?? '').split(':');
        assert.deepEqual(
          (await stores[0].runs.nodes(run.id, { limit: 5 })).map((r) => r.node),
          [`w${w}-${i}-a`, `w${w}-${i}-b`],
        );
      }
    });

    test('a closed store refuses run calls with Closed', async () => {
      const store = await openStore(await fixture.freshUrl());
      await store.runs.create({ targets: ['a'] });
      await store.close();
      await rejectsWith(store.runs.get(1), 'Closed');
      await rejectsWith(store.runs.create({ targets: ['b'] }), 'Closed');
      await rejectsWith(store.runs.setNodeResults(1, [{ node: 'a', status: 'success' }]), 'Closed');
      await rejectsWith(store.runs.nodes(1, { limit: 1 }), 'Closed');
    });
  });
}
