import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { compareText, contentDigest, diffEntries, type DiffEntry } from './revision-diff.ts';
import type { DiffStatus } from './revision-store.ts';

const e = (bucket: string, source: string, digest: string): DiffEntry => ({ bucket, source, digest });

describe('diffEntries', () => {
  test('classifies buckets and sources, sorted, whatever the input order', () => {
    const before = [e('site', 'b', '2'), e('gone', 'g', '9'), e('site', 'a', '1'), e('same', 's', '5')];
    const after = [e('same', 's', '5'), e('site', 'a', '1'), e('new', 'n', '7'), e('site', 'b', '3'), e('site', 'c', '4')];
    assert.deepEqual(diffEntries(3, 4, before, after), {
      from: 3,
      to: 4,
      buckets: [
        { bucket: 'gone', status: 'deleted', sources: [{ source: 'g', status: 'deleted' }] },
        { bucket: 'new', status: 'added', sources: [{ source: 'n', status: 'added' }] },
        { bucket: 'same', status: 'unchanged', sources: [{ source: 's', status: 'unchanged' }] },
        {
          bucket: 'site',
          status: 'modified',
          sources: [
            { source: 'a', status: 'unchanged' },
            { source: 'b', status: 'modified' },
            { source: 'c', status: 'added' },
          ],
        },
      ],
    });
  });

  test('a bucket whose only change is a deleted source is modified', () => {
    const diff = diffEntries(1, 2, [e('b', 'x', '1'), e('b', 'y', '2')], [e('b', 'x', '1')]);
    assert.equal(diff.buckets[0]?.status, 'modified');
  });

  test('two empty sides have no buckets', () => {
    assert.deepEqual(diffEntries(0, 0, [], []), { from: 0, to: 0, buckets: [] });
  });

  const entries = fc.uniqueArray(
    fc.record({
      bucket: fc.constantFrom('a', 'b', 'c'),
      source: fc.constantFrom('x.yaml', 'y.yaml', 'z.yaml'),
      digest: fc.constantFrom('1', '2', '3'),
    }),
    { selector: (entry) => `${entry.bucket}/${entry.source}` },
  );
  const mirror: Record<DiffStatus, DiffStatus> = {
    added: 'deleted',
    deleted: 'added',
    modified: 'modified',
    unchanged: 'unchanged',
  };

  test('property: reversing the sides mirrors every status', () => {
    fc.assert(
      fc.property(entries, entries, (a, b) => {
        const forward = diffEntries(1, 2, a, b);
        const backward = diffEntries(2, 1, b, a);
        assert.deepEqual(
          backward.buckets,
          forward.buckets.map((bucket) => ({
            bucket: bucket.bucket,
            status: mirror[bucket.status],
            sources: bucket.sources.map((s) => ({ source: s.source, status: mirror[s.status] })),
          })),
        );
      }),
    );
  });

  test('property: a side compared with itself is all unchanged, covering every file once', () => {
    fc.assert(
      fc.property(entries, (a) => {
        const diff = diffEntries(1, 1, a, a);
        const sources = diff.buckets.flatMap((b) => b.sources.map((s) => [b.bucket, s.source, s.status]));
        assert.equal(sources.length, a.length);
        assert.ok(sources.every(([, , status]) => status === 'unchanged'));
      }),
    );
  });
});

describe('compareText and contentDigest', () => {
  test('order is by UTF-16 code unit, locale-independent', () => {
    assert.deepEqual(['b', 'B', 'a', 'é', '_', '10', '9'].sort(compareText), ['10', '9', 'B', '_', 'a', 'b', 'é']);
  });

  test('digest is SHA-256 hex of the UTF-8 text', () => {
    assert.equal(contentDigest(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.notEqual(contentDigest('a\n'), contentDigest('a\r\n'));
  });
});
