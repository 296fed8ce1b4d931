/**
 * `detectDrift`'s release path, fast: the real workflow code on a Temporal
 * dev server of its own, the activities faked in memory; the release run a
 * real `updateLabels` run over a fake run of the orphaned nodes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { detectDrift } from './detect-drift.ts';
import type { DriftDetection } from '../contracts/drift-messages.ts';
import { emptyDriftCounts } from '../core/plan/drift.ts';
import { FAKE_SITE, FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { UpdateLabelsResult } from '../contracts/messages.ts';
import type { updateLabels } from './update-labels.ts';

const ORPHANS = ['o1', 'o2'];

/** A detection on report 7 at revision 5 that found two orphaned nodes (and, to heal, one drifted node of revision 4). */
function detection(orphans: 'keep' | 'release' | undefined, heal = false): DriftDetection {
  return {
    report: 7,
    site: FAKE_SITE,
    revision: 5,
    action: heal ? 'heal' : 'report',
    counts: { ...emptyDriftCounts(), total: 5, drifted: heal ? 1 : 0, orphaned: 2, in_sync: heal ? 2 : 3 },
    sample: [],
    groups: heal ? [{ revision: 4, nodes: 1 }] : [],
    ungrouped: 0,
    ...(orphans ? { orphans } : {}),
  };
}

/** Makes the fake start each heal and release as a real `updateLabels` run on the test's worker, and wait for it. */
function startRuns(fake: FakeRelabel, w: TestWorker): void {
  const start = async (name: string, nodes: string[], revision: number) => {
    const run = fake.addRun({ nodes });
    const handle = await w.client.workflow.start<typeof updateLabels>('updateLabels', {
      taskQueue: w.taskQueue,
      workflowId: w.id(name),
      args: [{ run, revision }],
    });
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, run, nodes: nodes.length };
  };
  fake.startHeal = async ({ revision }) => start(`heal-${revision}`, ['d1'], revision);
  fake.startRelease = async ({ revision }) => start('release', ORPHANS, revision);
  fake.awaitHeal = async ({ workflowId, runId }) => {
    const result = (await w.client.workflow.getHandle(workflowId, runId).result()) as UpdateLabelsResult;
    return { status: result.status, written: result.counts.written, failed: result.counts.failure };
  };
}

function detect(w: TestWorker, name: string) {
  return w.client.workflow.start<typeof detectDrift>('detectDrift', { taskQueue: w.taskQueue, workflowId: w.id(name), args: [{ site: FAKE_SITE }] });
}

describe('detectDrift release (fast: fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  before(async () => {
    env = await startWorkflowEnv();
  });
  after(async () => {
    await env?.teardown();
  });

  it("with the policy's orphans: release, starts one release run over the orphaned nodes, waits for it and records it", async () => {
    const fake = new FakeRelabel();
    fake.detection = detection('release');
    await env.run(fake, async (w) => {
      startRuns(fake, w);
      const handle = await detect(w, 'release');
      const result = await handle.result();
      const run = result.release?.run;
      assert.deepEqual(run && { revision: run.revision, nodes: run.nodes, status: run.status, written: run.written }, {
        revision: 5,
        nodes: 2,
        status: 'success',
        written: 2,
      });
      assert.deepEqual(fake.inputsOf('startReleaseRun'), [{ report: 7, revision: 5, audit: { by: `workflow:${handle.workflowId}`, via: 'release' } }]);
      assert.deepEqual(fake.inputsOf('startHealRun'), [], 'nothing to heal under report');
      assert.deepEqual(fake.inputsOf('recordHeal'), [{ report: 7, heal: { runs: [], release: result.release } }]);
      assert.deepEqual(fake.appliedSet(), ORPHANS);
    });
  });

  it('heals first, then releases, one run after the other', async () => {
    const fake = new FakeRelabel();
    fake.detection = detection('release', true);
    await env.run(fake, async (w) => {
      startRuns(fake, w);
      const result = await (await detect(w, 'both')).result();
      assert.deepEqual(
        result.heal?.runs.map((r) => [r.revision, r.status]),
        [[4, 'success']],
      );
      assert.equal(result.release?.run?.status, 'success');
      assert.equal(fake.applied()[0], 'd1', 'the heal run ends before the release starts');
      assert.deepEqual(fake.inputsOf('recordHeal').length, 1);
    });
  });

  it('with keep (or a detection of an earlier version), only reports the orphans; a release that cannot start says why', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      for (const orphans of ['keep', undefined] as const) {
        fake.detection = detection(orphans);
        assert.deepEqual(await (await detect(w, `keep-${orphans ?? 'none'}`)).result(), detection(orphans));
      }
      assert.deepEqual(fake.inputsOf('startReleaseRun'), []);
      assert.deepEqual(fake.inputsOf('recordHeal'), []);

      fake.detection = detection('release');
      fake.startRelease = async () => ({ skipped: 'RunInProgress: a run of fake-site is going' });
      const result = await (await detect(w, 'skipped')).result();
      assert.deepEqual(result.release, { skipped: 'release of the orphaned nodes not started: RunInProgress: a run of fake-site is going' });
      assert.deepEqual(fake.inputsOf('awaitRun'), []);
    });
  });
});
