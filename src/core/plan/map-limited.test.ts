import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mapLimited } from './map-limited.ts';

describe('mapLimited', () => {
  it('keeps the items’ order, runs at most `limit` at once, and rejects with a failing call', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimited([5, 1, 4, 2, 3], 2, async (n) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, n));
      running--;
      return n * 10;
    });
    assert.deepEqual([out, most], [[50, 10, 40, 20, 30], 2]);
    assert.deepEqual(await mapLimited([], 4, async () => 1), []);
    await assert.rejects(
      mapLimited([1, 2], 4, async (n) => {
        if (n === 2) throw new Error('two');
        return n;
      }),
      /two/,
    );
  });
});
