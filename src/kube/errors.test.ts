import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { httpStatus, mapNodeError } from './errors.ts';

const answer = (code: number, message = 'm') => new ApiException(code, `HTTP ${code}`, JSON.stringify({ message }), {});

describe('mapNodeError', () => {
  it('makes permanent answers non-retryable failures with a type, and says which credentials or verb failed', () => {
    const cases: [number, string, RegExp][] = [
      [404, 'NodeNotFound', /node n1 not found in the cluster/],
      [401, 'Forbidden', /rejected relabel's credentials \(401\).*kubeconfig/],
      [403, 'Forbidden', /may not patch node n1 \(403: RBAC denies the verb on nodes\): nodes "n1" is forbidden/],
      [422, 'Invalid', /rejected the request to patch node n1/],
      [409, 'Conflict', /changed while relabelling/],
    ];
    for (const [code, type, message] of cases) {
      const mapped = mapNodeError(answer(code, 'nodes "n1" is forbidden'), 'n1', code === 404 ? 'read' : 'patch');
      assert.ok(mapped instanceof ApplicationFailure, String(code));
      assert.equal(mapped.type, type);
      assert.equal(mapped.nonRetryable, true);
      assert.match(mapped.message, message);
    }
  });

  it('leaves 429, 5xx and network errors as they are, for the retry policy', () => {
    for (const err of [answer(429), answer(503), Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })]) {
      assert.equal(mapNodeError(err, 'n1', 'read'), err);
    }
    assert.equal(httpStatus(Object.assign(new Error('x'), { code: 404 })), undefined, 'only an ApiException is an answer of the API server');
  });
});
