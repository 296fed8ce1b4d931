/**
 * The workload impact against the real controllers, on a simulated cluster
 * of this file's own (KWOK nodes, the real kube-controller-manager and
 * kube-scheduler): a DaemonSet selecting `ceph-osd=enabled` runs on the
 * sample site's storage nodes (and, in a wider case, on the 21 nodes that
 * are not the control plane's); the plan of a revision that takes the label
 * from some of them (two; twelve) names exactly those nodes as losing the
 * DaemonSet's pod, and writes nothing; the real run of that revision then
 * makes the real DaemonSet controller delete exactly the pods on those
 * nodes and leave the others as they were.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { WorkloadImpact } from '../../src/core/plan/workload-impact.ts';
import { createPlans } from '../../src/facade/plan.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createKwokNodes, waitForKwokNodes } from '../../stack/kwok.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { eventually } from '../api-support.ts';
import { startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

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
      return {
        settled,
        nodes: pods.map((p) => p.spec?.nodeName ?? '').sort(),
        pods: pods.map((p) => [p.spec?.nodeName ?? '', p.metadata?.uid ?? ''] as const),
      };
    };
    const got = await eventually(probe, (v) => v.settled && JSON.stringify(v.nodes) === want, timeoutMs, 250);
    return new Map(got.pods);
  }

  /**
   * Labels the site's nodes that `carries` picks with `ceph-osd=enabled` (the
   * storage profile's own, or the node's documents'), runs the DaemonSet on
   * them, then commits a revision unsetting it on the nodes `drop` picks
   * (from the carriers, sorted): the plan names exactly those as the
   * DaemonSet's losses and deletes nothing; the real run makes the
   * controller delete exactly their pods.
   */
  async function cephOsdLeaves(prefix: string, carries: (doc: Record<string, any>) => boolean, drop: (carriers: string[]) => string[]): Promise<void> {
    const carriers = new Set<string>();
    const site = (dropped: readonly string[]) =>
      prefixedSite(prefix, (doc) => {
        if (doc.schema !== 'drydock/BaremetalNode/v1' || !carries(doc)) return;
        carriers.add(doc.metadata.name);
        const ownerData = doc.data.metadata.owner_data ?? {};
        if (dropped.includes(doc.metadata.name)) doc.data.metadata.owner_data = { ...ownerData, '!ceph-osd': '' };
        else if (doc.data.host_profile !== 'storage') doc.data.metadata.owner_data = { ...ownerData, 'ceph-osd': 'enabled' };
      });
    const first = site([]);
    const nodes = [...carriers].sort();
    const lost = drop(nodes).sort();
    const kept = nodes.filter((n) => !lost.includes(n));
    assert.ok(kept.length > 0 && lost.every((n) => nodes.includes(n)), `ceph-osd nodes: ${nodes.join(', ')}; dropped: ${lost.join(', ')}`);

    const admin = loadKubeConfig(info.adminKubeconfig);
    await createKwokNodes(admin, nodes);
    await waitForKwokNodes(admin, nodes, 60_000);
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
      const labelled = await relabel.runs.wait(await relabel.runs.start({ targets: nodes }));
      assert.equal(labelled.result?.status, 'success', JSON.stringify(labelled.result));
      const before = await podsSettle(ds, nodes);

      await relabel.store.revisions.stage('site', site(lost).files);
      await relabel.store.revisions.commit({ message: `ceph-osd leaves ${lost.length} nodes` });
      const plan = await createPlans(relabel.runs).plan({ targets: nodes });
      assert.ok(plan.impact && !('unavailable' in plan.impact), `the plan weighs its workload impact: ${JSON.stringify(plan.impact)}`);
      const impact: WorkloadImpact = plan.impact;
      const mine = impact.daemonSets.filter((d) => d.namespace === NAMESPACE && d.name === ds);
      assert.deepEqual(
        mine.map((d) => ({ gains: d.gains.count, loses: d.loses.count, nodes: [...d.loses.sample].sort() })),
        [{ gains: 0, loses: lost.length, nodes: lost }],
      );
      assert.equal(impact.totals.nodesChanged, lost.length, 'only the nodes losing ceph-osd change');
      assert.deepEqual(await podsSettle(ds, nodes, 10_000), before, 'the plan deletes no pod');

      const run = await relabel.runs.wait(await relabel.runs.start({ targets: nodes }));
      assert.equal(run.result?.status, 'success', JSON.stringify(run.result));
      assert.equal(run.result?.counts.written, lost.length);
      const after = await podsSettle(ds, kept);
      const deleted = [...before]
        .filter(([node, uid]) => after.get(node) !== uid)
        .map(([node]) => node)
        .sort();
      assert.deepEqual(deleted, lost, 'the DaemonSet controller deletes the pods on exactly the planned nodes');
      for (const node of kept) assert.equal(after.get(node), before.get(node), `the pod on ${node} stays as it was`);
    } finally {
      await relabel.stop();
      // The next case's DaemonSet selects the same label: leave it none of these nodes.
      await apps.deleteNamespacedDaemonSet({ name: ds, namespace: NAMESPACE });
      await Promise.all(nodes.map((name) => core.deleteNode({ name })));
    }
  }

  it('a dry run names exactly the nodes losing the DaemonSet pod; the real run makes the controller delete exactly those pods', async () => {
    // The sample site's storage nodes carry ceph-osd=enabled (host profile `storage`); revision 2 unsets it on two of them.
    await cephOsdLeaves(
      prefix,
      (doc) => doc.data.host_profile === 'storage',
      (storage) => [storage[0], storage[2]] as string[],
    );
  });

  it('ceph-osd leaving 12 of 21 nodes: the plan names the DaemonSet and exactly those 12, and the controller deletes exactly their pods', async () => {
    // Every node but the control plane's carries ceph-osd=enabled (the storage profile's, or its own document's).
    const twelve = (nodes: string[]) => nodes.filter((_, i) => i % 3 !== 1).slice(0, 12);
    await cephOsdLeaves(
      `${prefix}w`,
      (doc) => doc.data.host_profile !== 'cp',
      (nodes) => {
        assert.equal(nodes.length, 21);
        return twelve(nodes);
      },
    );
  });
});
