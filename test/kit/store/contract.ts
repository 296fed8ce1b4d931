/**
 * The behavior every {@link Store} backend must show, as a node:test
 * suite. Each backend's test file calls {@link storeContract} with a
 * fixture that hands out URLs of fresh, empty stores.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../../src/store/open-store.ts';
import type { SourceFile } from '../../../src/store/revisions/revision-store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';
import { concurrencyContract } from './contract-concurrency.ts';
import { validationContract } from './contract-validation.ts';
import { runsContract } from './contract-runs.ts';
import { driftContract } from './contract-drift.ts';
import { pluginsContract } from './contract-plugins.ts';
import { actionsContract } from './contract-actions.ts';
import { wavesContract } from './contract-waves.ts';
import { designsContract } from './contract-designs.ts';
import { fleetContract } from './contract-fleet.ts';

const f = (source: string, text: string): SourceFile => ({ source, text });

/** Register the whole contract suite for one backend. */
export function storeContract(backend: string, fixture: StoreFixture): void {
  describe(`Store contract: ${backend}`, () => {
    test('an empty store has no revision, no buffer and no site action', async (t) => {
      const store = await freshStore(t, fixture);
      assert.equal(await store.revisions.latest(), null);
      assert.deepEqual(await store.revisions.list(), []);
      assert.deepEqual(await store.revisions.buffer(), []);
      assert.equal(await store.revisions.hasSiteAction(), false);
      await rejectsWith(store.revisions.get(1), 'NotFound', /^revision 1 not found \(no revision has been committed yet\)$/);
      await rejectsWith(store.revisions.documents(1), 'NotFound', /revision 1 not found/);
    });

    test('stage fills the buffer sorted by bucket and source; restaging replaces', async (t) => {
      const store = await freshStore(t, fixture);
      const staged = await store.revisions.stage('site', [f('b.yaml', 'b'), f('a.yaml', 'a')]);
      assert.deepEqual(staged.files, [f('a.yaml', 'a'), f('b.yaml', 'b')]);
      await store.revisions.stage('global', [f('g.yaml', 'g')]);
      await store.revisions.stage('site', [f('c.yaml', 'c')]);
      const buffer = await store.revisions.buffer();
      assert.deepEqual(
        buffer.map((b) => [b.bucket, b.files]),
        [
          ['global', [f('g.yaml', 'g')]],
          ['site', [f('c.yaml', 'c')]],
        ],
      );
      assert.ok(buffer.every((b) => b.stagedAt instanceof Date && !Number.isNaN(b.stagedAt.getTime())));
    });

    test('committing an empty buffer is EmptyBuffer and creates nothing', async (t) => {
      const store = await freshStore(t, fixture);
      await rejectsWith(store.revisions.commit(), 'EmptyBuffer', /^nothing to commit: the staging buffer is empty$/);
      assert.equal(await store.revisions.latest(), null);
    });

    test('commit makes revision 1 from the buffer, keeps text verbatim and clears the buffer', async (t) => {
      const store = await freshStore(t, fixture);
      const odd = '---\r\nschema: x\t \n# ünïcødé ✓ 𝄞\n\n\n';
      await store.revisions.stage('site', [f('nodes/n1.yaml', odd), f('a.yaml', 'a: 1\n')]);
      await store.revisions.stage('global', [f('z.yaml', 'z')]);
      const before = Date.now();
      const revision = await store.revisions.commit({ message: 'initial site' });
      assert.equal(revision.id, 1);
      assert.equal(revision.message, 'initial site');
      assert.deepEqual(revision.buckets, ['global', 'site']);
      assert.deepEqual(revision.tags, []);
      assert.ok(Math.abs(revision.createdAt.getTime() - before) < 60_000);
      assert.deepEqual(await store.revisions.buffer(), []);
      assert.deepEqual(await store.revisions.documents(1), [
        { bucket: 'global', source: 'z.yaml', text: 'z' },
        { bucket: 'site', source: 'a.yaml', text: 'a: 1\n' },
        { bucket: 'site', source: 'nodes/n1.yaml', text: odd },
      ]);
      assert.deepEqual(await store.revisions.get(1), revision);
      assert.deepEqual(await store.revisions.latest(), revision);
    });

    test('later revisions carry unstaged buckets forward, replace staged ones, drop emptied ones', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('a', [f('a.yaml', 'a1')]);
      await store.revisions.stage('b', [f('b.yaml', 'b1')]);
      await store.revisions.stage('c', [f('c.yaml', 'c1')]);
      await store.revisions.commit();
      await store.revisions.stage('b', [f('b2.yaml', 'b2')]);
      await store.revisions.stage('c', []);
      const second = await store.revisions.commit({ message: 'second' });
      assert.equal(second.id, 2);
      assert.deepEqual(second.buckets, ['a', 'b']);
      assert.deepEqual(await store.revisions.documents(2), [
        { bucket: 'a', source: 'a.yaml', text: 'a1' },
        { bucket: 'b', source: 'b2.yaml', text: 'b2' },
      ]);
      await store.revisions.stage('d', [f('d.yaml', 'd')]);
      assert.equal((await store.revisions.commit()).id, 3);
      assert.deepEqual(
        (await store.revisions.list()).map((r) => [r.id, r.message, r.buckets]),
        [
          [1, null, ['a', 'b', 'c']],
          [2, 'second', ['a', 'b']],
          [3, null, ['a', 'b', 'd']],
        ],
      );
    });

    test('committed revisions are immutable', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [f('n.yaml', 'v1')]);
      await store.revisions.commit();
      const first = await store.revisions.documents(1);
      await store.revisions.stage('site', [f('n.yaml', 'v2')]);
      assert.deepEqual(await store.revisions.documents(1), first, 'staging must not touch a revision');
      await store.revisions.commit();
      await store.revisions.stage('site', [f('n.yaml', 'v1')]);
      await store.revisions.discardBuffer();
      assert.deepEqual(await store.revisions.documents(1), [{ bucket: 'site', source: 'n.yaml', text: 'v1' }]);
      assert.deepEqual(await store.revisions.documents(2), [{ bucket: 'site', source: 'n.yaml', text: 'v2' }]);
    });

    test('commit with buckets commits only those and leaves the rest staged', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('mine', [f('m.yaml', 'm')]);
      await store.revisions.stage('theirs', [f('t.yaml', 't')]);
      await rejectsWith(
        store.revisions.commit({ buckets: ['mine', 'nobody'] }),
        'EmptyBuffer',
        /^nothing staged for bucket\(s\) 'nobody'; staged: 'mine', 'theirs'$/,
      );
      assert.equal(await store.revisions.latest(), null, 'a refused commit writes nothing');
      const revision = await store.revisions.commit({ buckets: ['mine'] });
      assert.deepEqual(revision.buckets, ['mine']);
      assert.deepEqual(
        (await store.revisions.buffer()).map((b) => b.bucket),
        ['theirs'],
      );
      await rejectsWith(store.revisions.commit({ buckets: [] }), 'EmptyBuffer');
    });

    test('stage with expectBuffer stages only into the buffer as read; replaceBuffer empties it first', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('a', [f('a.yaml', 'a')]);
      const seen = await store.revisions.buffer();
      await store.revisions.stage('b', [f('b.yaml', 'b')], { expectBuffer: seen });
      await rejectsWith(
        store.revisions.stage('c', [f('c.yaml', 'c')], { expectBuffer: seen }),
        'Conflict',
        /^the buffer changed since it was read; nothing staged for bucket 'c'$/,
      );
      assert.deepEqual(
        (await store.revisions.buffer()).map((b) => b.bucket),
        ['a', 'b'],
        'a conflict stages nothing',
      );
      await store.revisions.stage('c', [f('c.yaml', 'c')], { replaceBuffer: true, expectBuffer: await store.revisions.buffer() });
      assert.deepEqual(
        (await store.revisions.buffer()).map((b) => [b.bucket, b.files.map((x) => x.text)]),
        [['c', ['c']]],
      );
      await rejectsWith(store.revisions.stage('d', [f('d.yaml', 'd')], { expectBuffer: [] }), 'Conflict');
      await store.revisions.commit();
      await rejectsWith(store.revisions.stage('d', [f('d.yaml', 'd')], { expectBuffer: seen }), 'Conflict', /buffer changed/);
      await store.revisions.stage('d', [f('d.yaml', 'd')], { expectBuffer: [] });
      assert.deepEqual(await store.revisions.documents(1), [{ bucket: 'c', source: 'c.yaml', text: 'c' }], 'a revision keeps what it committed');
    });

    test('discardBuffer empties the buffer and reports what was there', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('b', [f('x', 'x')]);
      await store.revisions.stage('a', []);
      assert.deepEqual(await store.revisions.discardBuffer(), ['a', 'b']);
      assert.deepEqual(await store.revisions.buffer(), []);
      assert.deepEqual(await store.revisions.discardBuffer(), []);
      await rejectsWith(store.revisions.commit(), 'EmptyBuffer');
    });

    test('tags: set, replace, list sorted, remove; site-action tags are found', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [f('n.yaml', 'n')]);
      await store.revisions.commit();
      const tag = await store.revisions.tag(1, 'site-action-failure', { action: 'a1', nodes: ['n1'] });
      assert.deepEqual(tag.data, { action: 'a1', nodes: ['n1'] });
      assert.equal(await store.revisions.hasSiteAction(), true);
      await store.revisions.tag(1, 'reviewed.by-ops');
      await store.revisions.tag(1, 'site-action-failure', { action: 'a2' });
      const revision = await store.revisions.get(1);
      assert.deepEqual(
        revision.tags.map((x) => [x.tag, x.data]),
        [
          ['reviewed.by-ops', {}],
          ['site-action-failure', { action: 'a2' }],
        ],
      );
      assert.equal(await store.revisions.untag(1, 'site-action-failure'), true);
      assert.equal(await store.revisions.untag(1, 'site-action-failure'), false);
      assert.equal(await store.revisions.hasSiteAction(), false);
      await store.revisions.tag(1, 'site-action-success');
      assert.equal(await store.revisions.hasSiteAction(), true);
      await rejectsWith(store.revisions.tag(2, 'x'), 'NotFound', /^revision 2 not found \(the latest is 1\)$/);
      await rejectsWith(store.revisions.untag(9, 'x'), 'NotFound', /revision 9/);
    });

    test('diff reports added, deleted, modified and unchanged per bucket and source', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('keep', [f('k.yaml', 'k')]);
      await store.revisions.stage('edit', [f('same.yaml', 's'), f('edit.yaml', 'e1'), f('gone.yaml', 'g')]);
      await store.revisions.stage('drop', [f('d.yaml', 'd')]);
      await store.revisions.commit();
      await store.revisions.stage('edit', [f('same.yaml', 's'), f('edit.yaml', 'e2'), f('new.yaml', 'n')]);
      await store.revisions.stage('drop', []);
      await store.revisions.stage('add', [f('a.yaml', 'a')]);
      await store.revisions.commit();
      assert.deepEqual(await store.revisions.diff(1, 2), {
        from: 1,
        to: 2,
        buckets: [
          { bucket: 'add', status: 'added', sources: [{ source: 'a.yaml', status: 'added' }] },
          { bucket: 'drop', status: 'deleted', sources: [{ source: 'd.yaml', status: 'deleted' }] },
          {
            bucket: 'edit',
            status: 'modified',
            sources: [
              { source: 'edit.yaml', status: 'modified' },
              { source: 'gone.yaml', status: 'deleted' },
              { source: 'new.yaml', status: 'added' },
              { source: 'same.yaml', status: 'unchanged' },
            ],
          },
          { bucket: 'keep', status: 'unchanged', sources: [{ source: 'k.yaml', status: 'unchanged' }] },
        ],
      });
      const fromEmpty = await store.revisions.diff(0, 1);
      assert.deepEqual(
        fromEmpty.buckets.map((b) => [b.bucket, b.status]),
        [
          ['drop', 'added'],
          ['edit', 'added'],
          ['keep', 'added'],
        ],
      );
      assert.ok((await store.revisions.diff(2, 2)).buckets.every((b) => b.status === 'unchanged'));
      await rejectsWith(store.revisions.diff(1, 3), 'NotFound', /revision 3 not found/);
      await rejectsWith(store.revisions.diff(-1, 1), 'InvalidArgument', /invalid revision id -1/);
    });

    test('two connections to one store see each other', async (t) => {
      const url = await fixture.freshUrl();
      const one = await openStore(url);
      t.after(() => one.close());
      const two = await openStore(url);
      t.after(() => two.close());
      await one.revisions.stage('site', [f('n.yaml', 'n')]);
      assert.deepEqual(
        (await two.revisions.buffer()).map((b) => b.bucket),
        ['site'],
      );
      await two.revisions.commit();
      assert.equal((await one.revisions.latest())?.id, 1);
      await one.revisions.tag(1, 'site-action-success');
      assert.equal(await two.revisions.hasSiteAction(), true);
    });

    test('a closed store rejects with Closed; close is idempotent', async () => {
      const store = await openStore(await fixture.freshUrl());
      await store.close();
      await store.close();
      await rejectsWith(store.revisions.buffer(), 'Closed', /closed/);
      await rejectsWith(store.revisions.stage('site', []), 'Closed');
    });

    validationContract(fixture);
    concurrencyContract(fixture);
    runsContract(fixture);
    driftContract(fixture);
    pluginsContract(fixture);
    actionsContract(fixture);
    wavesContract(fixture);
    designsContract(fixture);
    fleetContract(fixture);
  });
}
