import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isAppliedBy, readAppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION as OWNED, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { applyOwnership, applyPlan, planLabels } from './label-plan.ts';
import type { JsonPatchOp } from './node-guard.ts';
import { nodePatch, reconcileNodeLabels, STALE, type NodeLabelState, type Taint } from './node-reconcile.ts';
import { applyJsonPatch, PatchRefused, storedNode } from '../../../test/kit/plan/apply-json-patch.ts';

const policy = { reconcileOsArchAliases: false, protectedKeys: [] };

/**
 * An in-memory node taking relabel's guarded JSON Patches as the API server
 * does. `concurrentWrites` times, someone changes the label `contested`
 * between relabel's read and its write (a key the plan reads when it is
 * desired); `unrelatedWrites` times, someone changes a label nobody
 * desires and the resourceVersion.
 */
function fakeNode(
  labels: Record<string, string>,
  options: { concurrentWrites?: number; unrelatedWrites?: number; dropOnWrite?: string; taints?: Taint[]; annotations?: Record<string, string> } = {},
) {
  let state: NodeLabelState = { resourceVersion: '1', labels, annotations: options.annotations ?? {}, taints: options.taints ?? [] };
  let concurrent = options.concurrentWrites ?? 0;
  let unrelated = options.unrelatedWrites ?? 0;
  const writes: JsonPatchOp[][] = [];
  const bump = (next: Partial<NodeLabelState>) => {
    state = { ...state, ...next, resourceVersion: String(Number(state.resourceVersion) + 1) };
  };
  return {
    writes,
    steps: {
      async read() {
        return state;
      },
      async write(patch: JsonPatchOp[]) {
        writes.push(patch);
        if (concurrent > 0) {
          concurrent--;
          bump({ labels: { ...state.labels, contested: String(concurrent) } });
        }
        if (unrelated > 0) {
          unrelated--;
          bump({ labels: { ...state.labels, 'heartbeat.example/beat': String(unrelated) } });
        }
        let doc;
        try {
          doc = applyJsonPatch(storedNode(state), patch);
        } catch (err) {
          if (err instanceof PatchRefused && err.kind === 'test') return STALE;
          throw err;
        }
        const next = { ...(doc.metadata.labels ?? {}) };
        if (options.dropOnWrite) delete next[options.dropOnWrite];
        bump({ labels: next, annotations: doc.metadata.annotations ?? {}, taints: doc.spec.taints ?? [] });
        return state;
      },
    },
  };
}

