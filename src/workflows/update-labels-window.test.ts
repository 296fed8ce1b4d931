/**
 * The window of `updateLabels`, fast: the real workflow code on a Temporal
 * dev server of its own, the activities faked in memory (see
 * `test/kit/workflows/fake-activities.ts`). The bound and the slide of the window,
 * continue-as-new at small thresholds, failed nodes, a dry run, rejections,
 * and `relabelNode` on its own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import { progressQuery, type UpdateLabelsInput } from '../contracts/messages.ts';
import type { relabelNode } from './relabel-node.ts';
import { RelabelRevision, RelabelSite, RelabelStatus } from '../contracts/search-attributes.ts';
import { FAKE_REVISION, FAKE_SITE, FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, until, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { updateLabels } from './update-labels.ts';

/** `n` node names: `<prefix>-1` … `<prefix>-n`. */
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

/** Starts `updateLabels` with `input` on the test's worker. */
function start(w: TestWorker, name: string, input: UpdateLabelsInput) {
  return w.client.workflow.start<typeof updateLabels>('updateLabels', { taskQueue: w.taskQueue, workflowId: w.id(name), args: [input] });
}

/** How many executions a workflow ran, first to last, following its continue-as-new chain through the histories. */
async function executions(client: Client, workflowId: string, firstRunId: string): Promise<number> {
  let count = 1;
  for (let runId = firstRunId; ; count++) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const next = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return count;
    runId = next;
  }
}

