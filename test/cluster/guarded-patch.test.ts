/**
 * relabel's guarded node write against the stack's real kube-apiserver: the
 * JSON Patch `guardedPatch` builds lands beside anyone else's writes to what
 * the plan did not read (status, other labels), is refused (422, told apart
 * from other refusals by `isStaleWrite`) when a key it read changed, tests
 * an absent key and an absent map as the unit tests assume, and tests a
 * taint list carrying Kubernetes' `timeAdded` as the server stores it.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { planLabels } from '../../src/core/plan/label-plan.ts';
import { guardedPatch, planReads } from '../../src/core/plan/node-guard.ts';
import { nodePatch } from '../../src/core/plan/node-reconcile.ts';
import { isStaleWrite } from '../../src/kube/errors.ts';
import { createNodeApi, loadKubeConfig, type NodeState } from '../../src/kube/nodes.ts';
import { adminCore, adminKubeconfigPath, createNode, uniqueSuffix } from '../helpers.ts';

const policy = { reconcileOsArchAliases: true, protectedKeys: [] };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** relabel's write of `desired` (labels, and taints when given) to a node read as `state`. */
function writeFor(state: NodeState, desired: Record<string, string>, desiredTaints?: NodeState['taints']) {
  const plan = planLabels({ ...state, desired, policy, ...(desiredTaints ? { desiredTaints } : {}) });
  const patch = nodePatch(plan, state, false);
  assert.ok(patch, 'something to write');
  return guardedPatch(patch, state, planReads({ desired, policy, ...(desiredTaints ? { desiredTaints } : {}) }, state));
}