describe('reconcileNodeLabels', () => {
  it('writes one patch and verifies it', async () => {
    const node = fakeNode({ keep: 'x' });
    const outcome = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3 }, node.steps);
    assert.equal(outcome.status, 'done');
    assert.equal(node.writes.length, 1);
    assert.deepEqual((await node.steps.read()).labels, { keep: 'x', a: '1' });
    if (outcome.status === 'done') assert.deepEqual([outcome.written, outcome.attempts], [true, 1]);
  });

  it('writes nothing when the node is already right, or in a dry run', async () => {
    const right = fakeNode({ a: '1' });
    await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3 }, right.steps);
    const adopted = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3 }, right.steps);
    assert.deepEqual([right.writes.length, adopted.status === 'done' && adopted.written], [1, false], 'first run adopts, second writes nothing');
    const dry = fakeNode({});
    const planned = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3, dryRun: true }, dry.steps);
    assert.equal(dry.writes.length, 0);
    assert.deepEqual(planned.status === 'done' && planned.plan.set, { a: '1' });
  });

  it('re-reads and re-plans after a write refused for a changed key the plan read, and gives up after maxAttempts', async () => {
    const waits: number[] = [];
    const once = fakeNode({ contested: 'x' }, { concurrentWrites: 1 });
    const outcome = await reconcileNodeLabels(
      { desired: { a: '1', contested: 'mine' }, policy, maxAttempts: 3 },
      { ...once.steps, backoff: async (n) => void waits.push(n) },
    );
    assert.deepEqual([outcome.status, outcome.attempts, once.writes.length, waits], ['done', 2, 2, [1]]);
    assert.equal((await once.steps.read()).labels.contested, 'mine');
    const always = fakeNode({}, { concurrentWrites: 99 });
    const gaveUp = await reconcileNodeLabels({ desired: { a: '1', contested: 'mine' }, policy, maxAttempts: 3 }, always.steps);
    assert.deepEqual([gaveUp.status, always.writes.length], ['conflicts', 3]);
  });

  it('writes once whatever changes meanwhile outside what the plan read, and keeps that change', async () => {
    const node = fakeNode({ a: '0' }, { unrelatedWrites: 1, concurrentWrites: 1 });
    const outcome = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3 }, node.steps);
    assert.deepEqual([outcome.status, outcome.attempts, node.writes.length], ['done', 1, 1]);
    assert.deepEqual((await node.steps.read()).labels, { a: '1', contested: '0', 'heartbeat.example/beat': '0' });
  });

  it('reports a write whose stored result still differs', async () => {
    const node = fakeNode({}, { dropOnWrite: 'a' });
    const outcome = await reconcileNodeLabels({ desired: { a: '1', b: '2' }, policy, maxAttempts: 3 }, node.steps);
    assert.equal(outcome.status, 'unverified');
    if (outcome.status === 'unverified') assert.deepEqual(outcome.remaining.set, { a: '1' });
  });

  it('leaves the node as applyPlan predicts', async () => {
    const start = { other: 'o', gone: 'g' };
    const node = fakeNode(start, { annotations: { [OWNED]: 'gone' } });
    const outcome = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 1 }, node.steps);
    assert.equal(outcome.status, 'done');
    if (outcome.status === 'done') {
      assert.deepEqual(applyPlan(start, outcome.plan), { other: 'o', a: '1' });
      assert.equal(applyOwnership({}, outcome.plan)[OWNED], 'a');
    }
  });

  it('lifts the uninitialized taint in the same write as the labels, keeping other taints', async () => {
    const uninitialized = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const other = { key: 'example.com/maintenance', value: 'yes', effect: 'NoExecute' };
    const node = fakeNode({}, { taints: [uninitialized, other] });
    const outcome = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3, liftTaint: true }, node.steps);
    assert.deepEqual([outcome.status, outcome.status === 'done' && outcome.taintLifted, node.writes.length], ['done', true, 1]);
    assert.deepEqual((await node.steps.read()).taints, [other]);
    assert.deepEqual((await node.steps.read()).labels, { a: '1' });
    assert.deepEqual(
      node.writes[0]?.filter((op) => op.path.startsWith('/spec/taints')),
      [
        { op: 'test', path: '/spec/taints/0', value: uninitialized },
        { op: 'remove', path: '/spec/taints/0' },
      ],
      'the lifted taint is tested where it was read, then removed; the taint of someone else is not tested',
    );
    const again = await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3, liftTaint: true }, node.steps);
    assert.deepEqual([again.status === 'done' && again.written, node.writes.length], [false, 1], 'nothing left to write');
  });

  it("lifts the join taint the policy names (an autoscaler's startup taint), leaving the default one alone", async () => {
    const startup = { key: 'startup-taint.cluster-autoscaler.kubernetes.io/relabel', effect: 'NoSchedule' };
    const theirs = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const node = fakeNode({}, { taints: [theirs, startup] });
    const input = { desired: { a: '1' }, policy: { ...policy, joinTaintKey: startup.key }, maxAttempts: 3, liftTaint: startup.key };
    const outcome = await reconcileNodeLabels(input, node.steps);
    assert.deepEqual([outcome.status, outcome.status === 'done' && outcome.taintLifted, node.writes.length], ['done', true, 1]);
    assert.deepEqual((await node.steps.read()).taints, [theirs]);
    assert.deepEqual((await node.steps.read()).labels, { a: '1' });
    const again = await reconcileNodeLabels(input, node.steps);
    assert.deepEqual([again.status === 'done' && again.taintLifted, node.writes.length], [false, 1], 'nothing left to lift');
  });

  it('applies labels, annotations, taints, the lift and every record in one verified write', async () => {
    const uninitialized = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
    const node = fakeNode({}, { taints: [uninitialized, notReady], annotations: { 'theirs.example/a': 'kept' } });
    const mine = { key: 'example.com/storage', value: 'only', effect: 'NoSchedule' };
    const input = { desired: { a: '1' }, desiredAnnotations: { 'example.com/note': 'x' }, desiredTaints: [mine], policy, maxAttempts: 3, liftTaint: true };
    const outcome = await reconcileNodeLabels(input, node.steps);
    assert.deepEqual([outcome.status, outcome.status === 'done' && outcome.written, node.writes.length], ['done', true, 1]);
    const after = await node.steps.read();
    assert.deepEqual([after.labels, after.taints], [{ a: '1' }, [notReady, mine]]);
    assert.deepEqual(after.annotations, {
      'theirs.example/a': 'kept',
      'example.com/note': 'x',
      'relabel.airshipit.org/owned-annotations': 'example.com/note',
      'relabel.airshipit.org/owned-labels': 'a',
      'relabel.airshipit.org/owned-taints': 'example.com/storage:NoSchedule',
    });
    const again = await reconcileNodeLabels(input, node.steps);
    assert.deepEqual([again.status === 'done' && again.written, node.writes.length], [false, 1], 'nothing left to write');
    await reconcileNodeLabels({ desired: { a: '1' }, policy, maxAttempts: 3 }, node.steps);
    assert.equal(node.writes.length, 1, 'without desired annotations and taints, they are left alone');
  });

  it('lifts the taint alone when the labels are already right; leaves it without liftTaint', async () => {
    const taint = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const kept = fakeNode({}, { taints: [taint] });
    await reconcileNodeLabels({ desired: {}, policy, maxAttempts: 3 }, kept.steps);
    assert.deepEqual([kept.writes.length, (await kept.steps.read()).taints], [0, [taint]]);
    const lifted = fakeNode({}, { taints: [taint] });
    const outcome = await reconcileNodeLabels({ desired: {}, policy, maxAttempts: 3, liftTaint: true }, lifted.steps);
    assert.deepEqual(lifted.writes, [
      [
        { op: 'test', path: '/metadata/annotations', value: null },
        { op: 'test', path: '/spec/taints', value: [taint] },
        { op: 'remove', path: '/spec/taints' },
      ],
    ]);
    assert.equal(outcome.status === 'done' && outcome.taintLifted, true);
  });
});

