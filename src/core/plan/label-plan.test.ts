import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from './constants.ts';
import { applyOwnership, applyPlan, labelPatch, planLabels, replacedValues } from './label-plan.ts';
import type { LabelPlan, PlanPolicy } from './label-plan.ts';
import { readOwnedLabels } from './owned-labels.ts';

const off: PlanPolicy = { reconcileOsArchAliases: false, protectedKeys: [] };
const owning = (keys: string) => ({ [OWNED_LABELS_ANNOTATION]: keys });

type Case = {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  desired: Record<string, string>;
  policy?: PlanPolicy;
  expected: Partial<LabelPlan>;
};

const cases: Case[] = [
  {
    name: 'first run: sets desired labels, touches nothing else, records ownership',
    labels: { 'kubernetes.io/hostname': 'n1', 'team.example.com/owner': 'ops' },
    desired: { 'ceph-osd': 'enabled', 'node-role.kubernetes.io/worker': '' },
    expected: {
      set: { 'ceph-osd': 'enabled', 'node-role.kubernetes.io/worker': '' },
      remove: [],
      adopt: [],
      owned: ['ceph-osd', 'node-role.kubernetes.io/worker'],
      ownershipChanged: true,
      empty: false,
    },
  },
  {
    name: 'adopts a desired label already present with the right value',
    labels: { 'ceph-osd': 'enabled' },
    desired: { 'ceph-osd': 'enabled' },
    expected: { set: {}, adopt: ['ceph-osd'], unchanged: [], owned: ['ceph-osd'], ownershipChanged: true, empty: false },
  },
  {
    name: 'removes an owned label no longer desired; keeps an unowned one',
    labels: { a: '1', b: '2', c: '3' },
    annotations: owning('a,b'),
    desired: { a: '1' },
    expected: { set: {}, remove: ['b'], unchanged: ['a'], owned: ['a'], ownershipChanged: true },
  },
  {
    name: 'changes a value; nothing else to do when ownership is already right',
    labels: { a: '1' },
    annotations: owning('a'),
    desired: { a: '2' },
    expected: { set: { a: '2' }, remove: [], owned: ['a'], ownershipChanged: false, empty: false },
  },
  {
    name: 'forgets an owned key that is gone from the node, without removing anything',
    labels: { a: '1' },
    annotations: owning('a,gone'),
    desired: { a: '1' },
    expected: { remove: [], owned: ['a'], ownershipChanged: true },
  },
  {
    name: 'drops the annotation when nothing is owned any more',
    labels: { a: '1' },
    annotations: owning('a'),
    desired: {},
    expected: { remove: ['a'], owned: [], ownershipChanged: true },
  },
  {
    name: 'never writes, removes or owns kubelet keys',
    labels: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'z1' },
    annotations: owning('kubernetes.io/hostname,topology.kubernetes.io/zone'),
    desired: { 'kubernetes.io/hostname': 'other' },
    expected: { set: {}, remove: [], owned: [], ignored: ['kubernetes.io/hostname'], ownershipChanged: true },
  },
  {
    name: 'leaves protected keys and their ownership entry alone',
    labels: { 'feature.node.kubernetes.io/cpu': 'x', p: '1' },
    annotations: owning('feature.node.kubernetes.io/cpu,p'),
    desired: { 'feature.node.kubernetes.io/gpu': 'y' },
    policy: { reconcileOsArchAliases: false, protectedKeys: ['feature.node.kubernetes.io/', 'p'] },
    expected: {
      set: {},
      remove: [],
      ignored: ['feature.node.kubernetes.io/gpu'],
      owned: ['feature.node.kubernetes.io/cpu', 'p'],
      ownershipChanged: false,
      empty: true,
    },
  },
  {
    name: 'reads a malformed ownership record conservatively',
    labels: { b: '1', 'Bad Key': 'x' },
    annotations: owning(' b , ,Bad Key,b,a/b/c,'),
    desired: {},
    expected: { remove: ['b'], owned: [], discardedOwned: ['Bad Key', 'a/b/c'], ownershipChanged: true },
  },
  {
    name: 'KEP-793: sets the beta os/arch twin to the GA value, never owning it',
    labels: { 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'windows', 'kubernetes.io/arch': 'arm64', 'beta.kubernetes.io/arch': 'arm64' },
    desired: {},
    policy: { reconcileOsArchAliases: true, protectedKeys: [] },
    expected: { set: { 'beta.kubernetes.io/os': 'linux' }, aliases: ['beta.kubernetes.io/os'], owned: [], ownershipChanged: false, empty: false },
  },
  {
    name: 'KEP-793: does nothing when the GA label is missing',
    labels: { 'beta.kubernetes.io/os': 'linux' },
    desired: {},
    policy: { reconcileOsArchAliases: true, protectedKeys: [] },
    expected: { set: {}, aliases: [], empty: true },
  },
  {
    name: 'KEP-793: does nothing when the beta label is missing (KEP, Kubernetes >= 1.18)',
    labels: { 'kubernetes.io/arch': 'amd64' },
    desired: {},
    policy: { reconcileOsArchAliases: true, protectedKeys: [] },
    expected: { set: {}, empty: true },
  },
  {
    name: 'KEP-793: does nothing when reconciliation is off',
    labels: { 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'windows' },
    desired: {},
    expected: { set: {}, empty: true },
  },
];

