import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { NoteKind, noteId, parseNoteId } from './note-ids.ts';

test('a note id is 26 letters and digits naming its kind, run and position', () => {
  const id = noteId({ kind: NoteKind.node, run: 7, seq: 49_999 });
  assert.equal(id, 'F0000000000070000000001GTF');
  assert.equal(id.length, 26);
  assert.match(id, /^[A-Za-z0-9]{26}$/);
  assert.deepEqual(parseNoteId(id), { kind: 'F', run: 7, seq: 49_999 });
});

test('ids round-trip for any run and position', () => {
  fc.assert(
    fc.property(fc.constantFrom(...Object.values(NoteKind)), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.nat(), (kind, run, seq) => {
      assert.deepEqual(parseNoteId(noteId({ kind, run, seq })), { kind, run, seq });
    }),
  );
});

test('what noteId does not produce names nothing', () => {
  for (const bad of [
    '',
    'F000000000007000000001GTF',
    'X0000000000070000000001GTF',
    'F0000000000000000000001GTF',
    'F000000000007000000000IGTF',
    'f0000000000070000000001gtf',
    '01ARYZ6S410000000000000000',
    'FZZZZZZZZZZZZ0000000001GTF',
  ]) {
    assert.equal(parseNoteId(bad), null, bad);
  }
  assert.throws(() => noteId({ kind: 'A', run: -1, seq: 0 }), /run/);
  assert.throws(() => noteId({ kind: 'A', run: 1, seq: 1.5 }), /seq/);
});
