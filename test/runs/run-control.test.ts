/**
 * Run control against the real Temporal server and kube-apiserver: a paused
 * run starts no node until unpaused (also when it carries the pause across
 * continue-as-new), a stopped run settles every node's row (written before
 * the stop, or cancelled: never started) and the rows match the cluster,
 * and every control is in the run's command audit.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { isAppliedBy } from '../../src/core/plan/applied-run.ts';
import type { RelabelError } from '../../src/facade/relabel-error.ts';
import type { NodeOutcome } from '../../src/facade/runs/runs.ts';
import { updateLabels } from '../../src/workflows/update-labels.ts';
import { progressQuery, type Progress } from '../../src/contracts/messages.ts';
import { eventually } from '../api-support.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('run control: pause, unpause and stop', () => {
  const prefix = `rc${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;

  before(async () => {
    const { url } = await storeWithSite(site.files);
    relabel = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const core = adminCore();
    for (const name of site.nodes) await createNode(core, name, {});
  });
  after(async () => relabel.stop());

  const progressOf = (workflowId: string) => relabel.client.workflow.getHandle(workflowId).query(progressQuery);
  const allRows = async (run: number): Promise<NodeOutcome[]> => (await relabel.runs.nodes(run, { limit: 5000 })).items;

  it('a stopped run settles every row: written before the stop (and so on the cluster) or cancelled, never started', async () => {
    const targets = site.nodes.slice(0, 10);
    const run = await relabel.runs.start({ targets, concurrency: 1 });
    // Paused before it reaches its first node: nothing starts.
    const paused = await relabel.runs.control(run.workflowId, run.runId, 'pause', 'ops-alice');
    assert.equal(paused.answer?.paused, true);
    assert.equal(paused.answer?.changed, true);
    await eventually(
      () => progressOf(run.workflowId),
      (p: Progress) => p.phase === 'applying' && p.paused === true && p.counts.running === 0,
    );
    await sleep(1500);
    assert.equal((await relabel.store.runs.counts(run.run)).written, 0, 'a run paused before its first node starts none');
    const again = await relabel.runs.control(run.workflowId, run.runId, 'pause', 'ops-alice');
    assert.deepEqual([again.answer?.paused, again.answer?.changed], [true, false], 'pausing a paused run changes nothing');

    // Unpaused, it relabels nodes again; paused once three are done, it lets the running one finish and starts no other.
    await relabel.runs.control(run.workflowId, run.runId, 'unpause', 'ops-bob');
    await eventually(
      () => relabel.store.runs.counts(run.run),
      (c) => c.success >= 3,
      60_000,
      50,
    );
    await relabel.runs.control(run.workflowId, run.runId, 'pause', 'ops-alice');
    const still = await eventually(
      () => progressOf(run.workflowId),
      (p: Progress) => p.paused === true && p.counts.running === 0,
    );
    await sleep(1500);
    const settledBefore = (await relabel.store.runs.counts(run.run)).success;
    assert.equal(settledBefore, still.counts.success, 'no node started while paused');
    assert.ok(settledBefore >= 3 && settledBefore < targets.length, `stopped mid-way: ${settledBefore} of ${targets.length} done`);
    const status = await relabel.runs.status(run.workflowId, run.runId);
    assert.equal(status.progress?.paused, true, 'relabel status says the run is paused');

    const stopped = await relabel.runs.control(run.workflowId, run.runId, 'stop', 'ops-carol');
    assert.equal(stopped.verb, 'stop');
    const done = await relabel.runs.wait(run);
    assert.equal(done.execution, 'CANCELLED');

    const rows = await allRows(run.run);
    assert.equal(rows.length, targets.length);
    assert.deepEqual(
      rows.filter((r) => r.status !== 'success' && r.status !== 'cancelled'),
      [],
      'every row is settled: none queued or pending',
    );
    const written = rows.filter((r) => r.status === 'success');
    const cancelled = rows.filter((r) => r.status === 'cancelled');
    assert.equal(written.length, settledBefore);
    assert.equal(cancelled.length, targets.length - settledBefore);
    for (const r of cancelled) {
      assert.equal(r.written, false);
      assert.equal(r.error?.type, 'NotStarted', `${r.node}: ${JSON.stringify(r)}`);
    }
    const core = adminCore();
    for (const r of rows) {
      const annotations = (await core.readNode({ name: r.node })).metadata?.annotations ?? {};
      const applied = isAppliedBy(annotations, { run: run.run, revision: run.revision });
      assert.equal(applied, r.status === 'success' && r.written, `${r.node} (${r.status}, written ${r.written}) matches the cluster`);
    }
    assert.equal((await relabel.store.runs.get(run.run)).outcome, 'cancelled');
    const counts = await relabel.store.runs.counts(run.run);
    assert.deepEqual([counts.queued, counts.pending, counts.cancelled], [0, 0, cancelled.length]);

    // Every control is in the command audit, with who gave it, in order.
    const audit = (await relabel.store.actions.commands(run.run)).filter((c) => c.command !== 'invoke');
    assert.deepEqual(
      audit.map((c) => [c.command, c.user]),
      [
        ['pause', 'ops-alice'],
        ['pause', 'ops-alice'],
        ['unpause', 'ops-bob'],
        ['pause', 'ops-alice'],
        ['stop', 'ops-carol'],
      ],
    );
    // An ended run takes no control, and none is recorded.
    await assert.rejects(relabel.runs.control(run.workflowId, run.runId, 'unpause', 'ops-bob'), (err: RelabelError) => err.type === 'NotRunning');
    assert.equal((await relabel.store.actions.commands(run.run)).filter((c) => c.command !== 'invoke').length, 5);
  });

  it('a run stopped while nodes are being relabelled lets them finish, and settles the rest', async () => {
    const targets = site.nodes.slice(10, 22);
    const run = await relabel.runs.start({ targets, concurrency: 2 });
    await eventually(
      () => relabel.store.runs.counts(run.run),
      (c) => c.success >= 2,
      60_000,
      20,
    );
    await relabel.runs.control(run.workflowId, run.runId, 'stop', 'ops-carol');
    const done = await relabel.runs.wait(run);
    assert.equal(done.execution, 'CANCELLED');
    const rows = await allRows(run.run);
    const statuses = [...new Set(rows.map((r) => r.status))].sort();
    assert.deepEqual(statuses, ['cancelled', 'success'], JSON.stringify(rows.map((r) => [r.node, r.status])));
    const core = adminCore();
    for (const r of rows) {
      const annotations = (await core.readNode({ name: r.node })).metadata?.annotations ?? {};
      assert.equal(isAppliedBy(annotations, { run: run.run, revision: run.revision }), r.status === 'success', `${r.node} (${r.status}) matches the cluster`);
    }
  });

  it('a run carried over continue-as-new while paused stays paused until unpaused', async () => {
    const targets = site.nodes.slice(22, 24);
    const { id: run } = await relabel.store.runs.create({ workflowId: `update-labels/${prefix}-carried`, revision: 1, targets });
    await relabel.store.runs.setNodeResults(
      run,
      targets.map((node) => ({ node, status: 'pending' as const })),
    );
    const workflowId = `update-labels/${prefix}-carried`;
    const handle = await relabel.client.workflow.start(updateLabels, {
      taskQueue: relabel.taskQueue,
      workflowId,
      args: [
        {
          run,
          revision: 1,
          searchAttributes: false,
          carried: {
            run,
            revision: 1,
            site: `${prefix}-site`,
            concurrency: 1,
            counts: { total: targets.length, success: 0, failure: 0, written: 0 },
            failures: [],
            cursor: -1,
            startedAt: new Date().toISOString(),
            paused: true,
          },
        },
      ],
    });
    await eventually(
      () => progressOf(workflowId),
      (p: Progress) => p.paused === true && p.phase === 'applying',
    );
    await sleep(1500);
    assert.equal((await relabel.store.runs.counts(run)).success, 0, 'the carried pause holds');
    await relabel.runs.control(workflowId, undefined, 'unpause', 'ops-bob');
    const result = await handle.result();
    assert.deepEqual([result.status, result.counts.success, result.counts.written], ['success', 2, 2]);
  });

  it('relabel pause, status and unpause from the command line', async () => {
    const core = adminCore();
    const targets = site.nodes.slice(0, 3);
    // Fresh nodes: the runs above relabelled some of these.
    for (const name of targets) {
      await core.deleteNode({ name });
      await createNode(core, name, {});
    }
    const run = await relabel.runs.start({ targets, concurrency: 1 });
    await relabel.runs.control(run.workflowId, run.runId, 'pause', 'ops-alice');
    await eventually(
      () => progressOf(run.workflowId),
      (p: Progress) => p.phase === 'applying' && p.paused === true,
    );
    const status = exits(await relabelCli(['status', run.workflowId], env), 0);
    assert.match(status.stdout, /^progress: applying \(paused: no new node starts; relabel unpause resumes\): 0\/3 done/m);
    const again = exits(await relabelCli(['pause', run.workflowId], env), 0);
    assert.match(again.stdout, new RegExp(`^${run.workflowId} \\(run ${run.runId}\\) paused \\(it already was\\): 0 node\\(s\\) running, 3 not started$`, 'm'));
    const json = JSON.parse(exits(await relabelCli(['unpause', run.workflowId, '-o', 'json'], env), 0).stdout);
    assert.deepEqual([json.verb, json.run, json.answer.paused, json.answer.changed], ['unpause', run.run, false, true]);
    const done = await relabel.runs.wait(run);
    assert.deepEqual([done.result?.status, done.result?.counts.written], ['success', 3]);
    const users = (await relabel.store.actions.commands(run.run)).filter((c) => c.command !== 'invoke').map((c) => [c.command, c.user]);
    assert.equal(users.length, 3);
    assert.deepEqual(users[0], ['pause', 'ops-alice']);
    assert.deepEqual(
      users.slice(1),
      [
        ['pause', userInfo().username],
        ['unpause', userInfo().username],
      ],
      'the CLI records its commands, with the OS user',
    );
  });

  it('a dry run takes no pause, and an unknown run is RunNotFound', async () => {
    const dry = await relabel.runs.start({ targets: site.nodes.slice(0, 2), dryRun: true });
    await assert.rejects(relabel.runs.control(dry.workflowId, dry.runId, 'pause', 'ops-alice'), (err: RelabelError) => {
      assert.ok(err.type === 'NotRunning', `${err.type}: ${err.message}`);
      return true;
    });
    await relabel.runs.wait(dry);
    await assert.rejects(
      relabel.runs.control(`update-labels/${prefix}-nobody`, undefined, 'stop', 'ops-alice'),
      (err: RelabelError) => err.type === 'RunNotFound',
    );
  });
});
