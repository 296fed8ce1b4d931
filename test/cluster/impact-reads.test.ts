/**
 * The workload impact against the stack's real kube-apiserver, read as
 * relabel's least-privilege worker: the DaemonSets, the unfinished pods
 * bound to the changed nodes (filtered by the server) and the
 * PodDisruptionBudgets come back as the impact needs them, and weighing a
 * change that drops `ceph-osd=enabled` and adds a NoExecute taint names the
 * DaemonSet losing its pod, the pods evicted (at once, or after their
 * tolerationSeconds), the pod stranded, and the budget they count against.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import type { NodeChange, WorkloadImpact } from '../../src/core/plan/workload-impact.ts';
import { assessImpact } from '../../src/activities/plan-impact.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createWorkloadApi } from '../../src/kube/workloads.ts';
import { adminKubeconfigPath, createNode, kubeconfigPath, uniqueSuffix } from '../helpers.ts';

describe('workload impact on the real API server', () => {
  const suffix = uniqueSuffix();
  const ns = `wi-${suffix}`;
  const [n1, n2] = [`wi-${suffix}-1`, `wi-${suffix}-2`];
  const admin = loadKubeConfig(adminKubeconfigPath());
  const core = admin.makeApiClient(CoreV1Api);
  const apps = admin.makeApiClient(AppsV1Api);
  const policy = admin.makeApiClient(PolicyV1Api);
  const container = [{ name: 'c', image: 'registry.invalid/pause' }];
  const pod = (name: string, nodeName: string, spec: Partial<V1Pod['spec']> = {}, metadata: V1Pod['metadata'] = {}) =>
    core.createNamespacedPod({ namespace: ns, body: { metadata: { name, ...metadata }, spec: { nodeName, containers: container, ...spec } } });

  before(async () => {
    await core.createNamespace({ body: { metadata: { name: ns } } });
    // No controller manager makes the namespace's default service account; pods need it.
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'default' } } });
    await createNode(core, n1, { 'ceph-osd': 'enabled' });
    await createNode(core, n2, { 'ceph-osd': 'enabled', rack: 'r1' });
    const ds = await apps.createNamespacedDaemonSet({
      namespace: ns,
      body: {
        metadata: { name: 'osd' },
        spec: {
          selector: { matchLabels: { app: 'osd' } },
          template: { metadata: { labels: { app: 'osd' } }, spec: { nodeSelector: { 'ceph-osd': 'enabled' }, containers: container } },
        },
      },
    });
    const owner = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'osd', uid: ds.metadata?.uid ?? '', controller: true };
    await pod('osd-1', n1, {}, { labels: { app: 'osd' }, ownerReferences: [owner] });
    await pod('web-1', n1, {}, { labels: { app: 'web' } });
    await pod('web-2', n1, { tolerations: [{ key: 'maint', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120 }] }, { labels: { app: 'web' } });
    await pod('db-0', n2, { nodeSelector: { rack: 'r1' } }, { labels: { app: 'db' } });
    const done = await pod('done-0', n1, {}, { labels: { app: 'web' } });
    await core.replaceNamespacedPodStatus({ name: 'done-0', namespace: ns, body: { ...done, status: { phase: 'Succeeded' } } });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name: 'web-pdb' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } },
    });
  });

  after(async () => {
    await core.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const name of [n1, n2]) await core.deleteNode({ name }).catch(() => undefined);
  });

  it('lists what the impact needs, as the worker, unfinished pods only, filtered by node by the server', async () => {
    const workloads = createWorkloadApi(loadKubeConfig(kubeconfigPath()));
    const pods: string[] = [];
    for await (const page of workloads.listPods({ pageSize: 2, nodeName: n1 })) pods.push(...page.filter((p) => p.namespace === ns).map((p) => p.name));
    assert.deepEqual(pods.sort(), ['osd-1', 'web-1', 'web-2']);
    const sets = [];
    for await (const page of workloads.listDaemonSets({ pageSize: 50 })) sets.push(...page.filter((d) => d.namespace === ns));
    assert.deepEqual(sets, [{ namespace: ns, name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } }]);
    const budgets = [];
    for await (const page of workloads.listDisruptionBudgets({ pageSize: 50 })) budgets.push(...page.filter((b) => b.namespace === ns));
    assert.deepEqual(budgets, [{ namespace: ns, name: 'web-pdb', selector: { matchLabels: { app: 'web' } } }]);
  });

  it('weighs a change: the DaemonSet losing its pod, pods evicted and stranded, and their budget', async () => {
    const changes: NodeChange[] = [
      { name: n1, before: { labels: { 'ceph-osd': 'enabled' }, taints: [] }, after: { labels: {}, taints: [{ key: 'maint', effect: 'NoExecute' }] } },
      { name: n2, before: { labels: { 'ceph-osd': 'enabled', rack: 'r1' }, taints: [] }, after: { labels: { 'ceph-osd': 'enabled' }, taints: [] } },
    ];
    const impact = (await assessImpact(createWorkloadApi(loadKubeConfig(kubeconfigPath())), changes)) as WorkloadImpact;
    const osd = impact.daemonSets.find((d) => d.namespace === ns);
    assert.deepEqual(osd && [osd.name, osd.loses, osd.gains.count], ['osd', { count: 1, sample: [n1] }, 0]);
    const mine = impact.workloads.filter((w) => w.namespace === ns).map((w) => [w.workload, w.evicted.sample, w.stranded.sample, w.disruptionBudgets]);
    assert.deepEqual(mine.sort(), [
      ['DaemonSet/osd', [{ pod: 'osd-1', node: n1, afterSeconds: 0 }], [], []],
      ['Pod/db-0', [], [{ pod: 'db-0', node: n2 }], []],
      ['Pod/web-1', [{ pod: 'web-1', node: n1, afterSeconds: 0 }], [], ['web-pdb']],
      ['Pod/web-2', [{ pod: 'web-2', node: n1, afterSeconds: 120 }], [], ['web-pdb']],
    ]);
    assert.deepEqual(
      impact.disruptionBudgets.filter((b) => b.namespace === ns),
      [{ namespace: ns, name: 'web-pdb', evicted: 2, stranded: 0 }],
    );
  });
});
