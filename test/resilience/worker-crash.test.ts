/**
 * Crash safety: SIGKILL the worker process in the middle of a 300-node run,
 * start a new one, and the run completes with every node correct, no node
 * written more than once (its plan needs exactly one write), and as many
 * nodes counted written as writes the API server counted.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import type { Progress } from '../../src/contracts/messages.ts';
import { adminCore, createNode, kubeconfigPath, nodePatchCount, startRelabel, startWorkerProcess, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { scaledSite, storeWithSite } from '../site.ts';

const NODES = 300;

describe('a worker killed mid-run', () => {
  const prefix = `cr${uniqueSuffix()}`;
  const site = scaledSite(prefix, NODES);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  const children: ChildProcess[] = [];

  before(async () => {
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    storeUrl = (await storeWithSite(site.files)).url;
    // The facade only; the workers run as separate processes below.
    relabel = await startRelabel(storeUrl, { worker: false });
    const core = adminCore();
    for (const name of site.nodes) await createNode(core, name);
  });
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await relabel.stop();
  });

  it('resumes on a new worker; every node correct and written exactly once', async () => {
    const env = { TEMPORAL_ADDRESS: temporalAddress(), KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const first = await startWorkerProcess(env);
    children.push(first);
    const writesBefore = await nodePatchCount({ code: 200 });
    const run = await relabel.runs.start({ targets: site.nodes, concurrency: 8 });

    let atKill: Progress | undefined;
    while ((atKill?.counts.success ?? 0) < 30) {
      await sleep(200);
      const p = await relabel.runs.status(run.workflowId, run.runId);
      assert.equal(p.execution, 'RUNNING', 'run must still be running when the worker is killed');
      atKill = p.progress;
    }
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    console.log(`# killed the worker with ${atKill?.counts.success}/${NODES} nodes done, ${atKill?.counts.running} in flight`);
    assert.ok((atKill?.counts.success ?? 0) < NODES);

    children.push(await startWorkerProcess(env));
    const final = await relabel.runs.wait(run);
    assert.equal(final.result?.status, 'success');
    assert.equal(final.result?.counts.success, NODES);

    const landed = (await nodePatchCount({ code: 200 })) - writesBefore;
    const rows = await relabel.store.runs.nodes(final.result?.run ?? 0, { limit: NODES });
    const recovered = rows.filter((r) => r.detail?.recovered).length;
    console.log(
      `# ${landed} node writes landed for ${NODES} nodes; the run counted ${final.result?.counts.written} written (${recovered} after a lost completion)`,
    );
    assert.equal(landed, NODES, 'each node written exactly once');
    assert.equal(final.result?.counts.written, landed, "the run's written count equals the writes the API server counted");
    assert.equal((await relabel.store.runs.counts(final.result?.run ?? 0)).written, landed, 'and so do the stored rows');

    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    const core = adminCore();
    for (const name of site.nodes) {
      const node = await core.readNode({ name });
      const desired: Record<string, string> = validation.design.nodes[name]?.labels ?? {};
      for (const [k, v] of Object.entries(desired)) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
      assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
      assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], name);
    }
  });
});
