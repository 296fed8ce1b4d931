import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { JoinQueue, joinReason, type JoinNode } from './join-queue.ts';

const fresh = (name: string, uid = `${name}-uid`): JoinNode => ({ name, uid, annotations: {}, taints: [] });
const labelled = (name: string, uid = `${name}-uid`): JoinNode => ({
  name,
  uid,
  annotations: { [APPLIED_ANNOTATION]: 'revision=1,run=1', [OWNED_LABELS_ANNOTATION]: 'a' },
  taints: [],
});
const all = () => true;

describe('joinReason', () => {
  it('a node with no record of relabel is new; the uninitialized taint makes any node joining; a record settles it', () => {
    assert.equal(joinReason(fresh('a')), 'new');
    assert.equal(joinReason({ annotations: { [APPLIED_ANNOTATION]: 'revision=1,run=2' }, taints: [] }), undefined);
    // A node the synchronous node-labels API wrote has an ownership record and no applied record: not new.
    assert.equal(joinReason({ annotations: { [OWNED_LABELS_ANNOTATION]: 'a,b' }, taints: [] }), undefined);
    assert.equal(joinReason({ annotations: { [APPLIED_ANNOTATION]: 'x' }, taints: [{ key: UNINITIALIZED_TAINT_KEY }] }), 'uninitialized');
    assert.equal(joinReason({ annotations: {}, taints: [{ key: 'node.cluster.x-k8s.io/uninitialized' }] }), 'new');
    // The policy's join taint: a labelled node carrying it joins again; the default key is then anyone's.
    const startup = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
    const labelled = { [APPLIED_ANNOTATION]: 'revision=1,run=2' };
    assert.equal(joinReason({ annotations: labelled, taints: [{ key: startup }] }, startup), 'uninitialized');
    assert.equal(joinReason({ annotations: labelled, taints: [{ key: startup }] }), undefined);
    assert.equal(joinReason({ annotations: labelled, taints: [{ key: UNINITIALIZED_TAINT_KEY }] }, startup), undefined);
  });
});

