/**
 * Run control of `updateLabels`, fast: the real workflow code on a Temporal
 * dev server of its own, the activities faked in memory. Pause and unpause
 * through the `control` Update (also across continue-as-new), what the
 * Update refuses, and how a cancelled (stopped) run settles its nodes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure, CancelledFailure, WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import { controlUpdate, progressQuery, type ControlRequest, type UpdateLabelsInput } from '../contracts/messages.ts';
import { FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, until, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { updateLabels } from './update-labels.ts';

/** How long a test watches for something that must not happen (a node started while paused). */
const QUIET_MS = 300;

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

function start(w: TestWorker, name: string, input: UpdateLabelsInput) {
  return w.client.workflow.start<typeof updateLabels>('updateLabels', { taskQueue: w.taskQueue, workflowId: w.id(name), args: [input] });
}

const control = (handle: WorkflowHandle, request: ControlRequest) => handle.executeUpdate(controlUpdate, { args: [request] });

/** The failure type and message a refused `control` Update carries. */
async function refusal(handle: WorkflowHandle, request: ControlRequest): Promise<[string | undefined, string]> {
  const err = await control(handle, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure, `${request.verb}: ${String(err)}`);
  return [err.cause.type ?? undefined, err.cause.message];
}

// Each test has a fake and workflow IDs of its own: they run at once, one's waits overlapping another's work.
describe('updateLabels run control (fast: fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  before(async () => {
    env = await startWorkflowEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it('pause starts no new node while the running ones finish; unpause goes on; pausing twice changes nothing', async () => {
    const fake = new FakeRelabel();
    const nodes = names('p', 6);
    const run = fake.addRun({ nodes });
    fake.hold();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'pause', { run, concurrency: 2 });
      await until('a full window', () => fake.heldNodes().length === 2);
      assert.deepEqual(await control(handle, { verb: 'pause' }), { paused: true, changed: true, running: 2, pending: 4 });
      assert.deepEqual(await control(handle, { verb: 'pause' }), { paused: true, changed: false, running: 2, pending: 4 });
      fake.release();
      await until('the running nodes done', async () => (await handle.query(progressQuery)).counts.success === 2);
      await sleep(QUIET_MS);
      assert.deepEqual(fake.appliedSet(), ['p-1', 'p-2'], 'no node started while paused');
      const paused = await handle.query(progressQuery);
      assert.deepEqual([paused.paused, paused.counts], [true, { pending: 4, running: 0, success: 2, failure: 0, written: 2 }]);

      assert.deepEqual(await control(handle, { verb: 'unpause' }), { paused: false, changed: true, running: 0, pending: 4 });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts], ['success', { total: 6, success: 6, failure: 0, written: 6 }]);
      assert.deepEqual(fake.appliedSet(), nodes);
    });
  });

  it('a paused run stays paused across continue-as-new, and goes on from its cursor once unpaused', async () => {
    const fake = new FakeRelabel();
    const nodes = names('q', 6);
    const run = fake.addRun({ nodes });
    fake.hold();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'pause-continued', { run, concurrency: 2, continueAsNewAfter: 2 });
      await until('a full window', () => fake.heldNodes().length === 2);
      await control(handle, { verb: 'pause' });
      fake.release();
      // The first execution started its two children: it continues as new, paused.
      await until(
        'the continued execution',
        async () => (await handle.describe()).runId !== handle.firstExecutionRunId && (await handle.query(progressQuery)).paused === true,
      );
      await sleep(QUIET_MS);
      assert.deepEqual(fake.appliedSet(), ['q-1', 'q-2']);
      assert.deepEqual(
        fake.inputsOf('pendingNodes').map((i) => i.afterSeq),
        [-1, 1],
        'the continued execution reads on after the carried cursor',
      );

      assert.deepEqual(await control(handle, { verb: 'unpause' }), { paused: false, changed: true, running: 0, pending: 4 });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts], ['success', { total: 6, success: 6, failure: 0, written: 6 }]);
      assert.deepEqual(fake.appliedSet(), nodes);
      assert.equal(fake.inputsOf('planRun').length, 1);
    });
  });

  it('refuses an unknown verb, a gate verb on a run without waves, and a pause once every node has started, changing nothing', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: ['r-1', 'r-2'] });
    fake.hold();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'refusals', { run, concurrency: 2 });
      await until('every node started', () => fake.heldNodes().length === 2);
      assert.deepEqual(await refusal(handle, { verb: 'bogus' as ControlRequest['verb'] }), [
        FailureType.InvalidRequest,
        'unknown control verb "bogus": a run takes pause, unpause, approve, resume or abort',
      ]);
      assert.deepEqual(await refusal(handle, { verb: 'approve' }), [FailureType.NotRunning, 'the run has no waves: there is no gate to approve']);
      assert.deepEqual(await refusal(handle, { verb: 'pause' }), [FailureType.NotRunning, 'the run has started all its nodes: there is nothing to pause']);
      fake.release();
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.success], ['success', 2]);
      const history = await handle.fetchHistory();
      assert.equal(history.events?.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length, 0, 'a refused Update leaves nothing in the history');
    });
  });

  it('a cancelled run lets its running nodes finish, writes their failures, settles the rest as not started and ends cancelled', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: names('x', 6) });
    fake.failing.set('x-2', { type: FailureType.Forbidden, message: 'no patch of x-2' });
    fake.hold();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'cancel', { run, concurrency: 2 });
      await until('a full window', () => fake.heldNodes().length === 2);
      await handle.cancel();
      await sleep(QUIET_MS);
      assert.deepEqual(fake.inputsOf('settleCancelledRun'), [], 'nothing settled while nodes run');
      fake.release();
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure, String(err));

      assert.deepEqual(fake.appliedSet(), ['x-1', 'x-2'], 'no node started after the stop');
      assert.deepEqual(fake.statuses(run), { pending: [], success: ['x-1'], failure: ['x-2'], cancelled: ['x-3', 'x-4', 'x-5', 'x-6'] });
      assert.equal(fake.runOf(run).outcome, 'cancelled');
      const order = fake.calls.map((c) => c.name).filter((n) => n === 'recordFailures' || n === 'settleCancelledRun');
      assert.deepEqual(order, ['recordFailures', 'settleCancelledRun'], "the running node's failure is written before the rest is settled");
      assert.deepEqual(fake.inputsOf('recordFailures'), [{ run, failures: [{ node: 'x-2', error: { type: 'Forbidden', message: 'no patch of x-2' } }] }]);
      assert.deepEqual(fake.inputsOf('setRunOutcome'), [], 'a cancelled run records its outcome by settling');
    });
  });
});
