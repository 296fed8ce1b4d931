/**
 * A 300-node run against the real stack while something goes wrong in the
 * middle: the Temporal server restarts, the API server freezes, another
 * client writes the same nodes, or two worker processes share the work.
 * Each time the run completes, every node is as desired, no node is
 * written more than its plan needs, and the run counts as written exactly
 * the writes the API server counted.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION } from '../src/core/plan/constants.ts';
import { validateSite } from '../src/core/site/validate-site.ts';
import { readStack, restartTemporal } from '../stack/stack.ts';
import type { Runs } from '../src/facade/runs.ts';
import { adminCore, createNode, kubeconfigPath, nodePatchCount, startRelabel, startWorkerProcess, temporalAddress, uniqueSuffix } from './helpers.ts';
import { scaledSite, storeWithSite } from './site.ts';

const NODES = 300;

/** A site of its own, its nodes registered, the facade, and worker processes started on demand. */
async function scenario(prefix: string) {
  const site = scaledSite(prefix, NODES);
  const validation = validateSite(site.files);
  assert.ok(validation.ok);
  const storeUrl = (await storeWithSite(site.files)).url;
  const relabel = await startRelabel(storeUrl, { worker: false });
  const core = adminCore();
  for (let i = 0; i < site.nodes.length; i += 20) await Promise.all(site.nodes.slice(i, i + 20).map((n) => createNode(core, n)));
  const workers: ChildProcess[] = [];
  const env = { TEMPORAL_ADDRESS: temporalAddress(), KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
  return {
    site,
    relabel,
    async worker(): Promise<ChildProcess> {
      const w = await startWorkerProcess(env);
      workers.push(w);
      return w;
    },
    /** Every node carries its desired labels and the ownership record. */
    async assertNodesCorrect(): Promise<void> {
      for (const name of site.nodes) {
        const node = await core.readNode({ name });
        for (const [k, v] of Object.entries(validation.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
        assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
      }
    },
    async close(): Promise<void> {
      for (const w of workers) w.kill('SIGKILL');
      await relabel.stop();
    },
  };
}

/** Resolves once the run has at least `done` nodes done. */
async function progressed(runs: Runs, run: { workflowId: string; runId: string }, done: number): Promise<void> {
  for (;;) {
    const p = (await runs.status(run.workflowId, run.runId).catch(() => undefined))?.progress;
    if (p && p.counts.success + p.counts.failure >= done) return;
    await sleep(100);
  }
}

/** Waits for the run to finish, riding out a Temporal server that is briefly away. */
async function finished(runs: Runs, run: { workflowId: string; runId: string }) {
  for (let i = 0; ; i++) {
    try {
      const report = await runs.wait(run);
      if (report.execution !== 'RUNNING') return report;
    } catch (err) {
      if (i > 60) throw err;
    }
    await sleep(1000);
  }
}

describe('a 300-node run when things go wrong', () => {
  let s: Awaited<ReturnType<typeof scenario>> | undefined;
  after(async () => s?.close());

  it('survives a Temporal server restart: completes, every node correct and written once', async () => {
    s = await scenario(`tr${uniqueSuffix()}`);
    await s.worker();
    const before = await nodePatchCount({ code: 200 });
    const run = await s.relabel.runs.start({ targets: s.site.nodes, concurrency: 8 });
    await progressed(s.relabel.runs, run, 40);
    await restartTemporal(process.env.RELABEL_TEST_STACK_DIR as string, 2000);
    const report = await finished(s.relabel.runs, run);
    assert.equal(report.result?.status, 'success');
    assert.equal(report.result?.counts.success, NODES);
    const landed = (await nodePatchCount({ code: 200 })) - before;
    const recovered = (await s.relabel.store.runNodes(report.result?.run ?? 0, { limit: NODES })).filter((r) => r.detail?.recovered).length;
    console.log(`# ${landed} node writes landed; the run counted ${report.result?.counts.written} written (${recovered} after a lost completion)`);
    assert.equal(landed, NODES, 'each node written exactly once');
    assert.equal(report.result?.counts.written, landed, "the run's written count equals the writes the API server counted");
    assert.equal((await s.relabel.store.runCounts(report.result?.run ?? 0)).written, landed, 'and so do the stored rows');
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });

  it('survives the API server frozen for 20 s: completes, every node correct and written once', async () => {
    s = await scenario(`fz${uniqueSuffix()}`);
    await s.worker();
    const apiserver = readStack(process.env.RELABEL_TEST_STACK_DIR as string)?.processes.find((p) => p.name === 'kube-apiserver');
    assert.ok(apiserver);
    const before = await nodePatchCount({ code: 200 });
    const run = await s.relabel.runs.start({ targets: s.site.nodes, concurrency: 8 });
    await progressed(s.relabel.runs, run, 40);
    process.kill(apiserver.pid, 'SIGSTOP');
    try {
      await sleep(20_000);
    } finally {
      process.kill(apiserver.pid, 'SIGCONT');
    }
    const report = await finished(s.relabel.runs, run);
    assert.equal(report.result?.status, 'success', JSON.stringify(report.result?.failures));
    const landed = (await nodePatchCount({ code: 200 })) - before;
    const recovered = (await s.relabel.store.runNodes(report.result?.run ?? 0, { limit: NODES })).filter((r) => r.detail?.recovered).length;
    console.log(`# ${landed} node writes landed; the run counted ${report.result?.counts.written} written (${recovered} after a lost completion)`);
    assert.equal(landed, NODES, 'each node written exactly once');
    assert.equal(report.result?.counts.written, landed, "the run's written count equals the writes the API server counted");
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });

  it('loses no update of a concurrent writer', async () => {
    s = await scenario(`cw${uniqueSuffix()}`);
    await s.worker();
    const core = adminCore();
    const run = await s.relabel.runs.start({ targets: s.site.nodes, concurrency: 4 });
    // Another client labels every node while the run goes on (merge patches with no resourceVersion, as kubectl label).
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const conflictsBefore = await nodePatchCount({ code: 409 });
    await progressed(s.relabel.runs, run, 1);
    for (const name of s.site.nodes) {
      await core.patchNode({ name, body: { metadata: { labels: { 'ops.example.com/writer': `w-${name}` } } } }, merge);
    }
    const report = await finished(s.relabel.runs, run);
    assert.equal(report.result?.status, 'success');
    const conflicts = (await nodePatchCount({ code: 409 })) - conflictsBefore;
    console.log(`# ${conflicts} of relabel's patches met the writer's change (409) and were re-planned`);
    assert.ok(conflicts > 0, 'the writer raced the run');
    for (const name of s.site.nodes) {
      assert.equal((await core.readNode({ name })).metadata?.labels?.['ops.example.com/writer'], `w-${name}`, `the writer's label on ${name}`);
    }
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });

  it('shares one run between two worker processes, both doing work', async () => {
    s = await scenario(`tw${uniqueSuffix()}`);
    const [a, b] = [await s.worker(), await s.worker()];
    const run = await s.relabel.runs.start({ targets: s.site.nodes, concurrency: 16 });
    const report = await finished(s.relabel.runs, run);
    assert.equal(report.result?.status, 'success');
    // Which worker completed each child's workflow task: both identities must appear.
    const identities = new Set<string>();
    for (const name of s.site.nodes) {
      const history = await s.relabel.client.workflow.getHandle(`${run.workflowId}/${report.result?.run}/${name}`).fetchHistory();
      for (const e of history.events ?? []) {
        const identity = e.workflowTaskCompletedEventAttributes?.identity;
        if (identity) identities.add(identity.split('@')[0] as string);
      }
    }
    assert.deepEqual([...identities].sort(), [String(a.pid), String(b.pid)].sort());
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });
});
