import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUlid, monotonicUlid, newUlid, nextUlid, ulidTime } from './ulid.ts';

test('a ULID is 26 Crockford characters whose first ten are the time', () => {
  const make = monotonicUlid(
    () => 1_469_918_176_385,
    () => 0n,
  );
  const id = make();
  assert.equal(id, '01ARYZ6S410000000000000000');
  assert.ok(isUlid(id));
  assert.equal(ulidTime(id), 1_469_918_176_385);
  const max = monotonicUlid(
    () => 2 ** 48 - 1,
    () => (1n << 80n) - 1n,
  )();
  assert.equal(max, '7ZZZZZZZZZZZZZZZZZZZZZZZZZ');
});

test('ids of one millisecond, or of a clock that stepped back, still increase', () => {
  const times = [1000, 1000, 1000, 999, 1001];
  const make = monotonicUlid(
    () => times.shift() ?? 0,
    () => 41n,
  );
  const ids = Array.from({ length: 5 }, make);
  assert.deepEqual(
    ids.map((id) => id.slice(10)),
    ['0000000000000019', '000000000000001A', '000000000000001B', '000000000000001C', '0000000000000019'],
  );
  assert.deepEqual(ids.map(ulidTime), [1000, 1000, 1000, 1000, 1001]);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, 5);
});

test('the process generator gives increasing, valid ids', () => {
  const ids = Array.from({ length: 2000 }, () => newUlid());
  assert.ok(ids.every(isUlid));
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(Math.abs(ulidTime(ids[0] ?? '') - Date.now()) < 5000);
});

test('refuses what is not a ULID and times it cannot encode', () => {
  for (const bad of ['', '01ARYZ6S41000000000000000', '81ARYZ6S410000000000000000', '01ARYZ6S41000000000000000I', 'ZXJ0eQ', 42])
    assert.equal(isUlid(bad), false, String(bad));
  assert.throws(() => ulidTime('nope'), /not a ULID/);
  assert.throws(() => monotonicUlid(() => -1)(), /out of range/);
  assert.throws(() => monotonicUlid(() => 2 ** 48)(), /out of range/);
  const full = monotonicUlid(
    () => 5,
    () => (1n << 80n) - 1n,
  );
  full();
  assert.throws(() => full(), /exhausted/);
});

test('nextUlid is the least id after another, in the same millisecond', () => {
  assert.equal(nextUlid('01ARYZ6S410000000000000000'), '01ARYZ6S410000000000000001');
  assert.equal(nextUlid('01ARYZ6S41000000000000000Z'), '01ARYZ6S410000000000000010');
  assert.throws(() => nextUlid('01ARYZ6S41ZZZZZZZZZZZZZZZZ'), /exhausted/);
  assert.throws(() => nextUlid('bad'), /not a ULID/);
});
