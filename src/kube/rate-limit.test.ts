import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenBucket } from './rate-limit.ts';

/** A clock that advances only when the limiter sleeps. */
function fakeClock() {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms), get time() { return t; } };
}

describe('tokenBucket', () => {
  it('lets a burst through at once, then paces at qps, in order', async () => {
    const clock = fakeClock();
    const limiter = tokenBucket(10, 5, clock);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 25 }, (_, i) => limiter.acquire().then(() => order.push(i))));
    assert.deepEqual(order, Array.from({ length: 25 }, (_, i) => i));
    // 5 at once, the other 20 at 10 a second.
    assert.ok(Math.abs(clock.time - 2000) < 1e-6, `took ${clock.time} ms`);
  });

  it('never waits with qps 0', async () => {
    const clock = fakeClock();
    const limiter = tokenBucket(0, 1, clock);
    for (let i = 0; i < 1000; i++) await limiter.acquire();
    assert.equal(clock.time, 0);
  });
});
