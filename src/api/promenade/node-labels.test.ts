import { describe, it } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from '../../core/plan/constants.ts';
import type { NodeApi, NodeState } from '../../kube/nodes.ts';
import { RelabelError } from '../../facade/relabel-error.ts';
import type { JsonPatchOp } from '../../core/plan/node-guard.ts';
import { applyJsonPatch } from '../../../test/kit/plan/apply-json-patch.ts';
import { applyNodeLabels, DEFAULT_NODE_LABELS_POLICY, MAX_APPLY_ATTEMPTS } from './node-labels.ts';

/**
 * A Node in memory taking JSON Patches as the API server does; the first
 * `conflicts` patches are refused as the server refuses a failed `test`.
 */
function fakeNode(labels: Record<string, string>, annotations: Record<string, string> = {}, options: { conflicts?: number; fail?: unknown } = {}) {
  let state: NodeState = { name: 'n1', resourceVersion: '1', labels, annotations, taints: [] };
  let conflicts = options.conflicts ?? 0;
  const patches: JsonPatchOp[][] = [];
  const some = (map: Record<string, string>) => (Object.keys(map).length > 0 ? map : undefined);
  const api: NodeApi = {
    listNodes: () => {
      throw new Error('not used');
    },
    async readNode(name) {
      if (options.fail) throw options.fail;
      if (name !== 'n1') throw new ApiException(404, 'not found', '{"message":"nodes \\"x\\" not found"}', {});
      return structuredClone(state);
    },
    async patchNode(_name, patch) {
      const ops = patch as JsonPatchOp[];
      patches.push(ops);
      if (conflicts > 0) {
        conflicts--;
        state = { ...state, resourceVersion: String(Number(state.resourceVersion) + 1) };
        throw new ApiException(
          422,
          'invalid',
          '{"message":"the server rejected our request due to an error in our request","details":{"causes":[{"message":"testing value /metadata/labels/a failed: test failed"}]}}',
          {},
        );
      }
      const doc = applyJsonPatch({ metadata: { labels: some(state.labels), annotations: some(state.annotations) } }, ops);
      state = {
        ...state,
        resourceVersion: String(Number(state.resourceVersion) + 1),
        labels: doc.metadata.labels ?? {},
        annotations: doc.metadata.annotations ?? {},
      };
      return structuredClone(state);
    },
  };
  return { api, patches, state: () => state };
}

/** What a JSON Patch changes, its tests left out. */
const changes = (ops: JsonPatchOp[] | undefined) => (ops ?? []).filter((op) => op.op !== 'test');

const failureType = (type: string) => (err: unknown) => err instanceof RelabelError && err.type === type;

