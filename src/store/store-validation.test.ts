import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStoreError } from './store-error.ts';
import { assertBucketName, assertTagName, parseTagData, serializeTagData, validateBucketList, validateFiles } from './store-validation.ts';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return isStoreError(error) ? error.code : `not a StoreError: ${String(error)}`;
  }
};

describe('names', () => {
  test('bucket names', () => {
    for (const ok of ['a', 'site', 'site-design', 'site_design.v1', '0', 'a'.repeat(63)]) {
      assert.equal(
        code(() => assertBucketName(ok)),
        undefined,
        ok,
      );
    }
    for (const bad of ['', 'A', '_a', 'a_', '.a', 'a.', 'a b', 'a/b', 'a'.repeat(64), null]) {
      assert.equal(
        code(() => assertBucketName(bad)),
        'InvalidName',
        String(bad),
      );
    }
  });

  test('tag names', () => {
    for (const ok of ['site-action-success', 'site-action-failure', 'v1.2', 'x']) {
      assert.equal(
        code(() => assertTagName(ok)),
        undefined,
        ok,
      );
    }
    for (const bad of ['', 'Tag', 'a_b', '-a', 'a-', 'a'.repeat(64), 3]) {
      assert.equal(
        code(() => assertTagName(bad)),
        'InvalidName',
        String(bad),
      );
    }
  });
});

describe('validateFiles', () => {
  test('returns a sorted copy of valid files', () => {
    const files = [
      { source: 'b.yaml', text: '' },
      { source: 'A.yaml', text: 'x' },
      { source: 'a/z.yaml', text: 'y' },
    ];
    assert.deepEqual(
      validateFiles('site', files).map((f) => f.source),
      ['A.yaml', 'a/z.yaml', 'b.yaml'],
    );
    assert.equal(files[0]?.source, 'b.yaml', 'input untouched');
  });

  test('an empty list is valid (stages a deletion)', () => {
    assert.deepEqual(validateFiles('site', []), []);
  });
});

describe('tag data', () => {
  test('round-trips plain JSON objects; undefined is {}', () => {
    const data = { action: 'x', nodes: ['a', 'b'], nested: { n: 1, ok: true, none: null } };
    assert.deepEqual(parseTagData(serializeTagData('t', data)), data);
    assert.equal(serializeTagData('t', undefined), '{}');
    assert.deepEqual(parseTagData(serializeTagData('t', Object.create(null) as object as Record<string, unknown>)), {});
  });

  test('cycles are InvalidArgument', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(
      code(() => serializeTagData('t', cyclic)),
      'InvalidArgument',
    );
  });
});

describe('validateBucketList', () => {
  test('dedupes and sorts; empty is EmptyBuffer', () => {
    assert.deepEqual(validateBucketList(['b', 'a', 'b']), ['a', 'b']);
    assert.equal(
      code(() => validateBucketList([])),
      'EmptyBuffer',
    );
    assert.equal(
      code(() => validateBucketList(['Bad'])),
      'InvalidName',
    );
  });
});
