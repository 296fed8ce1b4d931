/**
 * Contract cases for rejected input: every refused call names the culprit,
 * carries the right code, and leaves the store exactly as it was.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SourceFile } from '../../../src/store/revisions/revision-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshStore, rejectsWith, type StoreFixture } from './fixture.ts';

const BAD_NAMES = ['', 'Site', '-site', 'site-', 'si te', 'si/te', 'a'.repeat(64), 'ünï'];

/** Everything observable about a store, to compare before and after a refused call. */
async function snapshot(store: Store): Promise<unknown> {
  const revisions = await store.revisions.list();
  return {
    revisions,
    documents: await Promise.all(revisions.map((r) => store.revisions.documents(r.id))),
    buffer: (await store.revisions.buffer()).map((b) => [b.bucket, b.files]),
  };
}

/** Register the validation part of the contract. */
export function validationContract(fixture: StoreFixture): void {
  describe('invalid input is refused and nothing is stored', () => {
    test('invalid bucket names: InvalidName, nothing stored', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [{ source: 'n.yaml', text: 'n' }]);
      await store.revisions.commit();
      await store.revisions.stage('staged', [{ source: 's.yaml', text: 's' }]);
      const before = await snapshot(store);
      for (const name of BAD_NAMES) {
        await rejectsWith(store.revisions.stage(name, [{ source: 'x.yaml', text: 'x' }]), 'InvalidName', /invalid bucket name/);
        await rejectsWith(store.revisions.commit({ buckets: [name] }), 'InvalidName', /invalid bucket name/);
      }
      await rejectsWith(store.revisions.stage(42 as unknown as string, []), 'InvalidName', /must be a string/);
      assert.deepEqual(await snapshot(store), before);
      // The longest valid names are accepted.
      await store.revisions.stage('a'.repeat(63), []);
      await store.revisions.stage('site_design.v1', []);
    });

    test('a bad file anywhere in a stage stores none of its files', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [{ source: 'old.yaml', text: 'old' }]);
      const before = await snapshot(store);
      const good: SourceFile = { source: 'good.yaml', text: 'good' };
      const cases: [unknown[], string, RegExp][] = [
        [[good, { source: '', text: 'x' }], 'InvalidName', /bucket 'site', file #1: source must be a non-empty string/],
        [[good, { source: 'a\nb', text: 'x' }], 'InvalidName', /invalid source name "a\\nb"/],
        [[good, { source: 'x'.repeat(1025), text: 'x' }], 'InvalidName', /at most 1024 characters/],
        [[good, { ...good }], 'InvalidArgument', /^bucket 'site', source 'good.yaml': staged more than once$/],
        [[good, { source: 'nul.yaml', text: 'a\u0000b' }], 'InvalidArgument', /source 'nul.yaml': text contains a NUL character at offset 1/],
        [[good, { source: 'num.yaml', text: 7 }], 'InvalidArgument', /text must be a string/],
        [[good, null], 'InvalidArgument', /file #1: expected \{source, text\}/],
      ];
      for (const [files, code, message] of cases) {
        await rejectsWith(store.revisions.stage('site', files as SourceFile[]), code as 'InvalidName', message);
      }
      await rejectsWith(store.revisions.stage('site', 'x' as unknown as SourceFile[]), 'InvalidArgument', /must be an array/);
      assert.deepEqual(await snapshot(store), before);
    });

    test('invalid tag names and data: refused, no tag stored', async (t) => {
      const store = await freshStore(t, fixture);
      await store.revisions.stage('site', [{ source: 'n.yaml', text: 'n' }]);
      await store.revisions.commit();
      for (const name of [...BAD_NAMES, 'under_score']) {
        await rejectsWith(store.revisions.tag(1, name), 'InvalidName', /invalid tag name/);
        await rejectsWith(store.revisions.untag(1, name), 'InvalidName', /invalid tag name/);
      }
      const badData: [unknown, RegExp][] = [
        [[1, 2], /must be a JSON object/],
        ['text', /must be a JSON object/],
        [new Date(), /must be a plain object/],
        [{ big: 1n }, /not serializable/],
      ];
      for (const [data, message] of badData) {
        await rejectsWith(store.revisions.tag(1, 'ok', data as Record<string, unknown>), 'InvalidArgument', message);
      }
      assert.deepEqual((await store.revisions.get(1)).tags, []);
      assert.equal((await store.revisions.tag(1, 'a'.repeat(63))).tag, 'a'.repeat(63));
    });

    test('invalid revision ids and commit options: InvalidArgument', async (t) => {
      const store = await freshStore(t, fixture);
      for (const id of [0, -1, 1.5, Number.NaN, '1']) {
        await rejectsWith(store.revisions.get(id as number), 'InvalidArgument', /invalid revision id .*must be an integer >= 1/);
        await rejectsWith(store.revisions.documents(id as number), 'InvalidArgument');
        await rejectsWith(store.revisions.tag(id as number, 'x'), 'InvalidArgument');
      }
      await store.revisions.stage('site', []);
      await rejectsWith(store.revisions.commit({ message: 'a\u0000b' }), 'InvalidArgument', /commit message/);
      await rejectsWith(store.revisions.commit({ buckets: 'site' as unknown as string[] }), 'InvalidArgument', /array/);
      assert.equal(await store.revisions.latest(), null);
      assert.deepEqual(
        (await store.revisions.buffer()).map((b) => b.bucket),
        ['site'],
      );
    });
  });
}
