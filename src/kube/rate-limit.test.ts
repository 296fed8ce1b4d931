import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tokenBucket, UNLIMITED } from './rate-limit.ts';

/** A clock that advances only when the limiter sleeps; counts its sleeps. */
function fakeClock() {
  let t = 0;
  let sleeps = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      sleeps++;
      t += ms;
    },
    advance: (ms: number) => void (t += ms),
    get time() {
      return t;
    },
    get sleeps() {
      return sleeps;
    },
  };
}

describe('tokenBucket', () => {
  it('lets a burst through at once, then paces at qps, in order, one sleep per waiter at most', async () => {
    const clock = fakeClock();
    const limiter = tokenBucket(10, 5, clock);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 25 }, (_, i) => limiter.acquire().then(() => order.push(i))));
    assert.deepEqual(
      order,
      Array.from({ length: 25 }, (_, i) => i),
    );
    // 5 at once, the other 20 at 10 a second.
    assert.ok(Math.abs(clock.time - 2000) < 1e-6, `took ${clock.time} ms`);
    assert.ok(clock.sleeps <= 20, `slept ${clock.sleeps} times: no busy loop`);
  });

  it('serves a late caller after those already waiting, even once tokens have come back', async () => {
    const clock = fakeClock();
    const limiter = tokenBucket(1, 1, clock);
    const order: string[] = [];
    await limiter.acquire();
    const first = limiter.acquire().then(() => order.push('first'));
    const second = limiter.acquire().then(() => order.push('second'));
    // Time passes outside the limiter: a token is due, but two callers are queued.
    clock.advance(5000);
    const late = limiter.acquire().then(() => order.push('late'));
    await Promise.all([first, second, late]);
    assert.deepEqual(order, ['first', 'second', 'late']);
  });

  it('refills up to the burst only, after a quiet spell', async () => {
    const clock = fakeClock();
    const limiter = tokenBucket(10, 3, clock);
    clock.advance(60_000);
    for (let i = 0; i < 3; i++) await limiter.acquire();
    assert.equal(clock.time, 60_000, 'three tokens at once');
    await limiter.acquire();
    assert.ok(Math.abs(clock.time - 60_100) < 1e-6, 'the fourth waits 1/qps');
  });

  it('treats qps ≤ 0, NaN and Infinity as no limit, and a burst below 1 as 1', async () => {
    for (const qps of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(tokenBucket(qps, 1), UNLIMITED, String(qps));
    const clock = fakeClock();
    const limiter = tokenBucket(0, 1, clock);
    for (let i = 0; i < 1000; i++) await limiter.acquire();
    assert.equal(clock.time, 0);

    const paced = fakeClock();
    const one = tokenBucket(4, 0, paced);
    for (let i = 0; i < 3; i++) await one.acquire();
    assert.ok(Math.abs(paced.time - 500) < 1e-6, `burst 0 acts as 1: ${paced.time} ms`);
  });
});
