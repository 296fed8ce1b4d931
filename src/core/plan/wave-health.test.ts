import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { healthText, waveHealth } from './wave-health.ts';
import type { DaemonSetInfo, NodeView } from './daemon-sets.ts';
import type { PodInfo } from './workload-impact.ts';

const osd: DaemonSetInfo = { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } };
const pod = (node: string, extra: Partial<PodInfo> = {}): PodInfo => ({
  namespace: 'ceph',
  name: `osd-${node}`,
  nodeName: node,
  controller: { kind: 'DaemonSet', name: 'osd' },
  ...extra,
});

describe('the health gate after a wave', () => {
  it('passes when each node wanting the DaemonSet has a Ready pod and each node that lost it has none', () => {
    const nodes: ({ name: string } & NodeView)[] = [
      { name: 'a', labels: { 'ceph-osd': 'enabled' }, taints: [] },
      { name: 'b', labels: {}, taints: [] },
    ];
    const health = waveHealth([osd], nodes, new Map([['a', [pod('a', { ready: true })]]]));
    assert.deepEqual(health, { checked: 1, unhealthy: 0, sample: [] });
  });

  it('waits for a pod not yet Ready, one being deleted, one missing, and a lost pod still there', () => {
    const nodes: ({ name: string } & NodeView)[] = [
      { name: 'a', labels: { 'ceph-osd': 'enabled' }, taints: [] },
      { name: 'b', labels: { 'ceph-osd': 'enabled' }, taints: [] },
      { name: 'c', labels: { 'ceph-osd': 'enabled' }, taints: [] },
      { name: 'd', labels: {}, taints: [] },
    ];
    const pods = new Map([
      ['a', [pod('a')]],
      ['b', [pod('b', { ready: true, terminating: true })]],
      ['d', [pod('d', { ready: true, terminating: true })]],
    ]);
    const health = waveHealth([osd], nodes, pods);
    assert.equal(health.unhealthy, 4);
    assert.deepEqual(
      health.sample.map((u) => `${u.node}:${u.want}`),
      ['a:ready', 'b:ready', 'c:ready', 'd:gone'],
    );
    assert.match(healthText(health), /^4 DaemonSet pod\(s\) not as they should be: ceph\/osd on a not Ready/);
  });

  it('keeps a pod a NoSchedule taint would not admit (the controller keeps it) and ignores other owners', () => {
    const nodes = [{ name: 'a', labels: { 'ceph-osd': 'enabled' }, taints: [{ key: 'maint', effect: 'NoSchedule' }] }];
    const other = { ...pod('a'), controller: { kind: 'ReplicaSet', name: 'osd' } };
    assert.deepEqual(waveHealth([osd], nodes, new Map([['a', [pod('a', { ready: true }), other]]])), { checked: 0, unhealthy: 0, sample: [] });
  });
});