describe('planLabels', () => {
  for (const c of cases) {
    it(c.name, () => {
      const plan = planLabels({ labels: c.labels, annotations: c.annotations ?? {}, desired: c.desired, policy: c.policy ?? off });
      const picked = Object.fromEntries(Object.keys(c.expected).map((key) => [key, plan[key as keyof LabelPlan]]));
      assert.deepEqual(picked, c.expected);
    });
  }
});

describe('replacedValues', () => {
  it('gives the old value of each key a plan changes, none for new keys, undefined when nothing is replaced', () => {
    assert.deepEqual(replacedValues({ a: '1', b: '2', c: '' }, { a: '0', c: 'x', z: 'y' }), { a: '0', c: 'x' });
    assert.deepEqual(replacedValues({ a: '1' }, { a: '' }), { a: '' });
    assert.equal(replacedValues({ b: '2' }, { a: '0' }), undefined);
    assert.equal(replacedValues({}, { a: '0' }), undefined);
  });
});

describe('labelPatch', () => {
  it('carries label changes, removals as null and the ownership record in one body', () => {
    const plan = planLabels({ labels: { old: 'x', keep: 'y', a: '0' }, annotations: owning('a,old'), desired: { a: '1', b: '2' }, policy: off });
    assert.deepEqual(labelPatch(plan), {
      metadata: {
        labels: { a: '1', b: '2', old: null },
        annotations: { [OWNED_LABELS_ANNOTATION]: 'a,b' },
      },
    });
  });
  it('omits what does not change, and removes the annotation when nothing is owned', () => {
    const valueOnly = planLabels({ labels: { a: '0' }, annotations: owning('a'), desired: { a: '1' }, policy: off });
    assert.deepEqual(labelPatch(valueOnly), { metadata: { labels: { a: '1' } } });
    const release = planLabels({ labels: {}, annotations: owning('gone'), desired: {}, policy: off });
    assert.deepEqual(labelPatch(release), { metadata: { annotations: { [OWNED_LABELS_ANNOTATION]: null } } });
  });
  it('is null for an empty plan: nothing is sent', () => {
    const plan = planLabels({ labels: { a: '1' }, annotations: owning('a'), desired: { a: '1' }, policy: off });
    assert.equal(plan.empty, true);
    assert.equal(labelPatch(plan), null);
  });
});

// Generators: a small key space so desired, current and owned sets overlap.
const plainKeys = ['a', 'b', 'c', 'example.com/d', 'node-role.kubernetes.io/worker', 'ceph-osd'];
const specialKeys = ['kubernetes.io/os', 'beta.kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/arch', 'kubernetes.io/hostname', 'guarded.io/x'];
const value = fc.constantFrom('', '1', '2', 'linux', 'amd64');
const labelsOf = (keys: string[]) => fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length });
const ownedOf = (keys: string[]) => fc.subarray([...keys, 'Not A Key', ' spaced ']).map((owned) => (owned.length === 0 ? {} : owning(owned.join(','))));

function mergePatch(target: Record<string, string>, patch: Record<string, string | null> | undefined): Record<string, string> {
  const next = { ...target };
  for (const [key, v] of Object.entries(patch ?? {})) {
    if (v === null) delete next[key];
    else next[key] = v;
  }
  return next;
}

