/**
 * `detectDrift`'s heal path, fast: the real workflow code on a Temporal dev
 * server of its own, the activities faked in memory; each heal run a real
 * `updateLabels` run over a fake run of the group's nodes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import type { detectDrift } from './detect-drift.ts';
import type { DriftDetection } from '../contracts/drift-messages.ts';
import { FAKE_SITE, FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { UpdateLabelsResult } from '../contracts/messages.ts';
import type { updateLabels } from './update-labels.ts';

/** A detection on report 7: drifted nodes of revisions 3 (two) and 4 (one), two more of later revisions ungrouped. */
function detection(action: 'heal' | 'report'): DriftDetection {
  return {
    report: 7,
    site: FAKE_SITE,
    revision: 5,
    action,
    counts: { total: 10, missing: 0, unmanaged: 1, drifted: 5, moved: 0, pending: 0, in_sync: 4, orphaned: 0 },
    sample: [],
    groups: [
      { revision: 3, nodes: 2 },
      { revision: 4, nodes: 1 },
    ],
    ungrouped: 2,
  };
}

/** The drifted nodes of each grouped revision. */
const DRIFTED: Record<number, string[]> = { 3: ['d1', 'd2'], 4: ['d3'] };

/** Makes the fake start each heal as a real `updateLabels` run on the test's worker, and wait for it. */
function healWithRuns(fake: FakeRelabel, w: TestWorker): void {
  fake.startHeal = async ({ revision }) => {
    const nodes = DRIFTED[revision] ?? [];
    const run = fake.addRun({ nodes });
    const handle = await w.client.workflow.start<typeof updateLabels>('updateLabels', {
      taskQueue: w.taskQueue,
      workflowId: w.id(`heal-${revision}`),
      args: [{ run, revision }],
    });
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, run, nodes: nodes.length };
  };
  fake.awaitHeal = async ({ workflowId, runId }) => {
    const result = (await w.client.workflow.getHandle(workflowId, runId).result()) as UpdateLabelsResult;
    return { status: result.status, written: result.counts.written, failed: result.counts.failure };
  };
}

function detect(w: TestWorker, name: string) {
  return w.client.workflow.start<typeof detectDrift>('detectDrift', { taskQueue: w.taskQueue, workflowId: w.id(name), args: [{ site: FAKE_SITE }] });
}

// Each test has a fake and workflow IDs of its own: they run at once, one's waits overlapping another's work.
describe('detectDrift heal (fast: fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  before(async () => {
    env = await startWorkflowEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it('heals each revision group with an update run, one after the other, and records what healing did', async () => {
    const fake = new FakeRelabel();
    fake.detection = detection('heal');
    fake.failing.set('d2', { type: FailureType.Forbidden, message: 'no patch of d2' });
    await env.run(fake, async (w) => {
      healWithRuns(fake, w);
      const handle = await detect(w, 'heal');
      const result = await handle.result();
      const runs = (result.heal?.runs ?? []).map(({ revision, nodes, run, status, written, failed }) => ({ revision, nodes, run, status, written, failed }));
      assert.deepEqual(runs, [
        { revision: 3, nodes: 2, run: 100, status: 'partial_success', written: 1, failed: 1 },
        { revision: 4, nodes: 1, run: 101, status: 'success', written: 1, failed: 0 },
      ]);
      assert.equal(result.heal?.skipped, '2 drifted node(s) of further revisions wait for the next detection');
      assert.deepEqual(fake.appliedSet(), ['d1', 'd2', 'd3']);
      assert.equal(fake.applied().at(-1), 'd3', 'the second heal run starts once the first has ended');
      assert.deepEqual(
        fake.inputsOf('startHealRun'),
        [3, 4].map((revision) => ({ report: 7, revision, audit: { by: `workflow:${handle.workflowId}`, via: 'heal' } })),
      );
      assert.deepEqual(fake.inputsOf('recordHeal'), [{ report: 7, heal: result.heal }]);
      assert.deepEqual(fake.inputsOf('detectDrift'), [
        { site: FAKE_SITE, key: `${handle.workflowId}/${handle.firstExecutionRunId}`, workflowId: handle.workflowId },
      ]);
    });
  });

  it('stops healing at a group whose run cannot start, and says why', async () => {
    const fake = new FakeRelabel();
    fake.detection = detection('heal');
    fake.startHeal = async () => ({ skipped: 'RunInProgress: a run of fake-site is going' });
    await env.run(fake, async (w) => {
      const result = await (await detect(w, 'skipped')).result();
      assert.deepEqual(result.heal, { runs: [], skipped: 'healing of revision 3 not started: RunInProgress: a run of fake-site is going' });
      assert.equal(fake.inputsOf('startHealRun').length, 1);
      assert.deepEqual(fake.inputsOf('awaitRun'), []);
      assert.deepEqual(fake.inputsOf('recordHeal'), [{ report: 7, heal: result.heal }]);
    });
  });

  it("only reports under the policy's `report`, and rejects with the detection's own failure type", async () => {
    const fake = new FakeRelabel();
    fake.detection = detection('report');
    await env.run(fake, async (w) => {
      assert.deepEqual(await (await detect(w, 'report')).result(), detection('report'));
      assert.deepEqual(fake.inputsOf('startHealRun'), []);
      assert.deepEqual(fake.inputsOf('recordHeal'), []);

      fake.detection = undefined;
      const err = await (await detect(w, 'rejected')).result().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
      assert.equal(err.cause.type, FailureType.NoCommittedRevision);
    });
  });
});
