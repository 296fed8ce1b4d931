/**
 * The action part of the store contract: each run's Shipyard action id (a
 * ULID), context marker, Temporal run id and command audit, the same on
 * every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../../src/store/open-store.ts';
import { isUlid, ulidTime } from '../../../src/store/ulid.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Register the action contract for one backend. */
export function actionsContract(fixture: StoreFixture): void {
  describe('actions', () => {
    test('every run gets an increasing ULID action id and a context marker, and is found by its id', async (t) => {
      const store = await freshStore(t, fixture);
      const before = Date.now();
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push(await store.runs.create({ workflowId: 'update-labels/s', startedBy: 'ops', targets: [`n${i}`] }));
      const ids = runs.map((r) => r.actionId ?? '');
      assert.ok(ids.every(isUlid), ids.join(' '));
      assert.deepEqual([...ids].sort(), ids, 'ids increase with the run number');
      assert.equal(new Set(ids).size, ids.length);
      for (const id of ids) assert.ok(ulidTime(id) >= before - 1000 && ulidTime(id) <= Date.now() + 1000);
      assert.ok(runs.every((r) => UUID.test(r.contextMarker ?? '')));
      assert.equal(new Set(runs.map((r) => r.contextMarker)).size, runs.length);
      assert.equal(runs[0]?.executionRunId, null);

      const given = await store.runs.create({ targets: ['a'], contextMarker: '0b8f3c3e-4f5a-4d2b-9a51-6a1c2f3e4d5b' });
      assert.equal(given.contextMarker, '0b8f3c3e-4f5a-4d2b-9a51-6a1c2f3e4d5b');
      await rejectsWith(store.runs.create({ targets: ['a'], contextMarker: 'not-a-uuid' }), 'InvalidArgument', /contextMarker/);

      const third = runs[2];
      assert.ok(third?.actionId);
      assert.deepEqual(await store.runs.byActionId(third.actionId), third);
      await store.actions.setExecution(third.id, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal((await store.runs.byActionId(third.actionId))?.executionRunId, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal((await store.runs.get(third.id)).executionRunId, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal(await store.runs.byActionId('01ARYZ6S410000000000000000'), null, 'a ULID of no run');
      assert.equal(await store.runs.byActionId('not a ulid'), null);
      await rejectsWith(store.actions.setExecution(99, 'x'), 'NotFound', /run 99 not found/);
      await rejectsWith(store.actions.setExecution(third.id, ''), 'InvalidArgument', /execution run id/);
    });

    test('ids keep increasing across two connections to one store', async (t) => {
      const url = await fixture.freshUrl();
      const one = await openStore(url);
      t.after(() => one.close());
      const two = await openStore(url);
      t.after(() => two.close());
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await (i % 2 === 0 ? one : two).runs.create({ targets: ['a'] })).actionId ?? '');
      assert.deepEqual([...ids].sort(), ids);
      assert.equal(new Set(ids).size, ids.length);
    });

    test('the command audit starts with invoke and keeps the newest commands in order', async (t) => {
      const store = await freshStore(t, fixture);
      const run = await store.runs.create({ startedBy: 'ops-alice', startedVia: 'api', targets: ['a'] });
      const [invoke] = await store.actions.commands(run.id);
      assert.equal(invoke?.command, 'invoke');
      assert.equal(invoke?.user, 'ops-alice');
      assert.equal(invoke?.at.getTime(), run.createdAt.getTime());
      const pause = await store.actions.recordCommand(run.id, 'pause', 'ops-bob');
      await store.actions.recordCommand(run.id, 'unpause', null);
      await store.actions.recordCommand(run.id, 'stop', 'ops-bob');
      const all = await store.actions.commands(run.id);
      assert.deepEqual(
        all.map((c) => [c.command, c.user]),
        [
          ['invoke', 'ops-alice'],
          ['pause', 'ops-bob'],
          ['unpause', null],
          ['stop', 'ops-bob'],
        ],
      );
      assert.deepEqual(all[1], pause);
      assert.ok(all.every((c) => isUlid(c.id)));
      assert.deepEqual(
        (await store.actions.commands(run.id, 2)).map((c) => c.command),
        ['unpause', 'stop'],
        'the newest two, oldest first',
      );
      assert.deepEqual(await store.actions.commands(run.id + 1), [], 'no run, no commands');
      const anonymous = await store.runs.create({ targets: ['b'] });
      assert.deepEqual(
        (await store.actions.commands(anonymous.id)).map((c) => [c.command, c.user]),
        [['invoke', null]],
      );

      await rejectsWith(store.actions.recordCommand(99, 'stop', 'x'), 'NotFound', /run 99 not found/);
      await rejectsWith(store.actions.recordCommand(run.id, 'Stop!', 'x'), 'InvalidArgument', /invalid action command/);
      await rejectsWith(store.actions.recordCommand(run.id, 'stop', ''), 'InvalidArgument', /user/);
      await rejectsWith(store.actions.commands(run.id, 0), 'InvalidArgument', /limit/);
      await rejectsWith(store.actions.commands(run.id, 101), 'InvalidArgument', /limit/);
      assert.equal((await store.actions.commands(run.id)).length, 4, 'refused commands left nothing');

      await store.runs.discard(anonymous.id);
      assert.deepEqual(await store.actions.commands(anonymous.id), []);
      const next = await store.runs.create({ targets: ['c'] });
      assert.deepEqual(
        (await store.actions.commands(next.id)).map((c) => c.command),
        ['invoke'],
        'a reused run number starts a fresh audit',
      );
    });
  });
}
