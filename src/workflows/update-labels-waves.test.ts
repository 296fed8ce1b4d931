/**
 * A run of `updateLabels` in waves, fast: the real workflow code on a
 * Temporal dev server of its own, the activities faked in memory. Waves in
 * order, the gates between them (failed nodes, health, approval), resume
 * and abort, and waves carried across continue-as-new.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { EffectiveRollout } from '../core/plan/waves.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { controlUpdate, progressQuery, type ControlRequest, type GateWait, type UpdateLabelsInput } from '../contracts/messages.ts';
import { FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, until, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { updateLabels } from './update-labels.ts';

/** Three waves: two nodes, two nodes, one node. */
const WAVES = [['a1', 'a2'], ['b1', 'b2'], ['c1']];
const ALL = WAVES.flat();

/** A run of the three waves under `rollout` in the fake store. */
function wavedRun(fake: FakeRelabel, rollout: Partial<EffectiveRollout>): number {
  return fake.addRun({ nodes: ALL, waves: { of: WAVES, rollout } });
}

/** The nodes applied, cut where the wave changes, each cut sorted: `WAVES` itself when the waves went one after the other. */
function appliedByWave(fake: FakeRelabel): string[][] {
  const cuts: string[][] = [];
  let last = -1;
  for (const node of fake.applied()) {
    const wave = WAVES.findIndex((w) => w.includes(node));
    if (wave !== last) cuts.push([]);
    last = wave;
    cuts.at(-1)?.push(node);
  }
  return cuts.map((c) => c.sort());
}

function start(w: TestWorker, name: string, input: UpdateLabelsInput) {
  return w.client.workflow.start<typeof updateLabels>('updateLabels', { taskQueue: w.taskQueue, workflowId: w.id(name), args: [{ concurrency: 4, ...input }] });
}

const control = (handle: WorkflowHandle, request: ControlRequest) => handle.executeUpdate(controlUpdate, { args: [request] });

/** Waits until the run waits at `gate`; returns the reason it gives. */
async function atGate(handle: WorkflowHandle, gate: GateWait): Promise<string | undefined> {
  await until(`the ${gate} gate`, async () => (await handle.query(progressQuery)).wave?.waiting === gate);
  return (await handle.query(progressQuery)).wave?.reason;
}

async function refusal(handle: WorkflowHandle, request: ControlRequest): Promise<[string | undefined, string]> {
  const err = await control(handle, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure, `${request.verb}: ${String(err)}`);
  return [err.cause.type ?? undefined, err.cause.message];
}

