import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NodeSelectorTerm, SelectorRequirement } from './node-affinity.ts';
import type { Toleration } from './tolerations.ts';
import { OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { planLabels } from './label-plan.ts';
import { plannedNodeChange } from './planned-node.ts';
import {
  daemonSetShouldRun,
  IMPACT_MAX_ENTRIES,
  IMPACT_SAMPLE_SIZE,
  workloadImpact,
  type DaemonSetInfo,
  type NodeChange,
  type PodInfo,
} from './workload-impact.ts';

const term = (...matchExpressions: SelectorRequirement[]): NodeSelectorTerm => ({ matchExpressions });
const affinity = (...nodeSelectorTerms: NodeSelectorTerm[]) => ({ nodeSelectorTerms });
const req = (key: string, operator: string, ...values: string[]): SelectorRequirement => ({ key, operator, values });

describe('daemonSetShouldRun (NodeShouldRunDaemonPod)', () => {
  const ceph: DaemonSetInfo = { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } };
  const n = (labels: Record<string, string>, ...taints: { key: string; effect: string; value?: string }[]) => ({ name: 'n1', labels, taints });
  it('follows the node selector, the template node name and required affinity', () => {
    assert.deepEqual(daemonSetShouldRun(ceph, n({ 'ceph-osd': 'enabled' })), { shouldRun: true, shouldContinueRunning: true });
    assert.deepEqual(daemonSetShouldRun(ceph, n({})), { shouldRun: false, shouldContinueRunning: false });
    assert.equal(daemonSetShouldRun({ ...ceph, nodeName: 'n2' }, n({ 'ceph-osd': 'enabled' })).shouldRun, false);
    assert.equal(daemonSetShouldRun({ namespace: 'x', name: 'y', affinity: affinity(term(req('rack', 'In', 'r1'))) }, n({ rack: 'r1' })).shouldRun, true);
  });
  it('an untolerated NoSchedule taint stops new pods only; NoExecute both; PreferNoSchedule neither; defaults tolerate cordoning', () => {
    const labels = { 'ceph-osd': 'enabled' };
    assert.deepEqual(daemonSetShouldRun(ceph, n(labels, { key: 'maint', effect: 'NoSchedule' })), { shouldRun: false, shouldContinueRunning: true });
    assert.deepEqual(daemonSetShouldRun(ceph, n(labels, { key: 'maint', effect: 'NoExecute' })), { shouldRun: false, shouldContinueRunning: false });
    assert.deepEqual(daemonSetShouldRun(ceph, n(labels, { key: 'maint', effect: 'PreferNoSchedule' })), { shouldRun: true, shouldContinueRunning: true });
    assert.equal(daemonSetShouldRun(ceph, n(labels, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' })).shouldRun, true);
    assert.equal(daemonSetShouldRun(ceph, n(labels, { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' })).shouldRun, false);
    assert.equal(
      daemonSetShouldRun({ ...ceph, hostNetwork: true }, n(labels, { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' })).shouldRun,
      true,
    );
  });
});

describe('workloadImpact', () => {
  const osd: DaemonSetInfo = { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } };
  const change = (
    name: string,
    before: Record<string, string>,
    after: Record<string, string>,
    taintsAfter: NodeChange['after']['taints'] = [],
  ): NodeChange => ({
    name,
    before: { labels: before, taints: [] },
    after: { labels: after, taints: taintsAfter },
  });

  it('names the DaemonSet and the nodes that lose its pods, sampled and counted', () => {
    const nodes = Array.from({ length: 30 }, (_, i) => change(`node-${String(i).padStart(2, '0')}`, { 'ceph-osd': 'enabled' }, {}));
    const impact = workloadImpact({ nodes, daemonSets: [osd, { namespace: 'kube-system', name: 'proxy' }], pods: [] });
    assert.equal(impact.daemonSets.length, 1);
    const [entry] = impact.daemonSets;
    assert.equal(entry?.name, 'osd');
    assert.equal(entry?.loses.count, 30);
    assert.equal(entry?.loses.sample.length, IMPACT_SAMPLE_SIZE);
    assert.equal(entry?.loses.sample[0], 'node-00');
    assert.deepEqual([impact.totals.podsLost, impact.totals.podsGained, impact.totals.nodesChanged], [30, 0, 30]);
  });

  it('lists pods a NoExecute taint evicts, with their seconds, their workload and budgets; strands pods whose selector stops matching', () => {
    const pods: PodInfo[] = [
      { namespace: 'web', name: 'web-1', nodeName: 'n1', labels: { app: 'web' }, controller: { kind: 'ReplicaSet', name: 'web-5d' } },
      {
        namespace: 'web',
        name: 'web-2',
        nodeName: 'n1',
        labels: { app: 'web' },
        controller: { kind: 'ReplicaSet', name: 'web-5d' },
        tolerations: [{ key: 'maint', operator: 'Exists', tolerationSeconds: 120 }],
      },
      { namespace: 'db', name: 'db-0', nodeName: 'n2', labels: { app: 'db' }, nodeSelector: { ssd: 'yes' }, controller: { kind: 'StatefulSet', name: 'db' } },
      { namespace: 'db', name: 'far', nodeName: 'n9', labels: { app: 'db' }, nodeSelector: { ssd: 'yes' } },
    ];
    const impact = workloadImpact({
      nodes: [change('n1', {}, {}, [{ key: 'maint', effect: 'NoExecute' }]), change('n2', { ssd: 'yes' }, {})],
      daemonSets: [],
      pods,
      disruptionBudgets: [
        { namespace: 'web', name: 'web-pdb', selector: { matchLabels: { app: 'web' } } },
        { namespace: 'db', name: 'db-pdb', selector: { matchExpressions: [req('app', 'In', 'db')] } },
        { namespace: 'web', name: 'none', selector: null },
      ],
    });
    const web = impact.workloads.find((w) => w.workload === 'ReplicaSet/web-5d');
    assert.deepEqual(web?.evicted.sample, [
      { pod: 'web-1', node: 'n1', afterSeconds: 0 },
      { pod: 'web-2', node: 'n1', afterSeconds: 120 },
    ]);
    assert.deepEqual(web?.disruptionBudgets, ['web-pdb']);
    const db = impact.workloads.find((w) => w.workload === 'StatefulSet/db');
    assert.deepEqual(db?.stranded.sample, [{ pod: 'db-0', node: 'n2' }]);
    assert.deepEqual(impact.disruptionBudgets, [
      { namespace: 'web', name: 'web-pdb', evicted: 2, stranded: 0 },
      { namespace: 'db', name: 'db-pdb', evicted: 0, stranded: 1 },
    ]);
    assert.deepEqual([impact.totals.podsEvicted, impact.totals.podsStranded, impact.totals.workloads, impact.totals.disruptionBudgets], [2, 1, 2, 2]);
  });

  it('lists at most IMPACT_MAX_ENTRIES DaemonSets, the most affected first, and counts the rest', () => {
    const sets = Array.from({ length: IMPACT_MAX_ENTRIES + 5 }, (_, i) => ({
      namespace: 'ns',
      name: `ds-${String(i).padStart(2, '0')}`,
      nodeSelector: { [`k${i}`]: 'on' },
    }));
    const on = Object.fromEntries(sets.map((_, i) => [`k${i}`, 'on']));
    const nodes = [change('a', on, {}), change('b', { k7: 'on' }, {})];
    const impact = workloadImpact({ nodes, daemonSets: sets, pods: [] });
    assert.equal(impact.daemonSets.length, IMPACT_MAX_ENTRIES);
    assert.equal(impact.moreDaemonSets, 5);
    assert.equal(impact.daemonSets[0]?.name, 'ds-07');
    assert.equal(impact.totals.daemonSets, IMPACT_MAX_ENTRIES + 5);
    assert.equal(impact.totals.podsLost, IMPACT_MAX_ENTRIES + 6);
  });

  it('a node cordoned for a NoSchedule taint keeps a running daemon pod, gains none', () => {
    const tainted = change('n1', { 'ceph-osd': 'enabled' }, { 'ceph-osd': 'enabled' }, [{ key: 'maint', effect: 'NoSchedule' }]);
    const daemonPod: PodInfo = { namespace: 'ceph', name: 'osd-x', nodeName: 'n1', controller: { kind: 'DaemonSet', name: 'osd' } };
    assert.equal(workloadImpact({ nodes: [tainted], daemonSets: [osd], pods: [daemonPod] }).totals.podsLost, 0);
    const labelled = {
      name: 'n2',
      before: { labels: {}, taints: [{ key: 'maint', effect: 'NoSchedule' }] },
      after: { labels: { 'ceph-osd': 'enabled' }, taints: [{ key: 'maint', effect: 'NoSchedule' }] },
    };
    assert.equal(workloadImpact({ nodes: [labelled], daemonSets: [osd], pods: [] }).totals.podsGained, 0);
  });
});

const labelsArb = fc.dictionary(fc.constantFrom('ceph-osd', 'rack', 'gpu'), fc.constantFrom('enabled', 'r1', 'r2', ''));
const taintsArb = fc.uniqueArray(
  fc.record({
    key: fc.constantFrom('maint', 'gpu', 'node.kubernetes.io/unschedulable'),
    effect: fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
  }),
  { maxLength: 2, selector: (t) => `${t.key}:${t.effect}` },
);
const viewArb = (taints: fc.Arbitrary<NodeChange['after']['taints']>) => fc.record({ labels: labelsArb, taints });
const changesArb = (taints = taintsArb) =>
  fc.uniqueArray(fc.record({ name: fc.constantFrom('n1', 'n2', 'n3', 'n4'), before: viewArb(taints), after: viewArb(taints) }), {
    maxLength: 4,
    selector: (n) => n.name,
  });
const selectors = (...list: Record<string, string>[]) => fc.constantFrom(...list);
const tolerationLists = (...list: Toleration[][]) => fc.constantFrom(...list);
const daemonSetsArb: fc.Arbitrary<DaemonSetInfo[]> = fc.uniqueArray(
  fc.record({
    namespace: fc.constant('ns'),
    name: fc.constantFrom('osd', 'agent', 'gpu'),
    nodeSelector: selectors({}, { 'ceph-osd': 'enabled' }, { rack: 'r1' }),
    tolerations: tolerationLists([], [{ key: 'maint', operator: 'Exists' }], [{ operator: 'Exists' }]),
  }),
  { maxLength: 3, selector: (d) => d.name },
);
const podsArb: fc.Arbitrary<PodInfo[]> = fc.array(
  fc.record({
    namespace: fc.constant('ns'),
    name: fc.constantFrom('p1', 'p2', 'p3'),
    nodeName: fc.constantFrom('n1', 'n2', 'n3'),
    labels: selectors({}, { app: 'web' }),
    nodeSelector: selectors({}, { rack: 'r1' }, { gpu: '' }),
    tolerations: tolerationLists([], [{ key: 'maint', operator: 'Exists', tolerationSeconds: 30 }]),
    controller: fc.constantFrom({ kind: 'ReplicaSet', name: 'web' }, { kind: 'DaemonSet', name: 'osd' }, { kind: 'StatefulSet', name: 'db' }),
  }),
  { maxLength: 6 },
);
const budgets = [
  { namespace: 'ns', name: 'all', selector: {} },
  { namespace: 'ns', name: 'web', selector: { matchLabels: { app: 'web' } } },
];

describe('workload impact properties', () => {
  it('a daemon pod the controller would create is one it keeps', () => {
    fc.assert(
      fc.property(daemonSetsArb, viewArb(taintsArb), (sets, view) => {
        for (const ds of sets) {
          const verdict = daemonSetShouldRun(ds, { name: 'n1', ...view });
          if (verdict.shouldRun) assert.equal(verdict.shouldContinueRunning, true);
        }
      }),
    );
  });

  it('nodes that do not change have no impact', () => {
    fc.assert(
      fc.property(changesArb(), daemonSetsArb, podsArb, (changes, daemonSets, pods) => {
        const same = changes.map((c) => ({ ...c, after: { labels: { ...c.before.labels }, taints: [...c.before.taints].reverse() } }));
        const impact = workloadImpact({ nodes: same, daemonSets, pods, disruptionBudgets: budgets });
        assert.deepEqual(impact.totals, {
          nodesChanged: 0,
          daemonSets: 0,
          podsGained: 0,
          podsLost: 0,
          podsEvicted: 0,
          podsStranded: 0,
          workloads: 0,
          disruptionBudgets: 0,
        });
      }),
    );
  });

  it('without taints, undoing a change swaps what each DaemonSet gains and loses', () => {
    fc.assert(
      fc.property(changesArb(fc.constant([])), daemonSetsArb, (changes, daemonSets) => {
        const forth = workloadImpact({ nodes: changes, daemonSets, pods: [] });
        const back = workloadImpact({ nodes: changes.map((c) => ({ name: c.name, before: c.after, after: c.before })), daemonSets, pods: [] });
        const counts = (i: typeof forth, swap: boolean) =>
          Object.fromEntries(i.daemonSets.map((d) => [d.name, swap ? [d.loses.count, d.gains.count] : [d.gains.count, d.loses.count]]));
        assert.deepEqual(counts(forth, false), counts(back, true));
      }),
    );
  });

  it('each pod counts once; samples are capped; totals are the sums of the entries', () => {
    fc.assert(
      fc.property(changesArb(), daemonSetsArb, podsArb, (changes, daemonSets, pods) => {
        const impact = workloadImpact({ nodes: changes, daemonSets, pods, disruptionBudgets: budgets });
        const podsOnChanged = pods.filter((p) => changes.some((c) => c.name === p.nodeName)).length;
        assert.ok(impact.totals.podsEvicted + impact.totals.podsStranded <= podsOnChanged);
        const entries = [...impact.daemonSets.flatMap((d) => [d.gains, d.loses]), ...impact.workloads.flatMap((w) => [w.evicted, w.stranded])];
        for (const e of entries) assert.ok(e.sample.length <= IMPACT_SAMPLE_SIZE && e.sample.length <= e.count);
        assert.equal(
          impact.totals.podsEvicted,
          impact.workloads.reduce((n, w) => n + w.evicted.count, 0),
        );
        assert.equal(
          impact.totals.podsLost,
          impact.daemonSets.reduce((n, d) => n + d.loses.count, 0),
        );
        const all = impact.disruptionBudgets.find((b) => b.name === 'all');
        assert.equal((all?.evicted ?? 0) + (all?.stranded ?? 0), impact.totals.podsEvicted + impact.totals.podsStranded);
      }),
    );
  });

  it('without taints or pods, a node is gained exactly where the selector starts to match, lost where it stops', () => {
    fc.assert(
      fc.property(changesArb(fc.constant([])), daemonSetsArb, (changes, daemonSets) => {
        const impact = workloadImpact({ nodes: changes, daemonSets, pods: [] });
        for (const ds of daemonSets) {
          const entry = impact.daemonSets.find((d) => d.name === ds.name);
          const fits = (labels: Record<string, string>) => Object.entries(ds.nodeSelector ?? {}).every(([k, v]) => labels[k] === v);
          assert.deepEqual(
            entry?.gains.sample ?? [],
            changes.filter((c) => !fits(c.before.labels) && fits(c.after.labels)).map((c) => c.name),
          );
          assert.deepEqual(
            entry?.loses.sample ?? [],
            changes.filter((c) => fits(c.before.labels) && !fits(c.after.labels)).map((c) => c.name),
          );
        }
      }),
    );
  });
});

describe('plannedNodeChange', () => {
  const policy = { reconcileOsArchAliases: false, protectedKeys: [] };
  const state = {
    resourceVersion: '1',
    labels: { 'ceph-osd': 'enabled', keep: 'x' },
    annotations: { [OWNED_LABELS_ANNOTATION]: 'ceph-osd' },
    taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }],
  };
  it('is the labels the plan leaves and the taints the patch writes', () => {
    const plan = planLabels({ ...state, desired: {}, desiredTaints: [{ key: 'maint', effect: 'NoExecute' }], policy });
    const change = plannedNodeChange('n1', state, plan, true);
    assert.deepEqual(change?.after.labels, { keep: 'x' });
    assert.deepEqual(
      change?.after.taints.map((t) => `${t.key}:${t.effect}`),
      ['maint:NoExecute'],
    );
    assert.deepEqual(change?.before, { labels: state.labels, taints: state.taints });
  });
  it('is undefined when the node keeps its labels and taints', () => {
    const plan = planLabels({ ...state, desired: { 'ceph-osd': 'enabled' }, policy });
    assert.equal(plannedNodeChange('n1', state, plan, false), undefined);
  });
});