describe('applyNodeLabels', () => {
  it('sets desired labels, removes only owned ones, and records ownership in the same patch', async () => {
    const node = fakeNode({ team: 'ops', 'ceph-osd': 'enabled', old: 'x' }, { [OWNED_LABELS_ANNOTATION]: 'ceph-osd,old' });
    const outcome = await applyNodeLabels(node.api, 'n1', { 'ceph-osd': 'enabled', zone: 'a' }, DEFAULT_NODE_LABELS_POLICY);
    assert.deepEqual(outcome, { set: { zone: 'a' }, removed: ['old'], unchanged: ['ceph-osd'], written: true, attempts: 1 });
    assert.equal(node.patches.length, 1);
    assert.deepEqual(node.state().labels, { team: 'ops', 'ceph-osd': 'enabled', zone: 'a' });
    assert.equal(node.state().annotations[OWNED_LABELS_ANNOTATION], 'ceph-osd,zone');
  });

  it('sends no write when nothing changes', async () => {
    const node = fakeNode({ a: '1' }, { [OWNED_LABELS_ANNOTATION]: 'a' });
    const outcome = await applyNodeLabels(node.api, 'n1', { a: '1' }, DEFAULT_NODE_LABELS_POLICY);
    assert.deepEqual(outcome, { set: {}, removed: [], unchanged: ['a'], written: false, attempts: 1 });
    assert.equal(node.patches.length, 0);
  });

  it("drops an update run's applied-run record when it writes, and leaves it when it writes nothing", async () => {
    const applied = { [OWNED_LABELS_ANNOTATION]: 'a', [APPLIED_ANNOTATION]: 'revision=3,run=7' };
    const same = fakeNode({ a: '1' }, applied);
    assert.equal((await applyNodeLabels(same.api, 'n1', { a: '1' }, DEFAULT_NODE_LABELS_POLICY)).written, false);
    assert.deepEqual([same.patches.length, same.state().annotations], [0, applied]);
    const changed = fakeNode({ a: '1' }, applied);
    assert.equal((await applyNodeLabels(changed.api, 'n1', { a: '2' }, DEFAULT_NODE_LABELS_POLICY)).written, true);
    assert.deepEqual(changes(changed.patches[0]), [
      { op: 'add', path: '/metadata/labels/a', value: '2' },
      { op: 'remove', path: '/metadata/annotations/relabel.airshipit.org~1applied' },
    ]);
    assert.deepEqual(changed.state().annotations, { [OWNED_LABELS_ANNOTATION]: 'a' });
    const never = fakeNode({}, {});
    await applyNodeLabels(never.api, 'n1', { a: '1' }, DEFAULT_NODE_LABELS_POLICY);
    assert.deepEqual(
      changes(never.patches[0]),
      [
        { op: 'add', path: '/metadata/labels', value: { a: '1' } },
        { op: 'add', path: '/metadata/annotations', value: { [OWNED_LABELS_ANNOTATION]: 'a' } },
      ],
      'nothing to drop: no removal sent',
    );
  });

  it('re-reads and re-plans after a conflict, and gives up after a bounded number', async () => {
    const twice = fakeNode({}, {}, { conflicts: 2 });
    assert.equal((await applyNodeLabels(twice.api, 'n1', { a: '1' }, DEFAULT_NODE_LABELS_POLICY)).attempts, 3);
    const always = fakeNode({}, {}, { conflicts: 100 });
    await assert.rejects(applyNodeLabels(always.api, 'n1', { a: '1' }, DEFAULT_NODE_LABELS_POLICY), failureType('TooManyConflicts'));
    assert.equal(always.patches.length, MAX_APPLY_ATTEMPTS);
  });

  it('refuses protected keys before any request', async () => {
    const node = fakeNode({});
    await assert.rejects(
      applyNodeLabels(
        node.api,
        'n1',
        { 'feature.node.kubernetes.io/cpu': 'x' },
        { reconcileOsArchAliases: false, protectedKeys: ['feature.node.kubernetes.io/'] },
      ),
      failureType('Invalid'),
    );
    assert.equal(node.patches.length, 0);
  });

  it('refuses a label map past the limits before any request, naming them; an API server 413 is PayloadTooLarge, not retried', async () => {
    const node = fakeNode({});
    const many = Object.fromEntries(Array.from({ length: 15_197 }, (_, i) => [`example.com/label-${i}`, 'v'.repeat(40)]));
    await assert.rejects(applyNodeLabels(node.api, 'n1', many, DEFAULT_NODE_LABELS_POLICY), (err: unknown) => {
      assert.ok(err instanceof RelabelError);
      assert.equal(err.type, 'PayloadTooLarge');
      assert.match(err.message, /15197 labels .*at most 1000 labels and 128 KiB/);
      return true;
    });
    const big = { 'example.com/a': 'x'.repeat(63), ...Object.fromEntries(Array.from({ length: 999 }, (_, i) => [`example.com/${'k'.repeat(200)}-${i}`, 'v'])) };
    await assert.rejects(applyNodeLabels(node.api, 'n1', big, DEFAULT_NODE_LABELS_POLICY), failureType('PayloadTooLarge'));
    assert.equal(node.patches.length, 0, 'nothing sent');
    const tooLarge = new ApiException(413, 'too large', '{"message":"The allowed number of operations in a JSON patch is 10000, received 15200"}', {});
    await assert.rejects(applyNodeLabels(fakeNode({}, {}, { fail: tooLarge }).api, 'n1', {}, DEFAULT_NODE_LABELS_POLICY), failureType('PayloadTooLarge'));
  });

  it('maps Kubernetes errors: 404 NodeNotFound, 403 Forbidden, 401 InternalError, unreachable Unavailable', async () => {
    await assert.rejects(applyNodeLabels(fakeNode({}).api, 'n2', {}, DEFAULT_NODE_LABELS_POLICY), failureType('NodeNotFound'));
    const forbidden = new ApiException(403, 'forbidden', '{"message":"no"}', {});
    await assert.rejects(applyNodeLabels(fakeNode({}, {}, { fail: forbidden }).api, 'n1', {}, DEFAULT_NODE_LABELS_POLICY), failureType('Forbidden'));
    // Kubernetes rejecting relabel's own credentials is the server's fault, not the caller's token.
    const unauthorized = new ApiException(401, 'Unauthorized', undefined, {});
    await assert.rejects(applyNodeLabels(fakeNode({}, {}, { fail: unauthorized }).api, 'n1', {}, DEFAULT_NODE_LABELS_POLICY), failureType('InternalError'));
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    await assert.rejects(applyNodeLabels(fakeNode({}, {}, { fail: refused }).api, 'n1', {}, DEFAULT_NODE_LABELS_POLICY), failureType('Unavailable'));
    const busy = new ApiException(429, 'too many', '', {});
    await assert.rejects(applyNodeLabels(fakeNode({}, {}, { fail: busy }).api, 'n1', {}, DEFAULT_NODE_LABELS_POLICY), failureType('Unavailable'));
  });
});
