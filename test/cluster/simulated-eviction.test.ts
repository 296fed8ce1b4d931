/**
 * A planned NoExecute taint's evictions against the real taint-eviction
 * controller, on a simulated cluster of this file's own (KWOK nodes, the
 * real kube-controller-manager): pods with every kind of toleration run on
 * three nodes; a revision gives one node two NoExecute taints, another one
 * of them, and leaves the third alone. Its plan lists as evicted exactly
 * the pods Kubernetes' rules evict — at once when a taint is untolerated,
 * else after the least `tolerationSeconds` of the first toleration matching
 * each taint, never when those set none — and writes nothing; the real run
 * then makes the controller delete exactly those pods, each when the plan
 * said (a pod tolerating for an hour is listed with its 3600 s and stays
 * for the test's span), and no other. A DaemonSet tolerating neither taint
 * is planned to lose its pods on both nodes, evicted at once, and the
 * controllers do just that: evicted, not made again, the third node's kept.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Toleration } from '../../src/core/plan/tolerations.ts';
import type { WorkloadImpact } from '../../src/core/plan/workload-impact.ts';
import { createPlans } from '../../src/facade/plan.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createKwokNodes, waitForKwokNodes } from '../../stack/kwok.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { eventually } from '../api-support.ts';
import { startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const NAMESPACE = 'default';
const MAINTENANCE = { key: 'example.com/maintenance', value: 'drain', effect: 'NoExecute' };
const FENCE = { key: 'example.com/fence', effect: 'NoExecute' };
const m = (rest: Partial<Toleration> = {}): Toleration => ({ key: MAINTENANCE.key, operator: 'Exists', effect: 'NoExecute', ...rest });
const f = (rest: Partial<Toleration> = {}): Toleration => ({ key: FENCE.key, operator: 'Exists', effect: 'NoExecute', ...rest });
const NEVER = null;

/**
 * Each kind of pod: its tolerations, and when Kubernetes' rules evict it
 * from the node given both taints (`both`) and from the node given only the
 * maintenance taint (`one`): seconds (0: at once), or never.
 */
const KINDS: { kind: string; tolerations: Toleration[]; both: number | null; one: number | null }[] = [
  { kind: 'bare', tolerations: [], both: 0, one: 0 },
  { kind: 'tolerates', tolerations: [m(), f()], both: NEVER, one: NEVER },
  { kind: 'equal', tolerations: [m({ operator: 'Equal', value: 'drain' }), f()], both: NEVER, one: NEVER },
  { kind: 'everything', tolerations: [{ operator: 'Exists' }], both: NEVER, one: NEVER },
  { kind: 'maintenance-only', tolerations: [m()], both: 0, one: NEVER },
  { kind: 'wrong-value', tolerations: [m({ operator: 'Equal', value: 'other' }), f()], both: 0, one: 0 },
  { kind: 'no-schedule', tolerations: [m({ effect: 'NoSchedule' }), f()], both: 0, one: 0 },
  { kind: 'zero', tolerations: [m({ tolerationSeconds: 0 }), f()], both: 0, one: 0 },
  { kind: 'seconds', tolerations: [m({ tolerationSeconds: 12 }), f()], both: 12, one: 12 },
  // The least seconds among the tolerations used: the fence's on the node with both taints.
  { kind: 'least', tolerations: [m({ tolerationSeconds: 24 }), f({ tolerationSeconds: 6 })], both: 6, one: 24 },
  // The first toleration matching a taint is the one used, whatever follows.
  { kind: 'first-forever', tolerations: [{ operator: 'Exists' }, m({ tolerationSeconds: 3 })], both: NEVER, one: NEVER },
  { kind: 'first-hour', tolerations: [m({ tolerationSeconds: 3600 }), { operator: 'Exists' }], both: 3600, one: 3600 },
];

/** How long after the taints the test watches: past the latest eviction due within a minute, with room for the controller. */
const WATCH_SECONDS = Math.max(...KINDS.flatMap((k) => [k.both, k.one]).filter((s): s is number => s !== null && s < 60)) + 8;

