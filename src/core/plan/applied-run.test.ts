import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { APPLIED_RECORD_MAX_BYTES, formatAppliedRun, isAppliedBy, isSiteRecord, MAX_RECORD_NAME, readAppliedRun } from './applied-run.ts';
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

  it('keeps the site and the set, percent-encoded, and reads them back whatever their text', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }), (site, set) => {
        const applied = { revision: 5, run: 17, site, ...(set !== undefined ? { set } : {}) };
        const value = formatAppliedRun(applied);
        assert.match(value, /^revision=5,run=17,site=[^,=]+(,set=[^,=]+)?$/);
        assert.deepEqual(readAppliedRun(on(value)), applied);
        assert.equal(isAppliedBy(on(value), { revision: 5, run: 17 }), true, 'the run and revision alone say who wrote it');
      }),
    );
    assert.equal(formatAppliedRun({ revision: 5, run: 17, site: 'seaworthy', set: 'gpu nodes' }), 'revision=5,run=17,site=seaworthy,set=gpu%20nodes');
    assert.equal(formatAppliedRun({ revision: 5, run: 17, site: 'a,b=c' }), 'revision=5,run=17,site=a%2Cb%3Dc');
  });

  it('bounds the names it keeps, and reads nothing from a malformed site or set', () => {
    const long = 'x'.repeat(MAX_RECORD_NAME + 1);
    assert.equal(formatAppliedRun({ revision: 1, run: 2, site: 's', set: long }), 'revision=1,run=2,site=s');
    assert.equal(formatAppliedRun({ revision: 1, run: 2, site: long }), 'revision=1,run=2');
    for (const value of [
      'revision=5,run=17,site=',
      'revision=5,run=17,set=a,site=s',
      'revision=5,run=17,site=%E0%A4%A',
      'revision=5,run=17,site=a,set=b,x=1',
    ]) {
      assert.equal(readAppliedRun(on(value)), null, value);
    }
    assert.deepEqual(readAppliedRun(on('revision=5,run=17,set=gpu')), { revision: 5, run: 17, set: 'gpu' });
    const longest = formatAppliedRun({
      revision: Number.MAX_SAFE_INTEGER,
      run: Number.MAX_SAFE_INTEGER,
      site: 's'.repeat(MAX_RECORD_NAME),
      set: 'é'.repeat(50),
    });
    assert.ok(Buffer.byteLength(longest) <= APPLIED_RECORD_MAX_BYTES, 'the annotation budget reserves the longest record');
    assert.equal(
      Buffer.byteLength(
        `revision=${Number.MAX_SAFE_INTEGER},run=${Number.MAX_SAFE_INTEGER},site=${'s'.repeat(MAX_RECORD_NAME)},set=${'x'.repeat(MAX_RECORD_NAME)}`,
      ),
      APPLIED_RECORD_MAX_BYTES,
    );
  });

  it("says whose a record is: one naming a site is that site's; one naming none is this site's only when site-less records are", () => {
    assert.equal(isSiteRecord({ revision: 1, run: 1, site: 's' }, 's', false), true);
    assert.equal(isSiteRecord({ revision: 1, run: 1, site: 'other' }, 's', true), false);
    assert.equal(isSiteRecord({ revision: 1, run: 1 }, 's', true), true);
    assert.equal(isSiteRecord({ revision: 1, run: 1 }, 's', false), false);
  });
});
