import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TokenCache } from './token-cache.ts';

describe('token cache', () => {
  it('returns an entry until its deadline, never after', () => {
    let now = 1_000;
    const cache = new TokenCache<string>({ maxEntries: 10, now: () => now });
    cache.set('a', 'alice', 2_000);
    cache.set('gone', 'x', 1_000);
    assert.equal(cache.get('a'), 'alice');
    assert.equal(cache.get('gone'), undefined);
    now = 1_999;
    assert.equal(cache.get('a'), 'alice');
    now = 2_000;
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size, 0, 'an expired entry met is dropped');
  });

  it('drops the least recently used entry past its bound', () => {
    const cache = new TokenCache<number>({ maxEntries: 2, now: () => 0 });
    cache.set('a', 1, 10);
    cache.set('b', 2, 10);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3, 10);
    assert.deepEqual([cache.get('a'), cache.get('b'), cache.get('c')], [1, undefined, 3]);
  });

  it('never holds more than its bound, and keeps the most recent entries (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (max, keys) => {
        const cache = new TokenCache<number>({ maxEntries: max, now: () => 0 });
        for (const key of keys) {
          cache.set(String(key), key, 1);
          assert.ok(cache.size <= max);
        }
        const recent = [...new Set([...keys].reverse())].slice(0, max);
        for (const key of recent) assert.equal(cache.get(String(key)), key);
      }),
    );
  });

  it('refuses a bound below 1', () => {
    assert.throws(() => new TokenCache({ maxEntries: 0 }), /at least 1 entry/);
  });
});
