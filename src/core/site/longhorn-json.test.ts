import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { goFoldKey, goInt64, type Json, JSON_READ_DEPTH, JsonNumber, JsonObject, readJson } from './longhorn-json.ts';

// A value read by readJson as JSON.parse would give it: numbers by value, the last of a repeated key.
function plain(value: Json): unknown {
  if (value instanceof JsonNumber) return Number(value.text);
  if (value instanceof JsonObject) {
    const object: Record<string, unknown> = {};
    for (const [key, member] of value.members)
      Object.defineProperty(object, key, { value: plain(member), enumerable: true, configurable: true, writable: true });
    return object;
  }
  if (Array.isArray(value)) return (value as readonly Json[]).map(plain);
  return value;
}

function read(text: string): Json {
  const result = readJson(text);
  if ('error' in result) throw new Error(result.error);
  return result.value;
}

describe('readJson: JSON as Go decodes it', () => {
  it('keeps each number as written and each member in order, a repeated key included', () => {
    assert.deepEqual(read(' [1e3, 1.0, -0, {"a": 1, "b": [], "a": 2}] '), [
      new JsonNumber('1e3'),
      new JsonNumber('1.0'),
      new JsonNumber('-0'),
      new JsonObject([
        ['a', new JsonNumber('1')],
        ['b', []],
        ['a', new JsonNumber('2')],
      ]),
    ]);
  });

  it('decodes escapes, and a lone surrogate as U+FFFD as Go does', () => {
    assert.deepEqual(read(String.raw`["a\"b\\c\u00e9\n", "\ud800x", "\ud83d\ude00"]`), ['a"b\\cé\n', '\uFFFDx', '😀']);
    assert.deepEqual(read(String.raw`{"\udc00": true}`), new JsonObject([['\uFFFD', true]]));
  });

  it('reports bad JSON with the reason, never throws', () => {
    assert.deepEqual(readJson('[1,]'), { error: 'Unexpected token \']\', "[1,]" is not valid JSON' });
    assert.ok('error' in readJson('\uFEFF[]'), 'a byte-order mark is not JSON, for Go either');
    assert.ok('error' in readJson(''));
  });

  it(`reads ${JSON_READ_DEPTH} levels of nesting and deeper values as empty`, () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    let value = read(deep);
    for (let level = 0; level < JSON_READ_DEPTH; level++) {
      assert.ok(Array.isArray(value) && value.length === 1);
      value = (value as readonly Json[])[0] ?? null;
    }
    assert.deepEqual(value, []);
    const [, after] = read(`[${'{"a":'.repeat(40)}"x"${'}'.repeat(40)}, 2]`) as readonly Json[];
    assert.deepEqual(after, new JsonNumber('2'), 'reading resumes after a skipped value');
  });

  it('reads every JSON value as JSON.parse does (property)', () => {
    fc.assert(fc.property(fc.json(), (text) => assert.deepEqual(plain(read(text)), JSON.parse(text))));
  });
});

describe('goInt64: a JSON number into a Go int64 (strconv.ParseInt of the literal)', () => {
  const table: [string, bigint | 'fraction' | 'overflow'][] = [
    ['0', 0n],
    ['-0', 0n],
    ['1024', 1024n],
    ['-1', -1n],
    ['9223372036854775807', 2n ** 63n - 1n],
    ['-9223372036854775808', -(2n ** 63n)],
    ['9223372036854775808', 'overflow'],
    ['-9223372036854775809', 'overflow'],
    ['1'.padEnd(400, '0'), 'overflow'],
    ['1e3', 'fraction'],
    ['1E0', 'fraction'],
    ['1.0', 'fraction'],
    ['0.5', 'fraction'],
    ['-1.5e-3', 'fraction'],
  ];
  for (const [text, value] of table) it(`${text.slice(0, 24)} → ${value}`, () => assert.equal(goInt64(new JsonNumber(text)), value));

  it('every whole number in the int64 range reads as itself (property)', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => assert.equal(goInt64(new JsonNumber(n.toString())), n)));
  });
});

describe("goFoldKey: Go's case-insensitive field match", () => {
  it('matches letter case and the two non-ASCII folds, nothing else', () => {
    assert.equal(goFoldKey('Path'), goFoldKey('path'));
    assert.equal(goFoldKey('STORAGERESERVED'), goFoldKey('storageReserved'));
    assert.equal(goFoldKey('\u017FtorageReserved'), goFoldKey('storageReserved'));
    assert.equal(goFoldKey('dis\u212AType'), goFoldKey('diskType'));
    assert.notEqual(goFoldKey('d\u0130skType'), goFoldKey('diskType'));
    assert.notEqual(goFoldKey('\u0131'), goFoldKey('i'));
  });
});
