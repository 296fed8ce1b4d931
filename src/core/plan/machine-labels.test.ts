import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copiedToNode, isMachineOnlyLabel, machineOnlySelectorWarnings, nodeSetSelectorWarnings } from './machine-labels.ts';

describe("Cluster API's labels on Nodes", () => {
  it('copies node-role.kubernetes.io, node-restriction.kubernetes.io and node.cluster.x-k8s.io (those two with subdomains) to the Node', () => {
    for (const key of [
      'node-role.kubernetes.io/worker',
      'node-restriction.kubernetes.io/pool',
      'team.node-restriction.kubernetes.io/x',
      'node.cluster.x-k8s.io/deployment',
      'fleet.node.cluster.x-k8s.io/tier',
    ])
      assert.equal(copiedToNode(key), true, key);
    for (const key of ['a.node-role.kubernetes.io/x', 'cluster.x-k8s.io/deployment-name', 'example.com/node.cluster.x-k8s.io', 'plain'])
      assert.equal(copiedToNode(key), false, key);
  });

  it('keeps every other cluster.x-k8s.io label on Machines only, but the interruptible one it sets on the Node', () => {
    for (const key of [
      'cluster.x-k8s.io/deployment-name',
      'cluster.x-k8s.io/set-name',
      'cluster.x-k8s.io/cluster-name',
      'cluster.x-k8s.io/control-plane',
      'cluster.x-k8s.io/pool-name',
      'topology.cluster.x-k8s.io/deployment-name',
    ])
      assert.equal(isMachineOnlyLabel(key), true, key);
    for (const key of ['cluster.x-k8s.io/interruptible', 'node.cluster.x-k8s.io/deployment', 'karpenter.sh/nodepool', 'x-k8s.io/a', 'cluster.x-k8s.io'])
      assert.equal(isMachineOnlyLabel(key), false, key);
  });

  it('warns at each selector field reading one, naming the reason, and not at a node.cluster.x-k8s.io key', () => {
    const warnings = machineOnlySelectorWarnings({
      matchLabels: { 'cluster.x-k8s.io/cluster-name': 'workload', 'node.cluster.x-k8s.io/deployment': 'md-0' },
      matchExpressions: [
        { key: 'karpenter.sh/nodepool', operator: 'Exists' },
        { key: 'cluster.x-k8s.io/deployment-name', operator: 'In', values: ['md-0'] },
      ],
    });
    assert.deepEqual(
      warnings.map((w) => [w.path, w.key]),
      [
        [['matchLabels', 'cluster.x-k8s.io/cluster-name'], 'cluster.x-k8s.io/cluster-name'],
        [['matchExpressions', 1, 'key'], 'cluster.x-k8s.io/deployment-name'],
      ],
    );
    assert.match(warnings[1]?.message ?? '', /"cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/);
    assert.match(warnings[1]?.message ?? '', /--additional-sync-machine-labels/);
    assert.deepEqual(machineOnlySelectorWarnings({ matchLabels: { 'node.cluster.x-k8s.io/deployment': 'md-0' } }), []);
    const text = nodeSetSelectorWarnings({
      md: { selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } } },
      ok: { selector: { matchLabels: { 'node.cluster.x-k8s.io/deployment': 'md-0' } } },
    });
    assert.equal(text.length, 1);
    assert.match(text[0] ?? '', /^node set "md": selector reads label "cluster\.x-k8s\.io\/deployment-name"/);
  });
});
