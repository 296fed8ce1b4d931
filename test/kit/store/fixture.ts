/**
 * Helpers shared by the store test suites: fresh stores from a fixture and
 * assertions on {@link StoreError}s.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { openStore } from '../../../src/store/open-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { isStoreError, type StoreErrorCode } from '../../../src/store/store-error.ts';

/** Supplies fresh stores to the contract suite. */
export interface StoreFixture {
  /** URL (for `openStore`, usable from child processes too) of a new, empty store. */
  freshUrl(): Promise<string>;
}

/** Open a fresh store from `fixture`, closed when the test ends. */
export async function freshStore(t: TestContext, fixture: StoreFixture): Promise<Store> {
  const store = await openStore(await fixture.freshUrl());
  t.after(() => store.close());
  return store;
}

/** Assert that `promise` rejects with a StoreError of `code` whose message matches `message`. */
export async function rejectsWith(promise: Promise<unknown>, code: StoreErrorCode, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isStoreError(error), `expected a StoreError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
}

/** Asserts that a store migrated from before runs were stored takes runs: the first is run 1 and records results. */
export async function assertRunsWork(store: Store): Promise<void> {
  const run = await store.runs.create({ targets: ['n1', 'n2'] });
  assert.equal(run.id, 1);
  await store.runs.setNodeResults(run.id, [{ node: 'n2', status: 'success', written: true }]);
  assert.deepEqual(await store.runs.counts(run.id), { total: 2, queued: 1, pending: 0, success: 1, failure: 0, cancelled: 0, written: 1 });
  await assertAuditWorks(store, run.id);
}

/**
 * Asserts that a run recorded before the audit trail was kept reads with
 * none (null), takes an outcome, and that new runs keep who and how.
 */
export async function assertAuditWorks(store: Store, oldRun: number): Promise<void> {
  const old = await store.runs.get(oldRun);
  assert.deepEqual([old.startedBy, old.startedVia, old.outcome], [null, null, null]);
  await store.runs.setOutcome(oldRun, 'success');
  assert.equal((await store.runs.get(oldRun)).outcome, 'success');
  const run = await store.runs.create({ startedBy: 'ops-alice', startedVia: 'api', targets: ['n1'] });
  assert.deepEqual([run.startedBy, run.startedVia, run.outcome], ['ops-alice', 'api', null]);
}

/**
 * Asserts that a run recorded before action ids were kept reads with none
 * and an empty command audit, and that a new run gets a ULID and its invoke.
 */
export async function assertActionsWork(store: Store, oldRun: number): Promise<void> {
  const old = await store.runs.get(oldRun);
  assert.deepEqual([old.actionId, old.contextMarker, old.executionRunId], [null, null, null]);
  assert.deepEqual(await store.actions.commands(oldRun), []);
  const run = await store.runs.create({ targets: ['n1'] });
  assert.match(run.actionId ?? '', /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
  assert.deepEqual(
    (await store.actions.commands(run.id)).map((c) => c.command),
    ['invoke'],
  );
  assert.deepEqual(await store.runs.byActionId(run.actionId ?? ''), run);
}

/** Asserts that a store migrated from before drift reports takes them: the first is report 1 and keeps its rows. */
export async function assertDriftWorks(store: Store): Promise<void> {
  const report = await store.drift.createReport({ site: 's', revision: 1, action: 'report' });
  assert.equal(report.id, 1);
  await store.drift.addNodes(report.id, [{ seq: 0, node: 'n1', state: 'missing', revision: null, detail: {} }]);
  assert.deepEqual(
    (await store.drift.nodes(report.id, { limit: 10 })).map((r) => r.node),
    ['n1'],
  );
}
