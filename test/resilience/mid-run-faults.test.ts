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
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { readStack, restartTemporal } from '../../stack/stack.ts';
import type { Runs } from '../../src/facade/runs/runs.ts';
import { adminCore, createNode, kubeconfigPath, nodePatchCount, startRelabel, startWorkerProcess, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { startNodeWriter, WRITER_LABEL } from '../node-writer.ts';
import { scaledSite, storeWithSite } from '../site.ts';

const NODES = 300;

/** Concurrent request lanes of the writer that races the run (6 nodes each: every node is written as often). */
const WRITER_LANES = 50;
/**
 * Writes per second the writer lands on every node while the run runs, at
 * least. The API server bounds it: each write of these nodes costs it about
 * 4 ms of CPU (and etcd about 0.8 ms), and during a run Temporal and the
 * worker take about one of this machine's two cores, so the writer lands
 * 0.5 to 0.7 writes/s per node (150 to 220 in all); 0.15 to 0.3 when
 * other work shares the machine, which also slows the run.
 */
const WRITES_PER_NODE_SECOND = 0.1;

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A label key every node's design sets (the writer flips it). */
function ownedByAll(labels: Record<string, string>[]): string {
  const key = Object.keys(labels[0] ?? {}).find((k) => labels.every((l) => Object.hasOwn(l, k)));
  assert.ok(key, 'a label every node carries');
  return key;
}

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
    const recovered = (await s.relabel.store.runs.nodes(report.result?.run ?? 0, { limit: NODES })).filter((r) => r.detail?.recovered).length;
    console.log(`# ${landed} node writes landed; the run counted ${report.result?.counts.written} written (${recovered} after a lost completion)`);
    assert.equal(landed, NODES, 'each node written exactly once');
    assert.equal(report.result?.counts.written, landed, "the run's written count equals the writes the API server counted");
    assert.equal((await s.relabel.store.runs.counts(report.result?.run ?? 0)).written, landed, 'and so do the stored rows');
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
    const recovered = (await s.relabel.store.runs.nodes(report.result?.run ?? 0, { limit: NODES })).filter((r) => r.detail?.recovered).length;
    console.log(`# ${landed} node writes landed; the run counted ${report.result?.counts.written} written (${recovered} after a lost completion)`);
    assert.equal(landed, NODES, 'each node written exactly once');
    assert.equal(report.result?.counts.written, landed, "the run's written count equals the writes the API server counted");
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });

  it('fails no node and loses no update while others write every target node (status, labels relabel does not read)', async () => {
    s = await scenario(`cw${uniqueSuffix()}`);
    await s.worker();
    const core = adminCore();
    // A heartbeat-like writer: it sweeps the targets, posting an unowned label and a status condition (as kubelets and other controllers do).
    const writer = startNodeWriter(s.site.nodes, WRITER_LANES);
    let report: Awaited<ReturnType<typeof finished>> | undefined;
    let seconds = 0;
    let perNode: number[] = [];
    let quietAtEnd = 0;
    let refused = 0;
    try {
      // The run starts once every node has its label and its condition written: relabel's bulk read is stale from its first page on.
      while (Math.min(...writer.perNode) < 2) await sleep(50);
      const refusedBefore = await nodePatchCount({ code: 422 });
      const before = [...writer.perNode];
      const started = Date.now();
      const run = await s.relabel.runs.start({ targets: s.site.nodes });
      report = await finished(s.relabel.runs, run);
      const ended = Date.now();
      seconds = (ended - started) / 1000;
      perNode = writer.perNode.map((n, i) => n - (before[i] as number));
      // The longest any node had gone unwritten when the run ended, in seconds.
      quietAtEnd = Math.max(...writer.writtenAt.map((t) => ended - t)) / 1000;
      refused = (await nodePatchCount({ code: 422 })) - refusedBefore;
    } finally {
      await writer.stop();
    }
    const during = perNode.reduce((a, b) => a + b, 0);
    const fewest = Math.min(...perNode);
    console.log(
      `# others wrote ${during} times during the ${seconds.toFixed(1)} s run (${(during / seconds / NODES).toFixed(2)} writes/s per node, ${(during / seconds).toFixed(0)}/s in all; ` +
        `each node ${fewest} to ${Math.max(...perNode)} times, the fewest ${(fewest / seconds).toFixed(2)}/s; every node written in the last ${quietAtEnd.toFixed(1)} s); relabel's writes refused by a guard: ${refused}`,
    );
    assert.equal(report.result?.status, 'success', JSON.stringify(report.result?.failures));
    assert.equal(report.result?.counts.failure, 0);
    assert.equal(report.result?.counts.written, NODES);
    const slowest = s.site.nodes[perNode.indexOf(fewest)];
    assert.ok(
      fewest >= WRITES_PER_NODE_SECOND * seconds,
      `others wrote every node at least ${WRITES_PER_NODE_SECOND} times a second: ${slowest} only ${fewest} times in ${seconds.toFixed(1)} s`,
    );
    assert.ok(quietAtEnd < seconds / 2, `others still wrote every node in the run's second half: one went ${quietAtEnd.toFixed(1)} s unwritten`);
    assert.equal(refused, 0, 'no write by others touched what relabel read: none of its writes was refused');
    for (const name of s.site.nodes) {
      assert.equal((await core.readNode({ name })).metadata?.labels?.[WRITER_LABEL], writer.last.get(name), `the writer's last label on ${name}`);
    }
    await s.assertNodesCorrect();
    await s.close();
    s = undefined;
  });

  it('never overwrites a value of a label it owns that it did not read: a writer flipping it loses no race silently', async () => {
    s = await scenario(`fo${uniqueSuffix()}`);
    await s.worker();
    const core = adminCore();
    const design = validateSite(s.site.files);
    assert.ok(design.ok);
    const key = ownedByAll(s.site.nodes.map((n) => design.design.nodes[n]?.labels ?? {}));
    const refusedBefore = await nodePatchCount({ code: 422 });
    const run = await s.relabel.runs.start({ targets: s.site.nodes, concurrency: 8 });
    await progressed(s.relabel.runs, run, 1);
    // Each node's label flipped once, from the last target back, about as fast as the run goes forward: they meet mid-way.
    const backwards = [...s.site.nodes].reverse();
    for (let i = 0; i < backwards.length; i += 4) {
      await Promise.all(backwards.slice(i, i + 4).map((name) => core.patchNode({ name, body: { metadata: { labels: { [key]: `w-${name}` } } } }, merge)));
      await sleep(100);
    }
    const flippedWhileRunning = (await s.relabel.runs.status(run.workflowId, run.runId)).execution === 'RUNNING';
    const report = await finished(s.relabel.runs, run);
    const rows = new Map((await s.relabel.store.runs.nodes(report.result?.run ?? 0, { limit: NODES })).map((r) => [r.node, r]));
    let theirs = 0;
    let replacedAfterReading = 0;
    for (const name of s.site.nodes) {
      const value = (await core.readNode({ name })).metadata?.labels?.[key];
      const row = rows.get(name);
      if (value === `w-${name}`) {
        theirs++;
        continue;
      }
      // relabel replaced the writer's value: only after reading it, so its result names it.
      assert.equal(row?.status, 'success', `${name}: ${JSON.stringify(row?.detail)}`);
      assert.equal(value, design.design.nodes[name]?.labels[key], name);
      assert.equal(row?.detail?.was?.[key], `w-${name}`, `${name}: relabel replaced the writer's value without having read it`);
      replacedAfterReading++;
    }
    const refused = (await nodePatchCount({ code: 422 })) - refusedBefore;
    console.log(
      `# ${key} flipped on ${NODES} nodes during the run (still running after the flips: ${flippedWhileRunning}): ${theirs} kept the writer's later value, ${replacedAfterReading} replaced after relabel read it; ${refused} of relabel's writes refused by a guard and re-planned`,
    );
    assert.equal(report.result?.status, 'success', JSON.stringify(report.result?.failures));
    assert.ok(replacedAfterReading > 0 && theirs > 0, 'the writer raced the run on both sides');
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
