/**
 * The workload impact against the real controllers, on a simulated cluster
 * of this file's own (KWOK nodes, the real kube-controller-manager and
 * kube-scheduler): a DaemonSet selecting `ceph-osd=enabled` runs on the
 * sample site's storage nodes; the plan of a revision that takes the label
 * from some of them names exactly those nodes as losing the DaemonSet's
 * pod, and writes nothing; the real run of that revision then makes the
 * real DaemonSet controller delete exactly the pods on those nodes and
 * leave the others as they were.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { WorkloadImpact } from '../src/core/plan/workload-impact.ts';
import { createPlans } from '../src/facade/plan.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createKwokNodes, waitForKwokNodes } from '../stack/kwok.ts';
import type { StackInfo } from '../stack/stack.ts';
import { startSimulatedStack, type SimulatedStack } from './simulated-stack.ts';
import { eventually } from './api-support.ts';
import { startRelabel, uniqueSuffix } from './helpers.ts';
import { prefixedSite, storeWithSite } from './site.ts';

const NAMESPACE = 'default';

describe('workload impact on a simulated cluster: the plan names the nodes the real DaemonSet controller leaves', () => {
  const prefix = `simi${uniqueSuffix()}`;
  let sim: SimulatedStack;
  let info: StackInfo;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  before(async () => {
    sim = await startSimulatedStack('sim-impact', { nodes: 1, nodePrefix: `${prefix}-k`, heartbeatSeconds: 5, leaseSeconds: 20 });
    ({ info, core, apps } = sim);
  });
  after(async () => {
    await sim.stop();
  });

  /** The DaemonSet's pods by node (uid), once every one is Running, bound and not being deleted; fails on a timeout. */
  async function podsSettle(name: string, expected: readonly string[], timeoutMs = 90_000): Promise<Map<string, string>> {
    const want = JSON.stringify([...expected].sort());
    const probe = async () => {
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${name}` })).items;
      const settled = pods.every((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
      return { settled, nodes: pods.map((p) => p.spec?.nodeName ?? '').sort(), pods: pods.map((p) => [p.spec?.nodeName ?? '', p.metadata?.uid ?? ''] as const) };
    };
    const got = await eventually(probe, (v) => v.settled && JSON.stringify(v.nodes) === want, timeoutMs, 250);
    return new Map(got.pods);
  }

  it('a dry run names exactly the nodes losing the DaemonSet pod; the real run makes the controller delete exactly those pods', async () => {
    // The sample site's storage nodes carry ceph-osd=enabled (host profile `storage`); revision 2 unsets it on two of them.
    let storage: string[] = [];
    const site = (dropped: readonly string[]) =>
      prefixedSite(prefix, (doc) => {
        if (doc.schema !== 'drydock/BaremetalNode/v1') return;
        if (doc.data.host_profile === 'storage' && !storage.includes(doc.metadata.name)) storage.push(doc.metadata.name);
        if (dropped.includes(doc.metadata.name)) doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, '!ceph-osd': '' };
      });
    const first = site([]);
    assert.ok(storage.length >= 4, `storage nodes: ${storage.join(', ')}`);
    storage = [...storage].sort();
    const lost = [storage[0], storage[2]] as string[];
    const kept = storage.filter((n) => !lost.includes(n));

    const admin = loadKubeConfig(info.adminKubeconfig);
    await createKwokNodes(admin, storage);
    await waitForKwokNodes(admin, storage, 60_000);
    const ds = `osd-${uniqueSuffix()}`;
    await apps.createNamespacedDaemonSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name: ds },
        spec: {
          selector: { matchLabels: { app: ds } },
          template: {
            metadata: { labels: { app: ds } },
            spec: { nodeSelector: { 'ceph-osd': 'enabled' }, containers: [{ name: 'osd', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      },
    });

    const { url } = await storeWithSite(first.files);
    const relabel = await startRelabel(url);
    try {
      const labelled = await relabel.runs.wait(await relabel.runs.start({ targets: storage }));
      assert.equal(labelled.result?.status, 'success', JSON.stringify(labelled.result));
      const before = await podsSettle(ds, storage);

      await relabel.store.stage('site', site(lost).files);
      await relabel.store.commit({ message: 'ceph-osd leaves two storage nodes' });
      const plan = await createPlans(relabel.runs).plan({ targets: storage });
      assert.ok(plan.impact && !('unavailable' in plan.impact), `the plan weighs its workload impact: ${JSON.stringify(plan.impact)}`);
      const impact: WorkloadImpact = plan.impact;
      const mine = impact.daemonSets.filter((d) => d.namespace === NAMESPACE && d.name === ds);
      assert.deepEqual(
        mine.map((d) => ({ gains: d.gains.count, loses: d.loses.count, nodes: [...d.loses.sample].sort() })),
        [{ gains: 0, loses: lost.length, nodes: lost }],
      );
      assert.equal(impact.totals.nodesChanged, lost.length, 'only the nodes losing ceph-osd change');
      assert.deepEqual(await podsSettle(ds, storage, 10_000), before, 'the plan deletes no pod');

      const run = await relabel.runs.wait(await relabel.runs.start({ targets: storage }));
      assert.equal(run.result?.status, 'success', JSON.stringify(run.result));
      assert.equal(run.result?.counts.written, lost.length);
      const after = await podsSettle(ds, kept);
      const deleted = [...before].filter(([node, uid]) => after.get(node) !== uid).map(([node]) => node).sort();
      assert.deepEqual(deleted, lost, 'the DaemonSet controller deletes the pods on exactly the planned nodes');
      for (const node of kept) assert.equal(after.get(node), before.get(node), `the pod on ${node} stays as it was`);
      await apps.deleteNamespacedDaemonSet({ name: ds, namespace: NAMESPACE });
    } finally {
      await relabel.stop();
    }
  });
});
