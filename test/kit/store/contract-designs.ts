/**
 * The stored-design part of the store contract: a revision's design is
 * read back as stored, only in the format it was stored in, one format per
 * revision, the last write replacing it, the same on every backend.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

/** Register the stored-design contract for one backend. */
export function designsContract(fixture: StoreFixture): void {
  describe('stored designs', () => {
    test('a design reads back in its own format only; a later write replaces it', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [{ source: 'a.yaml', text: 'a' }]);
      const r1 = (await store.revisions.commit()).id;
      await store.revisions.stage('site', [{ source: 'a.yaml', text: 'b' }]);
      const r2 = (await store.revisions.commit()).id;
      assert.equal(await store.designs.get(r1, 'f1'), null, 'nothing stored yet');
      const big = 'x'.repeat(3_000_000);
      await store.designs.save(r1, 'f1', big);
      assert.equal(await store.designs.get(r1, 'f1'), big);
      assert.equal(await store.designs.get(r1, 'f2'), null, 'another format is not read');
      assert.equal(await store.designs.get(r2, 'f1'), null, 'another revision is not read');
      await store.designs.save(r1, 'f1', 'later');
      assert.equal(await store.designs.get(r1, 'f1'), 'later', 'a later write replaces');
      await store.designs.save(r1, 'f2', 'newer code');
      assert.equal(await store.designs.get(r1, 'f2'), 'newer code');
      assert.equal(await store.designs.get(r1, 'f1'), null, 'one format per revision');
    });

    test('bad arguments are refused and change nothing', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [{ source: 'a.yaml', text: 'a' }]);
      const r1 = (await store.revisions.commit()).id;
      await rejectsWith(store.designs.save(7, 'f1', 'd'), 'NotFound', /revision 7 not found \(the latest is 1\)/);
      await rejectsWith(store.designs.save(r1, '', 'd'), 'InvalidArgument', /format/);
      await rejectsWith(store.designs.save(r1, 'f'.repeat(65), 'd'), 'InvalidArgument', /format/);
      await rejectsWith(store.designs.save(r1, 'f1', ''), 'InvalidArgument', /non-empty/);
      await rejectsWith(store.designs.get(0, 'f1'), 'InvalidArgument');
      assert.equal(await store.designs.get(r1, 'f1'), null);
    });
  });
}
