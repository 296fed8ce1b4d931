/**
 * Joining nodes when things go wrong: the worker SIGKILLed while 100 nodes
 * join and started again 30 s later, and the Temporal server restarted
 * (30 s down) while 100 more join. Every node ends as desired, with the
 * uninitialized taint lifted, and written exactly once (counted by the API
 * server).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Node } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createJoins, type Joins } from '../../src/facade/joins.ts';
import { restartTemporal } from '../../stack/stack.ts';
import { adminCore, createNode, kubeconfigPath, nodePatchCount, startRelabel, startWorkerProcess, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { eventually } from '../api-support.ts';
import { scaledSite, storeWithSite } from '../site.ts';

const UNINITIALIZED = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
const HALF = 100;
const DOWN_MS = 30_000;

const isLabelled = (n: V1Node) =>
  n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);

describe('joining nodes when things go wrong', () => {
  const prefix = `jr${uniqueSuffix()}`;
  const site = scaledSite(prefix, 2 * HALF);
  const siteName = `${prefix}-site`;
  const validation = validateSite(site.files);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let joins: Joins;
  let env: Record<string, string>;
  const workers: ChildProcess[] = [];

  before(async () => {
    assert.ok(validation.ok);
    const { url } = await storeWithSite(site.files);
    // The facade only; the workers run as separate processes.
    relabel = await startRelabel(url, { worker: false });
    joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    env = { TEMPORAL_ADDRESS: temporalAddress(), KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
    workers.push(await startWorkerProcess(env));
    await joins.enable({ site: siteName, by: 'test', watch: { batchDelayMs: 50, maxBatch: 20 } });
  });
  after(async () => {
    await joins.disable({ site: siteName }).catch(() => undefined);
    for (const w of workers) w.kill('SIGKILL');
    await relabel.stop();
  });

  /** Registers `names`, four at a time, as a scale-up does. */
  async function register(names: readonly string[]): Promise<void> {
    const core = adminCore();
    const queue = [...names];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) await createNode(core, name, {}, [UNINITIALIZED]);
      }),
    );
  }

  /** Waits until every node of `names` is labelled, then checks each against the design. */
  async function assertAllJoined(names: readonly string[], ms: number): Promise<void> {
    assert.ok(validation.ok);
    const core = adminCore();
    const deadline = Date.now() + ms;
    let waiting = [...names];
    while (waiting.length > 0) {
      const read = await Promise.all(waiting.map((name) => core.readNode({ name })));
      waiting = read.filter((n) => !isLabelled(n)).map((n) => n.metadata?.name ?? '');
      if (waiting.length === 0) break;
      if (Date.now() > deadline)
        assert.fail(
          `${waiting.length} node(s) not labelled within ${ms / 1000} s, e.g. ${waiting.slice(0, 5).join(', ')}; join status: ${JSON.stringify(await joins.status(siteName)).slice(0, 1500)}`,
        );
      await sleep(250);
    }
    for (const name of names) {
      const node = await core.readNode({ name });
      for (const [k, v] of Object.entries(validation.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
      assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
    }
  }

  it('the worker SIGKILLed while 100 nodes join, started again 30 s later: every node labelled, each written once', async () => {
    await eventually(
      () => joins.status(siteName),
      (s) => s.watcher !== undefined,
      60_000,
      100,
    );
    const before = await nodePatchCount({ code: 200 });
    const names = site.nodes.slice(0, HALF);
    const registering = register(names);
    // Kill once some have joined, while the rest are still registering.
    await eventually(
      () => joins.status(siteName),
      (s) => (s.watcher?.runs ?? 0) >= 1,
      60_000,
      100,
    );
    const killed = workers[0] as ChildProcess;
    killed.kill('SIGKILL');
    await new Promise((r) => killed.once('exit', r));
    await registering;
    await sleep(DOWN_MS);
    workers.push(await startWorkerProcess(env));
    await assertAllJoined(names, 120_000);
    const landed = (await nodePatchCount({ code: 200 })) - before;
    console.log(`# worker killed during joins: ${landed} node writes for ${HALF} joining nodes`);
    assert.equal(landed, HALF, 'each joining node written exactly once');
  });

  it('the Temporal server restarted (30 s down) while 100 nodes join: every node labelled, each written once', async () => {
    const before = await nodePatchCount({ code: 200 });
    const names = site.nodes.slice(HALF);
    const registering = register(names);
    await sleep(500);
    await restartTemporal(process.env.RELABEL_TEST_STACK_DIR as string, DOWN_MS);
    await registering;
    await assertAllJoined(names, 180_000);
    const landed = (await nodePatchCount({ code: 200 })) - before;
    console.log(`# Temporal restarted during joins: ${landed} node writes for ${HALF} joining nodes`);
    assert.equal(landed, HALF, 'each joining node written exactly once');
  });
});