// Each test has a fake and workflow IDs of its own: they run at once, one's waits overlapping another's work.
describe('updateLabels window (fast: fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  before(async () => {
    env = await startWorkflowEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it('never runs more than `concurrency` nodes at once, and a freed place starts the next node at once', async () => {
    const fake = new FakeRelabel();
    const nodes = names('w', 7);
    const run = fake.addRun({ nodes, unchanged: 1 });
    fake.hold();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'window', { run, concurrency: 3 });
      await until('a full window', () => fake.heldNodes().length === 3);
      assert.deepEqual(fake.heldNodes(), ['w-1', 'w-2', 'w-3']);
      const p = await handle.query(progressQuery);
      assert.deepEqual(
        { phase: p.phase, total: p.total, counts: p.counts },
        { phase: 'applying', total: 8, counts: { pending: 4, running: 3, success: 1, failure: 0, written: 0 } },
      );

      // Sliding, not in batches: w-2 done, w-4 starts while w-1 and w-3 still run.
      fake.release(['w-2']);
      await until('the next node', () => fake.applied().length === 4);
      assert.deepEqual(fake.heldNodes(), ['w-1', 'w-3', 'w-4']);

      fake.release();
      const result = await handle.result();
      assert.deepEqual(result.counts, { total: 8, success: 8, failure: 0, written: 7 });
      assert.equal(result.status, 'success');
      assert.deepEqual(fake.appliedSet(), nodes, 'every node once');
      assert.equal(fake.maxInFlight, 3);
      assert.deepEqual(fake.inputsOf('setRunOutcome'), [{ run, outcome: 'success' }]);
      assert.deepEqual(
        fake.inputsOf('applyNodePlan').find((i) => i.node === 'w-1'),
        { run, node: 'w-1', revision: FAKE_REVISION },
      );
      const attributes = (await handle.describe()).typedSearchAttributes;
      assert.deepEqual([attributes.get(RelabelStatus), attributes.get(RelabelRevision), attributes.get(RelabelSite)], ['success', FAKE_REVISION, FAKE_SITE]);
    });
  });

  const continued = [
    { nodes: 7, after: 3, executions: 3, cursors: [-1, 2, 5] },
    { nodes: 6, after: 3, executions: 2, cursors: [-1, 2] },
    { nodes: 3, after: 5, executions: 1, cursors: [-1] },
  ];
  for (const c of continued) {
    it(`continues as new after ${c.after} children: ${c.nodes} nodes in ${c.executions} execution(s), cursor and counts carried, planned once`, async () => {
      const fake = new FakeRelabel();
      const nodes = names('c', c.nodes);
      const run = fake.addRun({ nodes, unchanged: 2 });
      await env.run(fake, async (w) => {
        const handle = await start(w, 'continued', { run, concurrency: 2, continueAsNewAfter: c.after });
        const result = await handle.result();
        assert.deepEqual(result.counts, { total: c.nodes + 2, success: c.nodes + 2, failure: 0, written: c.nodes });
        assert.equal(await executions(w.client, handle.workflowId, handle.firstExecutionRunId), c.executions);
        assert.deepEqual(
          fake.inputsOf('pendingNodes').map((i) => i.afterSeq),
          c.cursors,
        );
        assert.deepEqual(fake.appliedSet(), nodes, 'every node once, none twice across executions');
        assert.equal(fake.inputsOf('planRun').length, 1);
        assert.equal(fake.inputsOf('resolveRevision').length, 1);
        assert.equal(fake.maxInFlight <= 2, true, `at most 2 at once, saw ${fake.maxInFlight}`);
      });
    });
  }

  it('records each failed node with its reason, writes the failures to the store, and ends partial', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: ['a', 'b', 'c', 'd', 'e'] });
    fake.failing.set('c', { type: FailureType.NodeNotFound, message: 'node c not found' });
    fake.failing.set('d', { type: FailureType.TooManyConflicts, message: 'd changed under every attempt' });
    await env.run(fake, async (w) => {
      const result = await (await start(w, 'failures', { run, concurrency: 1 })).result();
      const failures = [
        { node: 'c', error: { type: 'NodeNotFound', message: 'node c not found' } },
        { node: 'd', error: { type: 'TooManyConflicts', message: 'd changed under every attempt' } },
      ];
      assert.deepEqual(
        { status: result.status, counts: result.counts, failures: result.failures },
        { status: 'partial_success', counts: { total: 5, success: 3, failure: 2, written: 3 }, failures },
      );
      assert.deepEqual(fake.inputsOf('recordFailures'), [{ run, failures }]);
      assert.deepEqual(fake.statuses(run), { pending: [], success: ['a', 'b', 'e'], failure: ['c', 'd'], cancelled: [] });
      assert.equal(fake.runOf(run).outcome, 'partial_success');
    });
  });

  it('ends `failure` when every node failed', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: ['x', 'y'] });
    for (const n of ['x', 'y']) fake.failing.set(n, { type: FailureType.Forbidden, message: `no patch of ${n}` });
    await env.run(fake, async (w) => {
      const result = await (await start(w, 'all-failed', { run })).result();
      assert.deepEqual([result.status, result.counts], ['failure', { total: 2, success: 0, failure: 2, written: 0 }]);
    });
  });

  it('registers a run of inline targets, and a dry run of them starts no child', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'dry', { targets: ['n2', 'n1'], dryRun: true });
      const result = await handle.result();
      assert.deepEqual(
        fake.inputsOf('registerRun').map((i) => [i.targets, i.dryRun, i.revision]),
        [[['n2', 'n1'], true, FAKE_REVISION]],
      );
      assert.deepEqual([result.status, result.dryRun, result.counts], ['success', true, { total: 2, success: 2, failure: 0, written: 0 }]);
      assert.deepEqual(fake.applied(), []);
      assert.deepEqual(fake.inputsOf('pendingNodes'), [], 'a dry run never pages through pending nodes');
      assert.equal((await handle.describe()).typedSearchAttributes.get(RelabelStatus), 'dry_run');
    });
  });

  it('a run with nothing to change resolves and records in local activities, and reads no pending node', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: [], unchanged: 5 });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'noop', { run });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts], ['success', { total: 5, success: 5, failure: 0, written: 0 }]);
      assert.deepEqual(
        fake.calls.map((c) => c.name),
        ['resolveRevision', 'planRun', 'setRunOutcome'],
      );
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      assert.deepEqual(scheduled, ['planRun'], 'only the plan goes through the server');
      const markers = events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? []);
      assert.equal(markers.filter((m) => m === 'core_local_activity').length, 2, `resolving and recording, locally: ${markers.join(', ')}`);
    });
  });

  it('rejects invalid inline targets before any activity, and a refused plan with its own failure type, recorded `rejected`', async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: ['r1'] });
    await env.run(fake, async (w) => {
      const invalid = await start(w, 'invalid', { targets: [] });
      const err = await invalid.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.equal(err.cause.type, FailureType.InvalidTargets);
      assert.deepEqual(fake.calls, []);

      fake.rejectPlan = { type: FailureType.MassRemovalRefused, message: 'the run removes 9 of 10 owned labels' };
      const refused = await start(w, 'refused', { run });
      const e2 = await refused.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(e2 instanceof WorkflowFailedError && e2.cause instanceof ApplicationFailure, String(e2));
      assert.deepEqual(
        [e2.cause.type, e2.cause.message, e2.cause.nonRetryable],
        [FailureType.MassRemovalRefused, 'the run removes 9 of 10 owned labels', true],
      );
      assert.deepEqual(fake.inputsOf('setRunOutcome'), [{ run, outcome: 'rejected' }]);
      assert.deepEqual(fake.applied(), []);
    });
  });

  it("relabelNode returns what the apply did, and fails with the apply's own failure type and message", async () => {
    const fake = new FakeRelabel();
    const run = fake.addRun({ nodes: ['ok', 'gone'] });
    fake.failing.set('gone', { type: FailureType.NodeNotFound, message: 'node gone not found' });
    await env.run(fake, async (w) => {
      const node = (name: string) =>
        w.client.workflow.execute<typeof relabelNode>('relabelNode', {
          taskQueue: w.taskQueue,
          workflowId: w.id(`node-${name}`),
          args: [{ run, node: name, revision: 3, searchAttributes: false }],
        });
      assert.deepEqual(await node('ok'), {
        node: 'ok',
        written: true,
        counts: { set: 1, removed: 0, adopted: 0, unchanged: 0 },
        taintLifted: false,
        attempts: 1,
      });
      const err = await node('gone').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.deepEqual([err.cause.type, err.cause.message], [FailureType.NodeNotFound, 'node gone not found']);
      assert.deepEqual(
        fake.inputsOf('applyNodePlan'),
        [
          { run, node: 'ok', revision: 3 },
          { run, node: 'gone', revision: 3 },
        ],
        'a non-retryable failure is not retried',
      );
    });
  });
});
