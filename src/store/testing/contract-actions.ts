/**
 * The action half of the store contract: each run's Shipyard action id (a
 * ULID), context marker, Temporal run id and command audit, the same on
 * every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../open-store.ts';
import { isUlid, ulidTime } from '../ulid.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Register the action contract for one backend. */
export function actionsContract(fixture: StoreFixture): void {
  describe('actions', () => {
    test('every run gets an increasing ULID action id and a context marker, and is found by its id', async (t) => {
      const store = await freshStore(t, fixture);
      const before = Date.now();
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push(await store.createRun({ workflowId: 'update-labels/s', startedBy: 'ops', targets: [`n${i}`] }));
      const ids = runs.map((r) => r.actionId ?? '');
      assert.ok(ids.every(isUlid), ids.join(' '));
      assert.deepEqual([...ids].sort(), ids, 'ids increase with the run number');
      assert.equal(new Set(ids).size, ids.length);
      for (const id of ids) assert.ok(ulidTime(id) >= before - 1000 && ulidTime(id) <= Date.now() + 1000);
      assert.ok(runs.every((r) => UUID.test(r.contextMarker ?? '')));
      assert.equal(new Set(runs.map((r) => r.contextMarker)).size, runs.length);
      assert.equal(runs[0]?.executionRunId, null);

      const given = await store.createRun({ targets: ['a'], contextMarker: '0b8f3c3e-4f5a-4d2b-9a51-6a1c2f3e4d5b' });
      assert.equal(given.contextMarker, '0b8f3c3e-4f5a-4d2b-9a51-6a1c2f3e4d5b');
      await rejectsWith(store.createRun({ targets: ['a'], contextMarker: 'not-a-uuid' }), 'InvalidArgument', /contextMarker/);

      const third = runs[2];
      assert.ok(third?.actionId);
      assert.deepEqual(await store.runByActionId(third.actionId), third);
      await store.setRunExecution(third.id, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal((await store.runByActionId(third.actionId))?.executionRunId, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal((await store.getRun(third.id)).executionRunId, '0199a0b1-c2d3-7e4f-8a9b-0c1d2e3f4a5b');
      assert.equal(await store.runByActionId('01ARYZ6S410000000000000000'), null, 'a ULID of no run');
      assert.equal(await store.runByActionId('not a ulid'), null);
      await rejectsWith(store.setRunExecution(99, 'x'), 'NotFound', /run 99 not found/);
      await rejectsWith(store.setRunExecution(third.id, ''), 'InvalidArgument', /execution run id/);
    });

    test('ids keep increasing across two connections to one store', async (t) => {
      const url = await fixture.freshUrl();
      const one = await openStore(url);
      t.after(() => one.close());
      const two = await openStore(url);
      t.after(() => two.close());
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await (i % 2 === 0 ? one : two).createRun({ targets: ['a'] })).actionId ?? '');
      assert.deepEqual([...ids].sort(), ids);
      assert.equal(new Set(ids).size, ids.length);
    });

    test('the command audit starts with invoke and keeps the newest commands in order', async (t) => {
      const store = await freshStore(t, fixture);
      const run = await store.createRun({ startedBy: 'ops-alice', startedVia: 'api', targets: ['a'] });
      const [invoke] = await store.actionCommands(run.id);
      assert.equal(invoke?.command, 'invoke');
      assert.equal(invoke?.user, 'ops-alice');
      assert.equal(invoke?.at.getTime(), run.createdAt.getTime());
      const pause = await store.recordActionCommand(run.id, 'pause', 'ops-bob');
      await store.recordActionCommand(run.id, 'unpause', null);
      await store.recordActionCommand(run.id, 'stop', 'ops-bob');
      const all = await store.actionCommands(run.id);
      assert.deepEqual(all.map((c) => [c.command, c.user]), [['invoke', 'ops-alice'], ['pause', 'ops-bob'], ['unpause', null], ['stop', 'ops-bob']]);
      assert.deepEqual(all[1], pause);
      assert.ok(all.every((c) => isUlid(c.id)));
      assert.deepEqual((await store.actionCommands(run.id, 2)).map((c) => c.command), ['unpause', 'stop'], 'the newest two, oldest first');
      assert.deepEqual(await store.actionCommands(run.id + 1), [], 'no run, no commands');
      const anonymous = await store.createRun({ targets: ['b'] });
      assert.deepEqual((await store.actionCommands(anonymous.id)).map((c) => [c.command, c.user]), [['invoke', null]]);

      await rejectsWith(store.recordActionCommand(99, 'stop', 'x'), 'NotFound', /run 99 not found/);
      await rejectsWith(store.recordActionCommand(run.id, 'Stop!', 'x'), 'InvalidArgument', /invalid action command/);
      await rejectsWith(store.recordActionCommand(run.id, 'stop', ''), 'InvalidArgument', /user/);
      await rejectsWith(store.actionCommands(run.id, 0), 'InvalidArgument', /limit/);
      await rejectsWith(store.actionCommands(run.id, 101), 'InvalidArgument', /limit/);
      assert.equal((await store.actionCommands(run.id)).length, 4, 'refused commands left nothing');

      await store.discardRun(anonymous.id);
      assert.deepEqual(await store.actionCommands(anonymous.id), []);
      const next = await store.createRun({ targets: ['c'] });
      assert.deepEqual((await store.actionCommands(next.id)).map((c) => c.command), ['invoke'], 'a reused run number starts a fresh audit');
    });
  });
}
