/**
 * Karpenter creating the nodes for real: Karpenter's own controllers with its
 * KWOK cloud provider on a simulated cluster of this file's own, a node set
 * selecting the nodes of one NodePool by `karpenter.sh/nodepool`, and the
 * join watcher enabled.
 * - 100 pending pods that select the pool and a label of the set make
 *   Karpenter create NodeClaims and Nodes with the NodePool's
 *   `startupTaints` (relabel's uninitialized taint); every node gets the
 *   set's labels and loses the taint in a join run, and every pod runs.
 * - The same 100 pods on a pool without relabel's taint, in the same run:
 *   relabel's taint makes Karpenter create no more nodes than they need.
 * - Karpenter removing the nodes (their NodeClaims deleted: drained, then
 *   the Node gone) during an operator's run over the set leaves no run
 *   failing, and a run of the set afterwards succeeds.
 * Karpenter's KWOK provider creates each Node with only Karpenter's own
 * unregistered taint, and Karpenter adds the NodePool's startupTaints when it
 * registers the node: a join run may write the new Node before that, so the
 * watcher hands a node it saw labelled that then carries relabel's taint to
 * a run again.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createJoins, type Joins } from '../../src/facade/joins.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { startKarpenter, NODEPOOL_LABEL, type Karpenter } from '../../stack/karpenter.ts';
import {
  karpenterSetFile,
  provision,
  registered,
  relabelled,
  removePool,
  RELABEL_STARTUP_TAINT,
  watchPool,
  type PoolClients,
  type PoolWatch,
  type Provisioned,
} from '../../bench/joins/karpenter.ts';
import { startRelabel, uniqueSuffix } from '../helpers.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const PODS = 100;
const TIER = 'example.com/tier';
/** Longest provisioning a pool of 100 pods may take on the shared machine. */
const PROVISION_MS = 90_000;

