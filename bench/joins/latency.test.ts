import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { percentiles } from './latency.ts';

describe('join pass percentiles', () => {
  it('takes the nearest rank, in whole milliseconds', () => {
    const ms = Array.from({ length: 100 }, (_, i) => i + 1.4);
    assert.deepEqual(percentiles(ms), { p50Ms: 50, p95Ms: 95, p99Ms: 99, maxMs: 100 });
  });
  it('one value is every percentile; none is null', () => {
    assert.deepEqual(percentiles([7]), { p50Ms: 7, p95Ms: 7, p99Ms: 7, maxMs: 7 });
    assert.deepEqual(percentiles([]), { p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null });
  });
  it('does not depend on order', () => {
    assert.deepEqual(percentiles([300, 100, 200]), percentiles([100, 200, 300]));
  });
});