describe('planLabels properties', () => {
  it('applying a plan yields exactly desired ∪ (current keys neither desired nor owned)', () => {
    fc.assert(
      fc.property(labelsOf(plainKeys), ownedOf(plainKeys), labelsOf(plainKeys), (labels, annotations, desired) => {
        const owned = new Set(readOwnedLabels(annotations).owned);
        const after = applyPlan(labels, planLabels({ labels, annotations, desired, policy: off }));
        const expected: Record<string, string> = { ...desired };
        for (const [key, v] of Object.entries(labels)) if (!(key in desired) && !owned.has(key)) expected[key] = v;
        assert.deepEqual(after, expected);
      }),
    );
  });

  it('never touches a key that is neither desired nor owned, nor a kubelet or protected key', () => {
    const keys = [...plainKeys, ...specialKeys];
    fc.assert(
      fc.property(labelsOf(keys), ownedOf(keys), labelsOf(keys), fc.boolean(), (labels, annotations, desired, reconcile) => {
        const policy = { reconcileOsArchAliases: reconcile, protectedKeys: ['guarded.io/'] };
        const owned = new Set(readOwnedLabels(annotations).owned);
        const plan = planLabels({ labels, annotations, desired, policy });
        const touched = new Set([...Object.keys(plan.set), ...plan.remove]);
        for (const key of touched) {
          const allowed = (key in desired || owned.has(key)) && !specialKeys.includes(key);
          assert.ok(allowed || plan.aliases.includes(key), `touched ${key}`);
        }
        for (const key of plan.aliases) assert.ok(key.startsWith('beta.kubernetes.io/') && !plan.owned.includes(key));
        assert.ok(plan.owned.every((key) => !key.startsWith('kubernetes.io/') && !key.startsWith('beta.kubernetes.io/')));
      }),
    );
  });

  it('planning again after applying yields an empty plan, whatever the options', () => {
    const keys = [...plainKeys, ...specialKeys];
    fc.assert(
      fc.property(labelsOf(keys), ownedOf(keys), labelsOf(keys), fc.boolean(), (labels, annotations, desired, reconcile) => {
        const policy = { reconcileOsArchAliases: reconcile, protectedKeys: ['guarded.io/'] };
        const plan = planLabels({ labels, annotations, desired, policy });
        const again = planLabels({ labels: applyPlan(labels, plan), annotations: applyOwnership(annotations, plan), desired, policy });
        assert.equal(again.empty, true, JSON.stringify(again));
        if (reconcile) {
          const after = applyPlan(labels, plan);
          for (const [ga, beta] of [
            ['kubernetes.io/os', 'beta.kubernetes.io/os'],
            ['kubernetes.io/arch', 'beta.kubernetes.io/arch'],
          ] as const) {
            if (ga in after && beta in after) assert.equal(after[beta], after[ga]);
          }
        }
      }),
    );
  });

  it('the applied-run record never enters a plan or its patch, whichever run it names', () => {
    const keys = [...plainKeys, ...specialKeys];
    const applied = fc.option(fc.constantFrom('revision=1,run=1', 'revision=5,run=17', 'not a record', ''), { nil: undefined });
    fc.assert(
      fc.property(labelsOf(keys), ownedOf(keys), labelsOf(keys), applied, fc.boolean(), (labels, owned, desired, record, reconcile) => {
        const policy = { reconcileOsArchAliases: reconcile, protectedKeys: ['guarded.io/'] };
        const annotations = record === undefined ? owned : { ...owned, [APPLIED_ANNOTATION]: record };
        const plan = planLabels({ labels, annotations, desired, policy });
        assert.deepEqual(plan, planLabels({ labels, annotations: owned, desired, policy }));
        assert.equal(labelPatch(plan)?.metadata.annotations?.[APPLIED_ANNOTATION], undefined);
      }),
    );
  });

  it('the merge patch has exactly the effect of applyPlan and applyOwnership', () => {
    const keys = [...plainKeys, ...specialKeys];
    fc.assert(
      fc.property(labelsOf(keys), ownedOf(keys), labelsOf(keys), (labels, annotations, desired) => {
        const plan = planLabels({ labels, annotations, desired, policy: { reconcileOsArchAliases: true, protectedKeys: [] } });
        const patch = labelPatch(plan);
        assert.equal(patch === null, plan.empty);
        assert.deepEqual(mergePatch(labels, patch?.metadata.labels), applyPlan(labels, plan));
        assert.deepEqual(mergePatch(annotations, patch?.metadata.annotations), applyOwnership(annotations, plan));
      }),
    );
  });
});
