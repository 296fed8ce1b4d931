import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, CONFLICT_BACKOFF, RELIST_BACKOFF } from './backoff.ts';

describe('backoffMs', () => {
  it('a stale write: grows from 100 ms, doubling, capped at 2 s, with full jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 10].map((n) => backoffMs(n, CONFLICT_BACKOFF, 0.999)),
      [99, 199, 399, CONFLICT_BACKOFF.maxMs - 2],
    );
    assert.equal(backoffMs(4, CONFLICT_BACKOFF, 0), 0);
  });

  it('a failed LIST or watch of Nodes: 500 ms, doubling, capped at 30 s, no jitter', () => {
    assert.deepEqual(
      [1, 2, 3, 7, 20].map((n) => backoffMs(n, RELIST_BACKOFF, 0)),
      [500, 1_000, 2_000, 30_000, 30_000],
    );
  });
});
