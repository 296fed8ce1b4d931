import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { APPLIED_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { planLabels } from './label-plan.ts';
import { guardedPatch, planReads, pointerToken, type JsonPatchOp } from './node-guard.ts';
import { nodePatch, type NodeLabelState } from './node-reconcile.ts';
import { taintId, type Taint, type TaintLift } from './taints.ts';
import { applyJsonPatch, PatchRefused, storedNode, type StoredNode } from '../../../test/kit/plan/apply-json-patch.ts';

type Stored = StoredNode;

/** The node as the API server serializes it, with the uid every generated node has. */
const stored = (state: NodeLabelState): Stored => storedNode({ ...state, uid: 'u1' });

function stateOf(doc: Stored): NodeLabelState {
  return {
    resourceVersion: '',
    ...(doc.metadata.uid ? { uid: doc.metadata.uid } : {}),
    labels: doc.metadata.labels ?? {},
    annotations: doc.metadata.annotations ?? {},
    taints: doc.spec.taints ?? [],
  };
}

const policy = { reconcileOsArchAliases: true, protectedKeys: [] };
/** A join taint under Cluster Autoscaler's startup-taint prefix, as a policy's `join_taint_key` names it. */
const STARTUP_TAINT_KEY = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
const labelKeys = ['a', 'b', 'example.com/c', 'kubernetes.io/os', 'beta.kubernetes.io/os', 'other.example/x'];
const annotationKeys = ['example.com/note', 'theirs.example/n'];
const taintPool: Taint[] = [
  { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' },
  { key: 'example.com/storage', value: 'only', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-11-26T10:00:00Z' },
  { key: STARTUP_TAINT_KEY, effect: 'NoSchedule' },
];
const value = fc.constantFrom('', '1', '2');
const labelsArb = fc.dictionary(fc.constantFrom(...labelKeys), value, { maxKeys: labelKeys.length });
const annotationsArb = fc.record(
  {
    [OWNED_LABELS_ANNOTATION]: fc.subarray(labelKeys).map((k) => k.join(',')),
    [OWNED_ANNOTATIONS_ANNOTATION]: fc.constantFrom('', 'example.com/note'),
    [OWNED_TAINTS_ANNOTATION]: fc.constantFrom('', 'example.com/storage:NoSchedule'),
    [APPLIED_ANNOTATION]: fc.constantFrom('revision=1,run=1'),
    'example.com/note': value,
    'theirs.example/n': value,
  },
  { requiredKeys: [] },
);
const stateArb = fc
  .record({ labels: labelsArb, annotations: annotationsArb, taints: fc.subarray(taintPool) })
  .map((s): NodeLabelState => ({ resourceVersion: '1', ...s }));
const inputArb = fc.record({
  desired: fc.dictionary(fc.constantFrom('a', 'b', 'example.com/c'), value),
  desiredAnnotations: fc.option(fc.dictionary(fc.constantFrom('example.com/note'), value), { nil: undefined }),
  desiredTaints: fc.option(fc.subarray([taintPool[1] as Taint]), { nil: undefined }),
  // None, the default join taint, or a policy's own key.
  liftTaint: fc.constantFrom<TaintLift>(false, true, STARTUP_TAINT_KEY),
});

/** One write by someone else: a label, an annotation or the taint list, set or removed. */
const changeArb = fc.oneof(
  fc.record({ field: fc.constant('labels' as const), key: fc.constantFrom(...labelKeys), to: fc.option(value, { nil: null }) }),
  fc.record({
    field: fc.constant('annotations' as const),
    key: fc.constantFrom(...annotationKeys, OWNED_LABELS_ANNOTATION, APPLIED_ANNOTATION),
    to: fc.option(value, { nil: null }),
  }),
  fc.record({ field: fc.constant('taints' as const), to: fc.subarray(taintPool) }),
);
type Change = typeof changeArb extends fc.Arbitrary<infer T> ? T : never;

function changed(state: NodeLabelState, c: Change): NodeLabelState {
  if (c.field === 'taints') return { ...state, taints: c.to };
  const map = { ...state[c.field] };
  if (c.to === null) delete map[c.key];
  else map[c.key] = c.to;
  return { ...state, [c.field]: map };
}

/**
 * Whether `c` changed anything the plan of `before` read. An empty map is
 * read whole (the server leaves it out, so the guard tests it absent), and
 * a map that becomes empty takes away every key a test reads under it.
 */
function touchesReads(before: NodeLabelState, after: NodeLabelState, reads: ReturnType<typeof planReads>, ops: readonly JsonPatchOp[]): boolean {
  const differs = (field: 'labels' | 'annotations', keys: string[]) => {
    const whole = keys.length > 0 && (Object.keys(before[field]).length === 0 || Object.keys(after[field]).length === 0);
    return (whole ? [...Object.keys(before[field]), ...Object.keys(after[field])] : keys).some((k) => before[field][k] !== after[field][k]);
  };
  return differs('labels', reads.labels) || differs('annotations', reads.annotations) || taintsTouched(before, after, reads, ops);
}

/**
 * Whether a taint the plan depends on moved or changed: with the whole list
 * tested, any change; with taints tested by index, a change at one of
 * those indexes (one before them moves them).
 */
function taintsTouched(before: NodeLabelState, after: NodeLabelState, reads: ReturnType<typeof planReads>, ops: readonly JsonPatchOp[]): boolean {
  const was = before.taints ?? [];
  const now = after.taints ?? [];
  if (ops.some((o) => o.path === '/spec/taints')) return JSON.stringify(was) !== JSON.stringify(now);
  const depends = new Set(reads.taintIds ?? []);
  const moved = was.some(
    (t, i) => (depends.has(taintId(t)) || ops.some((o) => o.op === 'remove' && o.path === `/spec/taints/${i}`)) && JSON.stringify(now[i]) !== JSON.stringify(t),
  );
  // A taint relabel appends that someone else added meanwhile: the server refuses the duplicate.
  const nowIds = new Set(now.map(taintId));
  const duplicate = ops.some((o) => o.op === 'add' && o.path === '/spec/taints/-' && nowIds.has(taintId(o.value as Taint)));
  const emptied = now.length === 0 && ops.some((o) => o.path === '/spec/taints/-');
  return moved || duplicate || emptied;
}

/** The ops relabel sends for a node read as `state`, or null when it sends none. */
function opsFor(
  state: NodeLabelState,
  input: { desired: Record<string, string>; desiredAnnotations?: Record<string, string>; desiredTaints?: Taint[]; liftTaint: TaintLift },
): JsonPatchOp[] | null {
  const plan = planLabels({ ...state, ...input, policy });
  const patch = nodePatch(plan, state, input.liftTaint, { revision: 2, run: 5 });
  return patch === null ? null : guardedPatch(patch, { ...state, uid: 'u1' }, planReads({ ...input, policy }, state));
}

describe('guardedPatch', () => {
  it('lands exactly when nothing the plan read changed, and then leaves the node as a plan of the node as stored would', () => {
    fc.assert(
      fc.property(stateArb, inputArb, fc.option(changeArb, { nil: undefined }), (read, input, change) => {
        const ops = opsFor(read, input);
        if (ops === null) return;
        const now = change ? changed(read, change) : read;
        const reads = planReads({ ...input, policy }, read);
        let after: Stored;
        try {
          after = applyJsonPatch(stored(now), ops);
        } catch (err) {
          // An append to a taint list someone else emptied fails as a test does: the server answers both as a stale write.
          assert.ok(
            err instanceof PatchRefused && (err.kind === 'test' || err.message === 'missing path: /spec/taints/-'),
            `only a test may fail: ${String(err)}`,
          );
          assert.equal(touchesReads(read, now, reads, ops), true, 'refused although nothing the plan read changed');
          return;
        }
        assert.equal(touchesReads(read, now, reads, ops), false, 'landed although something the plan read changed');
        const fresh = opsFor(now, input);
        assert.ok(fresh !== null);
        assert.deepEqual(after, applyJsonPatch(stored(now), fresh), 'the same node as a plan of the node as stored');
        const again = planLabels({ ...stateOf(after), ...input, policy });
        assert.equal(again.empty, true, 'nothing left to change');
      }),
      { numRuns: 2000 },
    );
  });

  it('tests every key it reads, then changes only what the plan changes', () => {
    const state: NodeLabelState = {
      resourceVersion: '9',
      uid: 'u1',
      labels: { 'example.com/a': 'x', keep: 'k' },
      annotations: { [OWNED_LABELS_ANNOTATION]: 'example.com/a' },
      taints: [],
    };
    const plan = planLabels({ ...state, desired: { z: '1' }, policy: { reconcileOsArchAliases: false, protectedKeys: [] } });
    const patch = nodePatch(plan, state, false);
    assert.ok(patch);
    const ops = guardedPatch(patch, state, planReads({ desired: { z: '1' }, policy: { reconcileOsArchAliases: false, protectedKeys: [] } }, state));
    assert.deepEqual(ops, [
      { op: 'test', path: '/metadata/uid', value: 'u1' },
      { op: 'test', path: '/metadata/labels/example.com~1a', value: 'x' },
      { op: 'test', path: '/metadata/labels/z', value: null },
      { op: 'remove', path: '/metadata/labels/example.com~1a' },
      { op: 'add', path: '/metadata/labels/z', value: '1' },
      { op: 'test', path: '/metadata/annotations/relabel.airshipit.org~1applied', value: null },
      { op: 'test', path: '/metadata/annotations/relabel.airshipit.org~1owned-annotations', value: null },
      { op: 'test', path: '/metadata/annotations/relabel.airshipit.org~1owned-labels', value: 'example.com/a' },
      { op: 'test', path: '/metadata/annotations/relabel.airshipit.org~1owned-taints', value: null },
      { op: 'add', path: '/metadata/annotations/relabel.airshipit.org~1owned-labels', value: 'z' },
    ]);
    assert.equal(pointerToken('a/b~c'), 'a~1b~0c');
  });

  it('lifts the join taint the policy names, tested where it was read, and leaves the default one to whoever set it', () => {
    const startup = { key: STARTUP_TAINT_KEY, effect: 'NoSchedule' };
    const theirs = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const state: NodeLabelState = { resourceVersion: '1', labels: {}, annotations: {}, taints: [theirs, startup] };
    const plan = planLabels({ ...state, desired: {}, policy });
    const patch = nodePatch(plan, state, STARTUP_TAINT_KEY);
    assert.ok(patch);
    const reads = planReads({ desired: {}, policy, liftTaint: STARTUP_TAINT_KEY }, state);
    assert.equal(reads.lift, STARTUP_TAINT_KEY);
    assert.deepEqual(
      guardedPatch(patch, state, reads).filter((op) => op.path.startsWith('/spec/taints')),
      [
        { op: 'test', path: '/spec/taints/1', value: startup },
        { op: 'remove', path: '/spec/taints/1' },
      ],
    );
    const absent: NodeLabelState = { ...state, taints: [theirs] };
    assert.equal(nodePatch(planLabels({ ...absent, desired: {}, policy }), absent, STARTUP_TAINT_KEY), null, 'no taint of that key: nothing to lift');
  });
});