// Each test has a fake and workflow IDs of its own: they run at once, one's waits overlapping another's work.
describe('updateLabels in waves (fast: fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  before(async () => {
    env = await startWorkflowEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it("applies wave after wave, each wave's nodes only, with no gate when none is asked for", async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, {});
    await env.run(fake, async (w) => {
      const result = await (await start(w, 'waves', { run })).result();
      assert.deepEqual([result.status, result.waves, result.counts], ['success', 3, { total: 5, success: 5, failure: 0, written: 5 }]);
      assert.deepEqual(appliedByWave(fake), WAVES);
      assert.ok(fake.maxInFlight <= 2, `a wave of two under a window of four: the next wave waits for the last (saw ${fake.maxInFlight} at once)`);
      assert.deepEqual(
        fake.inputsOf('pendingNodes').map((i) => [i.wave, i.afterSeq]),
        [
          [0, -1],
          [1, -1],
          [2, -1],
        ],
      );
      assert.deepEqual(
        fake.inputsOf('waveInfo').map((i) => i.wave),
        [0, 1, 2],
      );
      assert.deepEqual(fake.inputsOf('checkWaveHealth'), []);
    });
  });

  it('halts a wave with more failed nodes than allowed; abort settles the nodes not started and ends the run partial', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, { maxFailedNodes: 0 });
    fake.failing.set('a2', { type: FailureType.Forbidden, message: 'no patch of a2' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'halt-abort', { run });
      assert.equal(await atGate(handle, 'halted'), 'wave 1 (wave-1): 1 node(s) failed, more than the 0 allowed; resume to go on, abort to end the run here');
      assert.deepEqual(await refusal(handle, { verb: 'approve' }), [FailureType.NotRunning, 'cannot approve the run: it is halted (resume or abort it)']);
      const answer = await control(handle, { verb: 'abort', by: 'ops-carol' });
      assert.deepEqual(
        [answer.wave?.current.index, answer.wave?.waiting, answer.wave?.reason, answer.wave?.approved],
        [0, undefined, undefined, undefined],
        'the answer is the run past the gate',
      );
      const result = await handle.result();
      assert.deepEqual(
        { status: result.status, counts: result.counts, aborted: result.aborted },
        { status: 'partial_success', counts: { total: 5, success: 1, failure: 1, written: 1 }, aborted: { wave: 0, by: 'ops-carol', notStarted: 3 } },
      );
      assert.deepEqual(fake.inputsOf('abortRunNodes'), [{ run, after: 'wave 1 (wave-1)', by: 'ops-carol' }]);
      assert.deepEqual(appliedByWave(fake), WAVES.slice(0, 1));
      assert.deepEqual(fake.statuses(run), { pending: [], success: ['a1'], failure: ['a2'], cancelled: ['b1', 'b2', 'c1'] });
      assert.equal(fake.runOf(run).outcome, 'partial_success');
    });
  });

  it('counts failed nodes per wave against maxFailedNodes', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, { maxFailedNodes: 1 });
    for (const n of ['a1', 'b2']) fake.failing.set(n, { type: FailureType.Forbidden, message: `no patch of ${n}` });
    await env.run(fake, async (w) => {
      const result = await (await start(w, 'per-wave', { run })).result();
      assert.deepEqual([result.status, result.counts, result.aborted], ['partial_success', { total: 5, success: 3, failure: 2, written: 3 }, undefined]);
      assert.deepEqual(appliedByWave(fake), WAVES, 'one failure in each wave halts none');
    });
  });

  it('checks the health gate after each wave but the last; a timed-out gate halts the run and resume goes on', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, { healthTimeoutSeconds: 30 });
    fake.health.set(1, { healthy: false, unhealthy: 2, reason: '2 DaemonSet pods not Ready' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'health', { run });
      assert.equal(
        await atGate(handle, 'halted'),
        'wave 2 (wave-2): the health gate timed out after 30 s: 2 DaemonSet pods not Ready; resume to go on, abort to end the run here',
      );
      assert.deepEqual(appliedByWave(fake), WAVES.slice(0, 2), 'nothing of the next wave starts while halted');
      const answer = await control(handle, { verb: 'resume', by: 'ops-bob' });
      assert.deepEqual(
        [answer.wave?.current.index, answer.wave?.waiting, answer.wave?.reason, answer.wave?.approved],
        [1, undefined, undefined, undefined],
        'the answer is the run past the gate',
      );
      const result = await handle.result();
      assert.deepEqual([result.status, result.aborted], ['success', undefined]);
      assert.deepEqual(appliedByWave(fake), WAVES);
      assert.deepEqual(fake.inputsOf('checkWaveHealth'), [
        { run, wave: 0, timeoutSeconds: 30 },
        { run, wave: 1, timeoutSeconds: 30 },
      ]);
    });
  });

  it('waits at the approval gate after the first wave only, for approve; records who approved', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, { approval: 'first' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'approve', { run });
      assert.equal(await atGate(handle, 'approval'), 'wave 1 (wave-1) is done: approve to start wave 2 of 3, abort to end the run here');
      assert.deepEqual(appliedByWave(fake), WAVES.slice(0, 1));
      assert.deepEqual(await refusal(handle, { verb: 'resume' }), [FailureType.NotRunning, 'cannot resume the run: it is waiting at the approval gate']);
      const answer = await control(handle, { verb: 'approve', by: 'ops-alice' });
      assert.deepEqual([answer.wave?.approved, answer.wave?.waiting], [{ wave: 0, by: 'ops-alice' }, undefined], 'the answer is the run past the gate');
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.success], ['success', 5]);
      assert.deepEqual(appliedByWave(fake), WAVES);
      assert.deepEqual((await handle.query(progressQuery)).wave?.approved, { wave: 0, by: 'ops-alice' });
    });
  });

  it('with an approval after each wave, an abort at the second gate ends the run with the last wave not started', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, { approval: 'each' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'approve-abort', { run });
      await atGate(handle, 'approval');
      await control(handle, { verb: 'approve', by: 'ops-alice' });
      assert.equal(await atGate(handle, 'approval'), 'wave 2 (wave-2) is done: approve to start wave 3 of 3, abort to end the run here');
      await control(handle, { verb: 'abort' });
      const result = await handle.result();
      assert.deepEqual([result.status, result.aborted], ['partial_success', { wave: 1, by: null, notStarted: 1 }]);
      assert.deepEqual(appliedByWave(fake), WAVES.slice(0, 2));
      assert.deepEqual(fake.statuses(run).cancelled, ['c1']);
      assert.deepEqual(fake.inputsOf('abortRunNodes'), [{ run, after: 'wave 2 (wave-2)', by: null }]);
    });
  });

  it('carries the wave and its cursor across continue-as-new', async () => {
    const fake = new FakeRelabel();
    const run = wavedRun(fake, {});
    await env.run(fake, async (w) => {
      const handle = await start(w, 'waves-continued', { run, continueAsNewAfter: 1 });
      const result = await handle.result();
      assert.deepEqual([result.status, result.waves, result.counts.success], ['success', 3, 5]);
      assert.deepEqual(appliedByWave(fake), WAVES, 'every node once, wave after wave');
      assert.deepEqual(
        fake.inputsOf('pendingNodes').map((i) => [i.wave, i.afterSeq]),
        [
          [0, -1],
          [0, 0],
          [1, -1],
          [1, 2],
          [2, -1],
        ],
        'each execution goes on from the carried wave and cursor',
      );
      assert.equal(fake.inputsOf('planRun').length, 1);
    });
  });
});