describe('the guarded node write on the real API server', () => {
  const suffix = uniqueSuffix();
  const admin = adminCore();
  const nodes = createNodeApi(loadKubeConfig(adminKubeconfigPath()), { qps: 0, burst: 1 });
  const made: string[] = [];
  const node = async (name: string, labels: Record<string, string> = {}, taints: NodeState['taints'] = []) => {
    made.push(`ng-${suffix}-${name}`);
    await createNode(admin, `ng-${suffix}-${name}`, labels, taints);
    return nodes.readNode(`ng-${suffix}-${name}`);
  };
  after(async () => {
    for (const name of made) await admin.deleteNode({ name }).catch(() => undefined);
  });

  it('lands beside status and label writes made after the read, and keeps them', async () => {
    const read = await node('beside', { 'ops.example.com/theirs': 'a' });
    const ops = writeFor(read, { 'example.com/role': 'compute' });
    await admin.patchNode({ name: read.name, body: { metadata: { labels: { 'ops.example.com/theirs': 'b' } } } }, merge);
    const heartbeat = { type: 'ExampleHeartbeat', status: 'True', reason: 'beat', lastHeartbeatTime: new Date() };
    await admin.patchNodeStatus({ name: read.name, body: { status: { conditions: [heartbeat] } } }, strategic);
    const after = await nodes.patchNode(read.name, ops);
    assert.notEqual(after.resourceVersion, read.resourceVersion);
    assert.equal(after.labels['example.com/role'], 'compute');
    assert.equal(after.labels['ops.example.com/theirs'], 'b', "the other writer's label is kept");
    assert.equal(after.annotations[OWNED_LABELS_ANNOTATION], 'example.com/role');
    const stored = await admin.readNode({ name: read.name });
    assert.ok(
      stored.status?.conditions?.some((c) => c.type === 'ExampleHeartbeat'),
      'the status write is kept',
    );
  });

  it('is refused, as stale, when a key the plan read changed after the read', async () => {
    const read = await node('stale', { 'example.com/role': 'storage' });
    const ops = writeFor(read, { 'example.com/role': 'compute' });
    await admin.patchNode({ name: read.name, body: { metadata: { labels: { 'example.com/role': 'theirs' } } } }, merge);
    const err = await nodes.patchNode(read.name, ops).catch((e: unknown) => e);
    assert.ok(err instanceof ApiException, String(err));
    assert.equal(err.code, 422);
    assert.equal(isStaleWrite(err), true, JSON.stringify(err.body));
    assert.equal((await nodes.readNode(read.name)).labels['example.com/role'], 'theirs', 'nothing written');
    // Absent when read, present now: the test of the absent key fails too.
    const fresh = await node('absent');
    const adding = writeFor(fresh, { 'example.com/zone': 'a' });
    await admin.patchNode({ name: fresh.name, body: { metadata: { labels: { 'example.com/zone': 'b' } } } }, merge);
    assert.equal(isStaleWrite(await nodes.patchNode(fresh.name, adding).catch((e: unknown) => e)), true);
  });

  it('tests an absent annotations map whole, and adds it whole', async () => {
    const read = await node('bare');
    assert.deepEqual(read.annotations, {});
    const ops = writeFor(read, { 'example.com/role': 'compute' });
    assert.ok(ops.some((op) => op.op === 'test' && op.path === '/metadata/annotations' && op.value === null));
    const after = await nodes.patchNode(read.name, ops);
    assert.equal(after.annotations[OWNED_LABELS_ANNOTATION], 'example.com/role');
    // Someone annotating the node after the read: the whole-map test fails.
    const again = await node('bare2');
    const late = writeFor(again, { 'example.com/role': 'compute' });
    await admin.patchNode({ name: again.name, body: { metadata: { annotations: { 'theirs.example/a': '1' } } } }, merge);
    assert.equal(isStaleWrite(await nodes.patchNode(again.name, late).catch((e: unknown) => e)), true);
  });

  it("tests a taint list with Kubernetes' timeAdded as stored, and keeps that time when it rewrites the list", async () => {
    const timeAdded = '2026-11-26T10:00:00Z';
    const name = `ng-${suffix}-taints`;
    made.push(name);
    await admin.createNode({
      body: {
        metadata: { name, labels: { 'kubernetes.io/hostname': name } },
        spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date(timeAdded) }] },
      },
    });
    const read = await nodes.readNode(name);
    const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded };
    // The API server's NodeTaint admission adds not-ready to every node created.
    assert.deepEqual(read.taints, [unreachable, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const mine = { key: 'example.com/storage', value: 'only', effect: 'NoSchedule' };
    const after = await nodes.patchNode(name, writeFor(read, { 'example.com/role': 'x' }, [mine]));
    assert.deepEqual(after.taints, [...read.taints, mine]);
  });

  it('lifts the uninitialized taint and appends its own by index: lands beside the node controller dropping not-ready; stale when a taint before it goes, or when someone added the taint it appends', async () => {
    const uninitialized = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
    const mine = { key: 'example.com/storage', value: 'only', effect: 'NoSchedule' };
    const lift = (state: NodeState) => {
      const plan = planLabels({ ...state, desired: { 'example.com/role': 'x' }, policy, desiredTaints: [mine] });
      const patch = nodePatch(plan, state, true);
      assert.ok(patch);
      return guardedPatch(patch, state, planReads({ desired: { 'example.com/role': 'x' }, policy, desiredTaints: [mine], liftTaint: true }, state));
    };
    const setTaints = (name: string, taints: object[]) => admin.patchNode({ name, body: { spec: { taints } } }, merge);
    // Read with the API server's not-ready after the uninitialized taint; the node controller drops not-ready, then relabel writes.
    const read = await node('lift', {}, [uninitialized]);
    assert.deepEqual(read.taints, [uninitialized, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const ops = lift(read);
    assert.ok(!ops.some((op) => op.path === '/spec/taints'), 'the list is not tested whole');
    await setTaints(read.name, [uninitialized]);
    const after = await nodes.patchNode(read.name, ops);
    assert.deepEqual(after.taints, [mine], 'lifted, appended, and the other writer’s removal kept');
    // A taint before the lifted one goes: the index moves, the test fails, stale.
    const shifted = await node('shift', {}, [{ key: 'example.com/first', effect: 'NoSchedule' }, uninitialized]);
    const shiftOps = lift(shifted);
    await setTaints(shifted.name, (shifted.taints ?? []).slice(1));
    const stale = await nodes.patchNode(shifted.name, shiftOps).catch((e: unknown) => e);
    assert.equal(isStaleWrite(stale), true, String(stale));
    // Someone adds the very taint relabel appends: the server refuses the duplicate; relabel reads it as stale.
    const dup = await node('dup', {}, [uninitialized]);
    const dupOps = lift(dup);
    await setTaints(dup.name, [...(dup.taints ?? []), mine]);
    const duplicate = await nodes.patchNode(dup.name, dupOps).catch((e: unknown) => e);
    assert.ok(duplicate instanceof ApiException && duplicate.code === 422, String(duplicate));
    assert.equal(isStaleWrite(duplicate), true, JSON.stringify((duplicate as ApiException<unknown>).body));
    assert.deepEqual((await nodes.readNode(dup.name)).taints?.filter((t) => t.key === mine.key).length, 1, 'nothing written');
  });

  it('tells a refused test apart from a refused value', async () => {
    const read = await node('invalid');
    const err = await nodes.patchNode(read.name, [{ op: 'add', path: '/metadata/labels/bad key', value: 'x' }]).catch((e: unknown) => e);
    assert.ok(err instanceof ApiException && err.code === 422, String(err));
    assert.equal(isStaleWrite(err), false);
  });
});
