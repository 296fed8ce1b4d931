import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readAhead } from './read-ahead.ts';

/** A source of `n` items that logs when each is requested and when it is closed. */
function source(n: number, log: string[], failAt?: number): AsyncIterable<number> {
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let i = 0; i < n; i++) {
          log.push(`read ${i}`);
          await new Promise((r) => setTimeout(r, 1));
          if (i === failAt) throw new Error(`page ${i} failed`);
          yield i;
        }
      } finally {
        log.push('closed');
      }
    },
  };
}

test('the next item is requested while the caller works on the current one; every item comes, in order', async () => {
  const log: string[] = [];
  const seen: number[] = [];
  for await (const item of readAhead(source(3, log))) {
    log.push(`use ${item}`);
    seen.push(item);
  }
  assert.deepEqual(seen, [0, 1, 2]);
  assert.deepEqual(log.slice(0, 3), ['read 0', 'read 1', 'use 0'], 'item 1 was requested before item 0 was used');
  assert.ok(log.includes('closed'));
});

test('a failure surfaces where its item is asked for; a caller that stops early closes the source', async () => {
  const log: string[] = [];
  const seen: number[] = [];
  await assert.rejects(
    (async () => {
      for await (const item of readAhead(source(5, log, 2))) seen.push(item);
    })(),
    /page 2 failed/,
  );
  assert.deepEqual(seen, [0, 1]);

  const early: string[] = [];
  for await (const item of readAhead(source(5, early))) if (item === 1) break;
  assert.equal(early.at(-1), 'closed');
  assert.ok(!early.includes('read 3'), 'nothing read beyond one ahead');
});
