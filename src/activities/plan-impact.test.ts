import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION } from '../core/plan/constants.ts';
import type { PodInfo, WorkloadImpact } from '../core/plan/workload-impact.ts';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeState } from '../kube/nodes.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import type { NodeResultUpdate, RunStore } from '../store/runs/run-store.ts';
import { assessImpact, PODS_BY_NODE_THRESHOLD } from './plan-impact.ts';
import { planRun } from './plan-run.ts';

const osd = { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } };
const pod = (name: string, nodeName: string): PodInfo => ({ namespace: 'ceph', name, nodeName, controller: { kind: 'DaemonSet', name: 'osd' } });

/** Workload lists over fixed objects, recording which pod lists were asked for. */
function fakeWorkloads(pods: PodInfo[], refuse?: number) {
  const podLists: (string | undefined)[] = [];
  async function* one<T>(items: T[]) {
    if (refuse) throw new ApiException(refuse, 'Forbidden', '', {});
    yield items;
  }
  const api: WorkloadApi = {
    listDaemonSets: () => one([osd]),
    listDisruptionBudgets: () => one([{ namespace: 'ceph', name: 'osd-pdb', selector: {} }]),
    listPods: ({ nodeName }) => {
      podLists.push(nodeName);
      return one(pods.filter((p) => nodeName === undefined || p.nodeName === nodeName));
    },
  };
  return { api, podLists };
}

const change = (name: string) => ({
  name,
  before: { labels: { 'ceph-osd': 'enabled' }, taints: [] },
  after: { labels: {}, taints: [{ key: 'maint', effect: 'NoExecute' }] },
});

describe('assessImpact', () => {
  it('lists the pods of a few changed nodes one node at a time, of many in one list, and weighs them', async () => {
    const few = fakeWorkloads([pod('osd-a', 'n1'), pod('osd-b', 'elsewhere')]);
    const impact = (await assessImpact(few.api, [change('n1')])) as WorkloadImpact;
    assert.deepEqual(few.podLists, ['n1']);
    assert.deepEqual(impact.daemonSets[0]?.loses, { count: 1, sample: ['n1'] });
    assert.deepEqual(impact.workloads[0]?.evicted.sample, [{ pod: 'osd-a', node: 'n1', afterSeconds: 0 }]);
    assert.deepEqual(impact.disruptionBudgets, [{ namespace: 'ceph', name: 'osd-pdb', evicted: 1, stranded: 0 }]);
    const names = Array.from({ length: PODS_BY_NODE_THRESHOLD + 1 }, (_, i) => `m${i}`);
    const many = fakeWorkloads(names.map((n) => pod(`osd-${n}`, n)));
    const wide = (await assessImpact(many.api, names.map(change))) as WorkloadImpact;
    assert.deepEqual(many.podLists, [undefined]);
    assert.equal(wide.totals.podsEvicted, names.length);
  });

  it('reports a refused read as unavailable, and lets other errors through', async () => {
    const impact = await assessImpact(fakeWorkloads([], 403).api, [change('n1')]);
    assert.match('unavailable' in impact ? impact.unavailable : '', /refused .*HTTP 403.*deploy\/rbac\.yaml/);
    await assert.rejects(assessImpact(fakeWorkloads([], 500).api, [change('n1')]), (err: unknown) => err instanceof ApiException && err.code === 500);
  });
});

describe('planRun weighs the workload impact of a dry run', () => {
  const design = { site: 's', nodes: { n1: { name: 'n1', labels: {} } }, racks: {}, policy: DEFAULT_SITE_POLICY } as unknown as Design;
  const cluster: NodeState = {
    name: 'n1',
    resourceVersion: '1',
    labels: { 'ceph-osd': 'enabled' },
    annotations: { [OWNED_LABELS_ANNOTATION]: 'ceph-osd' },
    taints: [],
  };
  const store = {
    nodes: async (_run: number, q: { afterSeq?: number }) =>
      (q.afterSeq ?? -1) < 0 ? [{ seq: 0, node: 'n1', status: 'queued', written: false, detail: null }] : [],
    setNodeResults: async (_run: number, _rows: readonly NodeResultUpdate[]) => undefined,
  } as unknown as RunStore;
  const nodes = { readNode: async () => cluster, listNodes: () => [][Symbol.iterator]() as never, patchNode: async () => cluster };

  it('in a dry run only, from the node as read and as its plan leaves it', async () => {
    const { api } = fakeWorkloads([pod('osd-a', 'n1')]);
    const dry = await planRun({ nodes, store, workloads: api }, { run: 1, revision: 1, design, dryRun: true });
    const impact = dry.impact as WorkloadImpact;
    assert.deepEqual(
      impact.daemonSets.map((d) => [d.name, d.loses.sample]),
      [['osd', ['n1']]],
    );
    assert.equal(impact.totals.nodesChanged, 1);
    const real = await planRun({ nodes, store, workloads: api }, { run: 1, revision: 1, design, dryRun: false, allowMassRemoval: true });
    assert.equal(real.impact, undefined);
  });
});
