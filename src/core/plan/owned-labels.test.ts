import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { OWNED_LABELS_ANNOTATION } from './constants.ts';
import { formatOwnedLabels, readOwnedLabels } from './owned-labels.ts';

it('reads a record the same each time, however often it is read and whatever a caller does with an earlier answer', () => {
  const annotations = { [OWNED_LABELS_ANNOTATION]: ' b, a ,,a, not a key!,c' };
  const first = readOwnedLabels(annotations);
  assert.deepEqual(first, { owned: ['a', 'b', 'c'], discarded: ['not a key!'], raw: annotations[OWNED_LABELS_ANNOTATION] });
  first.owned.push('zz');
  first.discarded.length = 0;
  assert.deepEqual(readOwnedLabels(annotations), { owned: ['a', 'b', 'c'], discarded: ['not a key!'], raw: annotations[OWNED_LABELS_ANNOTATION] });
  // More distinct values than the memo holds still read right.
  for (let i = 0; i < 600; i++) assert.deepEqual(readOwnedLabels({ [OWNED_LABELS_ANNOTATION]: `k${i},a` }).owned, ['a', `k${i}`]);
});

it('formats keys sorted and distinct, whether or not they came so', () => {
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-z]{1,3}$/), { maxLength: 8 }), (keys) => {
      const expected = keys.length === 0 ? null : [...new Set(keys)].sort().join(',');
      assert.equal(formatOwnedLabels(keys), expected);
      assert.equal(formatOwnedLabels([...new Set(keys)].sort()), expected);
    }),
  );
});
