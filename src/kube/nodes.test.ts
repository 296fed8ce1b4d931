import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { limited, MAX_TOO_MANY_REQUESTS_RETRIES, retryAfterSeconds } from './nodes.ts';
import { UNLIMITED } from './rate-limit.ts';

const tooMany = (retryAfter?: string) => new ApiException(429, 'too many requests', '', retryAfter === undefined ? {} : { 'retry-after': retryAfter });

describe('limited', () => {
  it("waits a 429's Retry-After and sends the request again", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await limited(
      UNLIMITED,
      async () => {
        calls++;
        if (calls < 3) throw tooMany(calls === 1 ? '2' : undefined);
        return 'ok';
      },
      async (ms) => waits.push(ms),
    );
    assert.equal(result, 'ok');
    assert.deepEqual(waits, [2000, 1000], 'Retry-After: 2, then none given (1 s)');
  });

  it('gives up after a bounded number of 429s, returning the error; other errors at once', async () => {
    let calls = 0;
    await assert.rejects(
      limited(UNLIMITED, async () => {
        calls++;
        throw tooMany('1');
      }, async () => undefined),
      (err: unknown) => err instanceof ApiException && err.code === 429,
    );
    assert.equal(calls, MAX_TOO_MANY_REQUESTS_RETRIES + 1);
    calls = 0;
    await assert.rejects(limited(UNLIMITED, async () => {
      calls++;
      throw new ApiException(500, 'boom', '', {});
    }, async () => undefined));
    assert.equal(calls, 1);
    assert.equal(retryAfterSeconds(tooMany('3600')), 60, 'Retry-After is capped');
  });
});