// Generators: a small key space so desired, current and owned sets overlap.
const keys = ['a', 'b', 'c', 'example.com/d'];
const labelsArb = fc.dictionary(fc.constantFrom(...keys), fc.constantFrom('', '1', '2'), { maxKeys: keys.length });
const ownedArb = fc.subarray(keys).map((owned): Record<string, string> => (owned.length === 0 ? {} : { [OWNED]: owned.join(',') }));
/** Absent, an earlier run's record, or a value that is no record. */
const appliedArb = fc.constantFrom<string | undefined>(undefined, 'revision=1,run=1', 'revision=2,run=8', 'garbage');
const taintsArb = fc.subarray([
  { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' },
  { key: 'example.com/other', effect: 'NoExecute' },
]);
const thisRun = { revision: 3, run: 9 };

describe('the applied-run record', () => {
  it('rides only on a patch that is sent anyway: the patch is the one without it plus the record', () => {
    fc.assert(
      fc.property(
        labelsArb,
        ownedArb,
        appliedArb,
        labelsArb,
        taintsArb,
        fc.boolean(),
        fc.constantFrom(thisRun, null),
        (labels, owned, record, desired, taints, lift, applied) => {
          const annotations = record === undefined ? owned : { ...owned, [APPLIED_ANNOTATION]: record };
          const state = { resourceVersion: '7', labels, annotations, taints };
          const plan = planLabels({ labels, annotations, desired, policy });
          const plain = nodePatch(plan, state, lift);
          const patch = nodePatch(plan, state, lift, applied);
          assert.equal(patch === null, plain === null);
          assert.deepEqual(nodePatch(plan, state, lift, undefined), plain, 'undefined leaves the record alone');
          if (patch === null || plain === null) return;
          const { [APPLIED_ANNOTATION]: sent, ...rest } = patch.metadata.annotations ?? {};
          assert.deepEqual(
            { ...patch, metadata: { ...patch.metadata, annotations: rest } },
            { ...plain, metadata: { ...plain.metadata, annotations: plain.metadata.annotations ?? {} } },
          );
          if (applied) assert.equal(sent, 'revision=3,run=9');
          else assert.equal(sent, record === undefined ? undefined : null, 'null only removes a record the node has');
        },
      ),
    );
  });

  it('a node is written exactly when its plan is not empty; it then names the run, and a later run finds nothing to write', async () => {
    await fc.assert(
      fc.asyncProperty(labelsArb, ownedArb, appliedArb, labelsArb, async (labels, owned, record, desired) => {
        const annotations = record === undefined ? owned : { ...owned, [APPLIED_ANNOTATION]: record };
        const node = fakeNode(labels, { annotations });
        const empty = planLabels({ labels, annotations, desired, policy }).empty;
        const outcome = await reconcileNodeLabels({ desired, policy, maxAttempts: 3, applied: thisRun }, node.steps);
        assert.deepEqual([outcome.status, outcome.status === 'done' && outcome.written, node.writes.length], ['done', !empty, empty ? 0 : 1]);
        const after = (await node.steps.read()).annotations;
        if (empty) assert.deepEqual(after, annotations, 'nothing written, the earlier record kept');
        else assert.equal(isAppliedBy(after, thisRun), true);
        const later = await reconcileNodeLabels({ desired, policy, maxAttempts: 3, applied: { revision: 4, run: 10 } }, node.steps);
        assert.deepEqual([later.status === 'done' && later.written, node.writes.length], [false, empty ? 0 : 1], 'a later run writes nothing');
        assert.deepEqual(readAppliedRun((await node.steps.read()).annotations), readAppliedRun(after));
      }),
    );
  });
});