describe('taint eviction on a simulated cluster: the plan names the pods the real controller evicts, and when', () => {
  const prefix = `sime${uniqueSuffix()}`;
  let sim: SimulatedStack;
  let core: CoreV1Api;

  before(async () => {
    sim = await startSimulatedStack('sim-eviction', { nodes: 0, heartbeatSeconds: 5, leaseSeconds: 20 });
    ({ core } = sim);
  });
  after(async () => {
    await sim.stop();
  });

  const listPods = async () => (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'test=eviction' })).items;
  const running = (pod: V1Pod) => pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;

  /** When each node was first seen with its `count` NoExecute taints (polled every 100 ms): the controller counts from about then. */
  async function taintsSeen(counts: Record<string, number>, timeoutMs = 60_000): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    const deadline = Date.now() + timeoutMs;
    while (seen.size < Object.keys(counts).length) {
      assert.ok(Date.now() < deadline, `taints not seen within ${timeoutMs} ms on ${Object.keys(counts).join(', ')}`);
      for (const [node, count] of Object.entries(counts)) {
        if (seen.has(node)) continue;
        const taints = (await core.readNode({ name: node })).spec?.taints ?? [];
        if (taints.filter((t) => t.effect === 'NoExecute').length === count) seen.set(node, Date.now());
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return seen;
  }

  it('the dry run lists exactly the pods the taints evict, with their delay; the real run makes the controller evict exactly those, then', async () => {
    const seen = new Set<string>();
    const site = (taints: Record<string, object[]>) =>
      prefixedSite(prefix, (doc) => {
        if (doc.schema !== 'drydock/BaremetalNode/v1') return;
        if (doc.data.host_profile === 'compute') seen.add(doc.metadata.name);
        const extra = taints[doc.metadata.name];
        if (extra) doc.data.metadata.taints = [...(doc.data.metadata.taints ?? []), ...extra];
      });
    const first = site({});
    const compute = [...seen].sort().slice(0, 3);
    const [both, one, untouched] = compute as [string, string, string];
    const admin = loadKubeConfig(sim.info.adminKubeconfig);
    await createKwokNodes(admin, compute);
    await waitForKwokNodes(admin, compute, 60_000);

    const { url } = await storeWithSite(first.files);
    const relabel = await startRelabel(url);
    try {
      const labelled = await relabel.runs.wait(await relabel.runs.start({ targets: compute }));
      assert.equal(labelled.result?.status, 'success', JSON.stringify(labelled.result));
      // Every kind of pod on every node, bound there directly (the taints come later).
      const pods = compute.flatMap((node, i) => KINDS.map((k) => ({ ...k, node, name: `${k.kind}-${i}` })));
      await Promise.all(
        pods.map((p) =>
          core.createNamespacedPod({
            namespace: NAMESPACE,
            body: {
              metadata: { name: p.name, labels: { test: 'eviction' } },
              spec: { nodeName: p.node, tolerations: p.tolerations, containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
            },
          }),
        ),
      );
      await eventually(listPods, (items) => items.length === pods.length && items.every(running), 60_000, 250);
      // And a DaemonSet without tolerations of its own on all three nodes.
      const ds = `agent-${uniqueSuffix()}`;
      await sim.apps.createNamespacedDaemonSet({
        namespace: NAMESPACE,
        body: {
          metadata: { name: ds },
          spec: {
            selector: { matchLabels: { app: ds } },
            template: { metadata: { labels: { app: ds } }, spec: { containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.10' }] } },
          },
        },
      });
      const daemonPods = async () => (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${ds}` })).items;
      const daemonBefore = await eventually(daemonPods, (items) => items.length === 3 && items.every(running), 60_000, 250);

      await relabel.store.revisions.stage('site', site({ [both]: [MAINTENANCE, FENCE], [one]: [MAINTENANCE] }).files);
      await relabel.store.revisions.commit({ message: 'maintenance: two nodes drained' });
      const plan = await createPlans(relabel.runs).plan({ targets: compute });
      assert.ok(plan.impact && !('unavailable' in plan.impact), `the plan weighs its workload impact: ${JSON.stringify(plan.impact)}`);
      const impact: WorkloadImpact = plan.impact;
      const due = (p: (typeof pods)[number]) => (p.node === both ? p.both : p.node === one ? p.one : NEVER);
      const expected = pods
        .filter((p) => due(p) !== NEVER)
        .map((p) => `${p.name}@${p.node} after ${due(p)}s`)
        .sort();
      const planned = impact.workloads
        .filter((w) => w.namespace === NAMESPACE && w.workload.startsWith('Pod/'))
        .flatMap((w) => w.evicted.sample.map((e) => `${e.pod}@${e.node} after ${e.afterSeconds}s`))
        .sort();
      assert.deepEqual(planned, expected, 'the plan lists exactly the pods the taints evict, with their delay');
      assert.equal(impact.moreWorkloads, 0);
      // The DaemonSet's pods: evicted at once from both tainted nodes, and the DaemonSet's losses there (it tolerates neither taint).
      const daemon = impact.workloads.find((w) => w.workload === `DaemonSet/${ds}`);
      assert.deepEqual(daemon?.evicted.sample.map((e) => `${e.node} after ${e.afterSeconds}s`).sort(), [both, one].map((n) => `${n} after 0s`).sort());
      assert.deepEqual(
        impact.daemonSets.filter((d) => d.name === ds).map((d) => ({ gains: d.gains.count, loses: [...d.loses.sample].sort() })),
        [{ gains: 0, loses: [both, one].sort() }],
      );
      assert.deepEqual(
        { nodesChanged: impact.totals.nodesChanged, podsEvicted: impact.totals.podsEvicted, podsStranded: impact.totals.podsStranded },
        { nodesChanged: 2, podsEvicted: expected.length + 2, podsStranded: 0 },
      );
      const afterPlan = await listPods();
      assert.ok(afterPlan.length === pods.length && afterPlan.every(running), 'the plan evicts nothing');
      for (const node of [both, one]) assert.equal((await core.readNode({ name: node })).spec?.taints?.length ?? 0, 0, `the plan taints nothing (${node})`);

      const tainted = taintsSeen({ [both]: 2, [one]: 1 });
      const run = await relabel.runs.wait(await relabel.runs.start({ targets: compute }));
      assert.equal(run.result?.status, 'success', JSON.stringify(run.result));
      assert.equal(run.result?.counts.written, 2);
      const added = await tainted;
      const goneAt = new Map<string, number>();
      const deadline = Math.max(...added.values()) + WATCH_SECONDS * 1000;
      while (Date.now() < deadline) {
        const present = new Map((await listPods()).map((p) => [p.metadata?.name ?? '', p]));
        for (const p of pods) if (!goneAt.has(p.name) && !(present.has(p.name) && running(present.get(p.name) as V1Pod))) goneAt.set(p.name, Date.now());
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const evicted = pods
        .filter((p) => goneAt.has(p.name))
        .map((p) => p.name)
        .sort();
      const dueInWindow = pods
        .filter((p) => due(p) !== NEVER && (due(p) as number) < WATCH_SECONDS - 5)
        .map((p) => p.name)
        .sort();
      assert.deepEqual(evicted, dueInWindow, `the controller evicts exactly the planned pods due within ${WATCH_SECONDS} s`);
      const timings = pods
        .filter((p) => goneAt.has(p.name))
        .map((p) => ({ pod: p.name, planned: due(p) as number, seconds: ((goneAt.get(p.name) as number) - (added.get(p.node) as number)) / 1000 }));
      console.log(`# evictions, seconds after the taint (planned → seen): ${timings.map((t) => `${t.pod} ${t.planned}→${t.seconds.toFixed(1)}`).join(', ')}`);
      for (const t of timings) {
        // Both moments are polled (every 0.1 s and 0.25 s, each poll a request): up to a second either way; the controller adds a little.
        assert.ok(
          t.seconds >= t.planned - 1 && t.seconds <= t.planned + 5,
          `${t.pod} evicted ${t.seconds.toFixed(1)} s after the taint; the plan said ${t.planned} s`,
        );
      }
      assert.equal((await core.readNode({ name: untouched })).spec?.taints?.length ?? 0, 0, `${untouched} is left as it was`);
      // The DaemonSet's pods on the tainted nodes were evicted and not made again; the untouched node's is the same pod.
      const daemonAfter = (await daemonPods()).filter(running);
      assert.deepEqual(
        daemonAfter.map((p) => `${p.spec?.nodeName} ${p.metadata?.uid}`),
        daemonBefore.filter((p) => p.spec?.nodeName === untouched).map((p) => `${untouched} ${p.metadata?.uid}`),
      );
    } finally {
      await relabel.stop();
    }
  });
});