describe('JoinQueue', () => {
  it('queues managed joining nodes oldest first, once each, and hands each Node object out once', () => {
    const q = new JoinQueue();
    assert.deepEqual(q.observe(fresh('b'), all, 1000), { kind: 'queued' });
    assert.deepEqual(q.observe(fresh('a'), all, 2000), { kind: 'queued' });
    assert.deepEqual(q.observe(fresh('b'), all, 3000), { kind: 'queued' });
    assert.equal(q.size, 2);
    assert.equal(q.oldest(), 1000);
    assert.deepEqual(q.take(1), [{ name: 'b', uid: 'b-uid', since: 1000 }]);
    assert.deepEqual(q.take(5), [{ name: 'a', uid: 'a-uid', since: 2000 }]);
    assert.equal(q.size, 0);
    // Still joining after its run (it failed): not handed out again.
    assert.deepEqual(q.observe(fresh('b'), all, 4000), { kind: 'handled' });
    assert.equal(q.size, 0);
  });

  it("queues a labelled node carrying the policy's join taint, and sees it labelled once the taint is lifted", () => {
    const startup = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
    const q = new JoinQueue();
    const node = { name: 'n', uid: 'u', annotations: { [APPLIED_ANNOTATION]: 'revision=1,run=2' }, taints: [{ key: startup }] };
    assert.deepEqual(q.observe(node, all, 0), { kind: 'settled' }, 'under the default key it is not joining');
    assert.deepEqual(q.observe(node, all, 0, startup), { kind: 'queued' });
    assert.equal(q.take(1).length, 1);
    assert.deepEqual(q.observe({ ...node, taints: [] }, all, 2000, startup), { kind: 'labelled', seconds: 2 });
  });

  it('a node seen labelled that then carries the join taint is handed out again; one never seen labelled is not', () => {
    const q = new JoinQueue();
    const tainted = { ...labelled('n'), taints: [{ key: UNINITIALIZED_TAINT_KEY }] };
    q.observe(fresh('n'), all, 0);
    assert.equal(q.take(1).length, 1);
    assert.deepEqual(q.observe(labelled('n'), all, 1000), { kind: 'labelled', seconds: 1 });
    // Its creator put the taint on after the run labelled it: joining again.
    assert.deepEqual(q.observe(tainted, all, 2000), { kind: 'queued' });
    assert.deepEqual(q.take(1), [{ name: 'n', uid: 'n-uid', since: 2000 }]);
    // Its second run failed (still tainted, never seen labelled): not handed out a third time.
    assert.deepEqual(q.observe(tainted, all, 3000), { kind: 'handled' });
  });

  it('a name registered again (new uid) joins again', () => {
    const q = new JoinQueue();
    q.observe(fresh('n', 'u1'), all, 0);
    q.take(10);
    assert.deepEqual(q.observe(fresh('n', 'u1'), all, 10), { kind: 'handled' });
    assert.deepEqual(q.observe(fresh('n', 'u2'), all, 20), { kind: 'queued' });
    assert.deepEqual(q.take(10), [{ name: 'n', uid: 'u2', since: 20 }]);
  });

  it('measures from first seen joining to seen labelled, for nodes it handed out', () => {
    const q = new JoinQueue();
    q.observe(fresh('n'), all, 1000);
    q.take(10);
    assert.equal(q.inFlight, 1);
    assert.deepEqual(q.observe(labelled('n'), all, 1750), { kind: 'labelled', seconds: 0.75 });
    assert.equal(q.inFlight, 0);
    assert.deepEqual(q.observe(labelled('n'), all, 1800), { kind: 'settled' });
  });

  it('leaves unmanaged nodes alone and counts each once; a waiting node labelled by someone else leaves the queue', () => {
    const q = new JoinQueue();
    const none = () => false;
    assert.deepEqual(q.observe(fresh('x'), none, 0), { kind: 'unmanaged', first: true });
    assert.deepEqual(q.observe(fresh('x'), none, 5), { kind: 'unmanaged', first: false });
    assert.equal(q.size, 0);
    q.observe(fresh('y'), all, 0);
    assert.deepEqual(q.observe(labelled('y'), all, 1), { kind: 'settled' });
    assert.equal(q.size, 0);
  });

  it('forgets deleted nodes, and after a fresh list those no longer present', () => {
    const q = new JoinQueue();
    for (const n of ['a', 'b', 'c']) q.observe(fresh(n), all, 0);
    q.delete('a');
    q.keepOnly(new Set(['c']), q.listBegins());
    assert.deepEqual(
      q.take(10).map((n) => n.name),
      ['c'],
    );
  });

  it('keeps a node the watch saw after a LIST began though the LIST missed it (created after its snapshot)', () => {
    const q = new JoinQueue();
    q.observe(fresh('old'), all, 0);
    q.observe(fresh('gone'), all, 0);
    const mark = q.listBegins();
    // While the LIST's pages are read, the watch sees a node created after the LIST's snapshot.
    q.observe(fresh('new'), all, 1);
    q.observe(fresh('old'), all, 2);
    q.keepOnly(new Set(['old']), mark);
    assert.deepEqual(
      q
        .take(10)
        .map((n) => n.name)
        .sort(),
      ['new', 'old'],
      'the deleted node dropped, the newer one kept',
    );
  });

  it('puts back a batch whose run did not start ahead of later nodes, with their first-seen times', () => {
    const q = new JoinQueue();
    q.observe(fresh('a'), all, 1);
    q.observe(fresh('b'), all, 2);
    const batch = q.take(2);
    q.observe(fresh('c'), all, 3);
    q.putBack(batch);
    assert.deepEqual(
      q.take(10).map((n) => [n.name, n.since]),
      [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
    );
  });

  it('whatever the events, every managed joining node is handed out exactly once per uid while present', () => {
    const event = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      uid: fc.constantFrom('1', '2'),
      joining: fc.boolean(),
      take: fc.nat(3),
      del: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), (events) => {
        const q = new JoinQueue();
        const handedOut = new Map<string, number>();
        let t = 0;
        for (const e of events) {
          t++;
          if (e.del) q.delete(e.name);
          else q.observe(e.joining ? fresh(e.name, `${e.name}${e.uid}`) : labelled(e.name, `${e.name}${e.uid}`), all, t);
          for (const n of q.take(e.take)) handedOut.set(n.uid, (handedOut.get(n.uid) ?? 0) + 1);
        }
        for (const count of handedOut.values()) assert.equal(count, 1);
        for (const n of q.take(100)) assert.equal(handedOut.has(n.uid), false);
      }),
    );
  });
});
