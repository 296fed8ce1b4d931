import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatAppliedRun, isAppliedBy, readAppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION } from './constants.ts';

const on = (value: string) => ({ [APPLIED_ANNOTATION]: value });

describe('applied-run record', () => {
  it('reads back what it writes, for any run and revision', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (revision, run) => {
        const value = formatAppliedRun({ revision, run });
        assert.match(value, /^revision=\d+,run=\d+$/);
        assert.deepEqual(readAppliedRun(on(value)), { revision, run });
        assert.equal(isAppliedBy(on(value), { revision, run }), true);
        assert.equal(isAppliedBy(on(value), { revision, run: run + 1 }), false, 'another run');
        assert.equal(isAppliedBy(on(value), { revision: revision + 1, run }), false, 'another revision');
      }),
    );
  });

  it('reads nothing from an absent, hand-edited or malformed value', () => {
    assert.equal(readAppliedRun({}), null);
    for (const value of [
      '',
      'run=17,revision=5',
      'revision=5, run=17',
      'revision=05,run=17',
      'revision=0,run=1',
      'revision=5,run=17,x=1',
      'revision=1e3,run=2',
      `revision=${'9'.repeat(16)},run=1`,
      `revision=1,run=${'1'.repeat(17)}`,
    ]) {
      assert.equal(readAppliedRun(on(value)), null, value);
    }
    assert.deepEqual(readAppliedRun(on('revision=5,run=17')), { revision: 5, run: 17 });
  });
});
