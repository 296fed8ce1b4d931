import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { APPLIED_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_TAINTS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { planLabels } from './label-plan.ts';
import { planAnnotations, planTaints } from './metadata-plan.ts';
import { nodePatch, type NodeLabelState, type NodePatch } from './node-reconcile.ts';
import { readOwnedRecord } from './owned-labels.ts';
import { isSystemTaintKey, taintId, type Taint } from './taints.ts';

const policy = { reconcileOsArchAliases: false, protectedKeys: [] };

describe('planAnnotations', () => {
  it('sets what differs, removes only owned annotations no longer desired, records ownership', () => {
    const annotations = {
      'a.example/x': '1',
      'a.example/y': 'old',
      'a.example/gone': 'g',
      'theirs.example/z': 'z',
      [OWNED_ANNOTATIONS_ANNOTATION]: 'a.example/gone,a.example/x',
    };
    const plan = planAnnotations(annotations, { 'a.example/x': '1', 'a.example/y': 'new', 'a.example/n': 'n' });
    assert.deepEqual(plan, {
      set: { 'a.example/n': 'n', 'a.example/y': 'new' },
      remove: ['a.example/gone'],
      adopt: [],
      unchanged: ['a.example/x'],
      owned: ['a.example/n', 'a.example/x', 'a.example/y'],
      ownershipChanged: true,
      empty: false,
    });
  });

  it('owns annotation keys with upper case, as the API server allows them, and removes them when no longer desired', () => {
    const annotations = { 'Example.com/Build': '7', [OWNED_ANNOTATIONS_ANNOTATION]: 'Example.com/Build' };
    const plan = planAnnotations(annotations, {});
    assert.deepEqual([plan.remove, plan.owned], [['Example.com/Build'], []]);
  });

  it("never removes relabel's own records, whatever the ownership record lists", () => {
    const annotations = { [APPLIED_ANNOTATION]: 'revision=1,run=1', [OWNED_ANNOTATIONS_ANNOTATION]: `${APPLIED_ANNOTATION},${OWNED_ANNOTATIONS_ANNOTATION}` };
    assert.deepEqual(planAnnotations(annotations, {}).remove, []);
  });
});

describe('planTaints', () => {
  const theirs: Taint = { key: 'team.example/dedicated', value: 'db', effect: 'NoSchedule' };
  const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
  it("adds, changes and removes its own taints, keeping everyone else's where they were", () => {
    const mine: Taint = { key: 'r.example/old', effect: 'NoSchedule' };
    const changing: Taint = { key: 'r.example/gpu', value: 'a', effect: 'NoSchedule' };
    const taints = [notReady, mine, theirs, changing];
    const annotations = { [OWNED_TAINTS_ANNOTATION]: 'r.example/gpu:NoSchedule,r.example/old:NoSchedule,node.kubernetes.io/not-ready:NoExecute' };
    const added: Taint = { key: 'r.example/new', effect: 'PreferNoSchedule' };
    const plan = planTaints(taints, annotations, [added, { ...changing, value: 'b' }]);
    assert.deepEqual(plan.add, [{ ...changing, value: 'b' }, added]);
    assert.deepEqual(plan.remove, [mine]);
    assert.deepEqual(plan.next, [notReady, theirs, { ...changing, value: 'b' }, added]);
    assert.deepEqual(plan.owned, ['r.example/gpu:NoSchedule', 'r.example/new:PreferNoSchedule']);
    assert.equal(plan.changed, true);
  });

  it("never owns the join taint, the policy's or the default, whatever the record lists", () => {
    const startup: Taint = { key: 'startup-taint.cluster-autoscaler.kubernetes.io/relabel', effect: 'NoSchedule' };
    const uninitialized: Taint = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const annotations = { [OWNED_TAINTS_ANNOTATION]: `${taintId(startup)},${taintId(uninitialized)}` };
    const plan = planTaints([startup, uninitialized], annotations, [], { joinTaintKey: startup.key });
    assert.deepEqual([plan.remove, plan.next, plan.owned, plan.changed], [[], [startup, uninitialized], [], false]);
    assert.deepEqual(planTaints([startup], annotations, []).remove, [startup], 'without the policy naming it, a key like any other');
  });

  it('adopts a desired taint already present, writing only the record', () => {
    const plan = planTaints([theirs], {}, [theirs]);
    assert.deepEqual(
      { add: plan.add, adopt: plan.adopt, changed: plan.changed, empty: plan.empty },
      { add: [], adopt: [taintId(theirs)], changed: false, empty: false },
    );
  });
});

// Generators over small key spaces so desired, current and owned overlap.
const annotationKeys = ['a.example/x', 'a.example/y', 'b.example/z', APPLIED_ANNOTATION];
const desiredAnnotationKeys = annotationKeys.filter((k) => k !== APPLIED_ANNOTATION);
const text = fc.constantFrom('', '1', '2', '[]');
const mapOf = (keys: string[]) => fc.dictionary(fc.constantFrom(...keys), text, { maxKeys: keys.length });
const recordOf = (entries: string[]) => fc.subarray([...entries, 'Not A Key', 'x:Sometimes']).map((e) => e.join(','));
const effects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const ownTaintKeys = ['r.example/a', 'r.example/b'];
const allTaintKeys = [...ownTaintKeys, 'team.example/c', 'node.kubernetes.io/not-ready', UNINITIALIZED_TAINT_KEY];
const taintsOf = (keys: string[]) =>
  fc
    .uniqueArray(
      fc.record({ key: fc.constantFrom(...keys), effect: fc.constantFrom(...effects), value: fc.option(fc.constantFrom('v', 'w'), { nil: undefined }) }),
      {
        selector: taintId,
        maxLength: 6,
      },
    )
    .map((list) => list.map(({ value, ...t }): Taint => (value === undefined ? t : { ...t, value })));
const allIds = allTaintKeys.flatMap((key) => effects.map((effect) => `${key}:${effect}`));

const state = fc
  .record({
    labels: mapOf(['l1', 'l2']),
    annotations: mapOf(annotationKeys),
    ownedAnnotations: recordOf(desiredAnnotationKeys.concat(APPLIED_ANNOTATION)),
    ownedTaints: recordOf(allIds),
    taints: taintsOf(allTaintKeys),
  })
  .map(({ labels, annotations, ownedAnnotations, ownedTaints, taints }): NodeLabelState => ({
    resourceVersion: '1',
    labels,
    annotations: { ...annotations, [OWNED_ANNOTATIONS_ANNOTATION]: ownedAnnotations, [OWNED_TAINTS_ANNOTATION]: ownedTaints },
    taints,
  }));
const desired = fc.record({ labels: mapOf(['l1', 'l2']), annotations: mapOf(desiredAnnotationKeys), taints: taintsOf(ownTaintKeys) });

/** What the API server does with a merge patch of a Node. */
function applyPatch(node: NodeLabelState, patch: NodePatch | null): NodeLabelState {
  if (patch === null) return node;
  const merge = (target: Readonly<Record<string, string>>, changes: Record<string, string | null> | undefined) => {
    const next = { ...target };
    for (const [k, v] of Object.entries(changes ?? {}))
      if (v === null) delete next[k];
      else next[k] = v;
    return next;
  };
  return {
    resourceVersion: String(Number(node.resourceVersion) + 1),
    labels: merge(node.labels, patch.metadata.labels),
    annotations: merge(node.annotations, patch.metadata.annotations),
    taints: patch.spec ? (patch.spec.taints ?? []) : node.taints,
  };
}

const planFor = (node: NodeLabelState, d: { labels: Record<string, string>; annotations: Record<string, string>; taints: Taint[] }) =>
  planLabels({ ...node, desired: d.labels, desiredAnnotations: d.annotations, desiredTaints: d.taints, policy });

describe('annotation and taint planning properties', () => {
  it('one patch yields desired ∪ untouched: unowned annotations and taints (system ones included) are kept as they were', () => {
    fc.assert(
      fc.property(state, desired, (node, d) => {
        const after = applyPatch(node, nodePatch(planFor(node, d), node, false));
        const ownedAnnotations = new Set(readOwnedRecord(node.annotations, OWNED_ANNOTATIONS_ANNOTATION, () => true).owned);
        for (const [key, value] of Object.entries(d.annotations)) assert.equal(after.annotations[key], value);
        for (const [key, value] of Object.entries(node.annotations)) {
          if (key in d.annotations || key.startsWith('relabel.airshipit.org/owned-')) continue;
          if (!ownedAnnotations.has(key) || key === APPLIED_ANNOTATION) assert.equal(after.annotations[key], value, `annotation ${key} touched`);
          else assert.equal(key in after.annotations, false, `owned ${key} kept`);
        }
        const ownedTaints = new Set(readOwnedRecord(node.annotations, OWNED_TAINTS_ANNOTATION, () => true).owned);
        const wanted = new Set(d.taints.map(taintId));
        const expected = [
          ...(node.taints ?? []).filter(
            (t) => !wanted.has(taintId(t)) && (!ownedTaints.has(taintId(t)) || isSystemTaintKey(t.key) || t.key === UNINITIALIZED_TAINT_KEY),
          ),
          ...d.taints,
        ];
        const sort = (list: readonly Taint[]) => [...list].sort((a, b) => (taintId(a) < taintId(b) ? -1 : 1));
        assert.deepEqual(sort(after.taints ?? []), sort(expected));
      }),
    );
  });

  it('is idempotent: planning again after the patch gives an empty plan and no write', () => {
    fc.assert(
      fc.property(state, desired, (node, d) => {
        const after = applyPatch(node, nodePatch(planFor(node, d), node, true));
        const again = planFor(after, d);
        assert.equal(again.empty, true, JSON.stringify(again));
        assert.equal(nodePatch(again, after, true), null);
      }),
    );
  });

  it('the patch carries exactly the plan: its annotation changes, records and taint list, and nothing when the plan is empty', () => {
    fc.assert(
      fc.property(state, desired, (node, d) => {
        const plan = planFor(node, d);
        const patch = nodePatch(plan, node, false);
        assert.equal(patch === null, plan.empty);
        const a = plan.annotations;
        const t = plan.taints;
        assert.ok(a !== null && t !== null);
        for (const [key, value] of Object.entries(a.set)) assert.equal(patch?.metadata.annotations?.[key], value);
        for (const key of a.remove) assert.equal(patch?.metadata.annotations?.[key], null);
        assert.deepEqual(patch?.spec?.taints ?? (t.changed ? [] : undefined), t.changed ? t.next : undefined);
        const records = patch?.metadata.annotations ?? {};
        assert.equal(OWNED_TAINTS_ANNOTATION in records, t.ownershipChanged);
        assert.equal(OWNED_ANNOTATIONS_ANNOTATION in records, a.ownershipChanged);
      }),
    );
  });
});