describe('Karpenter creating the nodes of a node set', () => {
  const prefix = `kp${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const siteName = `${prefix}-site`;
  const [pool, plainPool] = [`${prefix}-relabelled`, `${prefix}-plain`];
  const files = [...site.files, karpenterSetFile('karpenter', pool, { [TIER]: 'gold' })];
  const v = validateSite(files);
  assert.ok(v.ok, v.ok ? '' : JSON.stringify(v.errors.slice(0, 3)));
  const want = v.design.nodeSets?.karpenter ?? assert.fail('the design has the set');
  let sim: SimulatedStack;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let joins: Joins;
  let karpenter: Karpenter;
  let c: PoolClients;
  const watches: PoolWatch[] = [];
  const outcome: { relabelled?: Provisioned; plain?: Provisioned } = {};

  before(async () => {
    sim = await startSimulatedStack('karpenter', { nodes: 0, heartbeatSeconds: 10, leaseSeconds: 40 });
    const { url } = await storeWithSite(files);
    relabel = await startRelabel(url);
    joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    await joins.enable({ site: siteName, by: 'test', watch: { batchDelayMs: 25 } });
    for (let s = await joins.status(siteName); !s.watcher?.resourceVersion; s = await joins.status(siteName)) await sleep(100);
    const t0 = Date.now();
    karpenter = await startKarpenter(sim.dir, { adminKubeconfig: sim.info.adminKubeconfig });
    console.log(`# Karpenter ready in ${Date.now() - t0} ms`);
    c = { kc: loadKubeConfig(sim.info.adminKubeconfig), namespace: 'default' };
  });
  after(async () => {
    for (const w of watches) await w.stop();
    await joins?.disable({ site: siteName }).catch(() => undefined);
    await karpenter?.stop();
    await relabel?.stop();
    await sim?.stop();
  });

  it(`${PODS} pending pods: Karpenter creates the nodes with relabel's startup taint, relabel labels each and lifts the taint, every pod runs; no more nodes than without the taint`, async () => {
    const plainWatch = await watchPool(c.kc, plainPool, registered);
    const watch = await watchPool(c.kc, pool, relabelled);
    watches.push(plainWatch, watch);
    const gold = { [TIER]: 'gold' };
    // Both pools at once, as one batch of Karpenter's: the counts differ only by the taint.
    const [plain, tainted] = await Promise.all([
      provision(c, plainWatch, { name: plainPool, labels: gold }, PODS, PROVISION_MS),
      provision(c, watch, { name: pool, labels: gold, startupTaints: [RELABEL_STARTUP_TAINT] }, PODS, PROVISION_MS),
    ]);
    Object.assign(outcome, { plain, relabelled: tainted });
    const ms = (xs: number[]) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))} ms`;
    console.log(`# plain: ${plain.nodes} nodes, ${plain.podsRunning} pods running in ${Math.round(plain.ms)} ms`);
    console.log(
      `# relabelled: ${tainted.nodes} nodes, ${tainted.podsRunning} pods running in ${Math.round(tainted.ms)} ms; labelled ${ms(tainted.latencies)} after first seen; ${tainted.undone} had relabel's taint put back after it was lifted`,
    );
    assert.equal(plain.podsRunning, PODS, 'every pod of the plain pool runs');
    if (tainted.podsRunning < PODS) {
      const left = (await c.kc.makeApiClient(CoreV1Api).listNode({ labelSelector: `${NODEPOOL_LABEL}=${pool}` })).items;
      console.log(`# a pending pod: ${tainted.pending}`);
      for (const n of left.slice(0, 3))
        console.log(
          `# ${n.metadata?.name}: taints ${JSON.stringify(n.spec?.taints)} allocatable ${JSON.stringify(n.status?.allocatable)} labels ${JSON.stringify(n.metadata?.labels)}`,
        );
    }
    assert.equal(tainted.podsRunning, PODS, 'every pod of the relabelled pool runs');
    assert.deepEqual(tainted.notDone, [], 'every node of the relabelled pool is labelled, its taint lifted');
    assert.ok(tainted.nodes > 1, `Karpenter made several nodes (${tainted.nodes})`);
    assert.ok(
      tainted.nodes <= plain.nodes,
      `relabel's taint makes Karpenter create no more nodes (${tainted.nodes}) than the same pods need without it (${plain.nodes})`,
    );
    assert.equal(tainted.nodeClaims, tainted.nodes, 'one NodeClaim per node');

    const nodes = (await c.kc.makeApiClient(CoreV1Api).listNode({ labelSelector: `${NODEPOOL_LABEL}=${pool}` })).items;
    assert.equal(nodes.length, tainted.nodes);
    for (const node of nodes) assertMember(node);
    const pods = await c.kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: c.namespace, labelSelector: `app=${pool}` });
    const names = new Set(nodes.map((n) => n.metadata?.name));
    for (const p of pods.items) assert.ok(names.has(p.spec?.nodeName), `${p.metadata?.name} runs on a node of the pool`);
    const status = await joins.status(siteName);
    assert.equal(status.watcher?.failed ?? 0, 0, 'no node failed in a join run');
    console.log(`# ${tainted.early} of the nodes were written by a join run before Karpenter registered them`);
  });

  /** A member carries every label of the set, owns them, and has neither relabel's nor Karpenter's start taint. */
  const assertMember = (node: V1Node) => {
    const name = node.metadata?.name ?? '';
    for (const [k, value] of Object.entries(want.labels)) assert.equal(node.metadata?.labels?.[k], value, `${name} ${k}`);
    assert.deepEqual(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION]?.split(',').sort(), Object.keys(want.labels).sort(), `${name} owns its labels`);
    // KWOK keeps what Karpenter's instance type holds (4 CPUs, less its reserve) rather than its own default.
    assert.equal(node.status?.allocatable?.cpu, '3900m', `${name} allocatable`);
    const taints = (node.spec?.taints ?? []).map((t) => t.key);
    assert.ok(!taints.includes(UNINITIALIZED_TAINT_KEY) && !taints.includes('karpenter.sh/unregistered'), `${name} taints ${taints.join(',')}`);
  };

  it('Karpenter removing the nodes leaves no run failing; a run of the set afterwards succeeds', async () => {
    assert.ok(outcome.relabelled, 'the nodes were provisioned');
    const started = new Date();
    // An operator's run over the set while Karpenter drains and removes its nodes.
    const during = await relabel.runs.start({ targets: undefined, select: { nodeSets: ['karpenter'] } });
    const [removed, removedPlain] = await Promise.all([
      removePool(c, watches[1] as PoolWatch, pool, 60_000),
      removePool(c, watches[0] as PoolWatch, plainPool, 60_000),
    ]);
    console.log(`# removed ${removed.removed} + ${removedPlain.removed} NodeClaims in ${Math.round(Math.max(removed.ms, removedPlain.ms))} ms`);
    const duringDone = await relabel.runs.wait(during);
    assert.equal(duringDone.result?.status, 'success', `the run during removal: ${JSON.stringify(duringDone.result)}`);
    const after = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['karpenter'] } }));
    assert.equal(after.result?.status, 'success', `the run after removal: ${JSON.stringify(after.result)}`);
    // Visibility lists a run's outcome a moment after it ended.
    let runs = await relabel.runs.list(200, { site: siteName });
    for (let i = 0; i < 50 && runs.some((r) => r.outcome === undefined); i++) {
      await sleep(200);
      runs = await relabel.runs.list(200, { site: siteName });
    }
    assert.ok(runs.length >= 3, `the join runs and the two operator's runs are listed (${runs.length})`);
    for (const r of runs) assert.equal(r.outcome, 'success', `run ${r.run} (${r.workflowId}) ${JSON.stringify(r)}`);
    const joinRuns = runs.filter((r) => r.startedVia === 'join').length;
    console.log(`# ${joinRuns} join runs and ${runs.length - joinRuns} operator's runs, every one a success`);
    const status = await joins.status(siteName);
    assert.equal(status.watcher?.failed ?? 0, 0, 'no node failed in a join run');
    assert.ok(Date.now() - started.getTime() < 120_000);
  });
});
