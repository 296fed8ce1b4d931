import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStoreError } from '../store-error.ts';
import { mergeResults, validatePageQuery, validateRunInput } from './run-validation.ts';

describe('mergeResults', () => {
  test('merges updates of one node as if applied in order, in first-seen order', () => {
    assert.deepEqual(
      mergeResults(1, [
        { node: 'b', status: 'pending', written: true, detail: { attempts: 1 }, observed: { v: 1 } },
        { node: 'a', status: 'success' },
        { node: 'b', status: 'failure', written: false, observed: null },
      ]),
      [
        { node: 'b', status: 'failure', written: true, detail: '{"attempts":1}', observed: null },
        { node: 'a', status: 'success', written: false, detail: undefined, observed: undefined },
      ],
    );
  });

  test('refuses names that cannot be targets, unknown statuses and non-JSON values', () => {
    const refused = (fn: () => unknown, message: RegExp) => assert.throws(fn, (e: unknown) => isStoreError(e, 'InvalidArgument') && message.test(e.message));
    refused(() => mergeResults(3, [{ node: 'x'.repeat(254), status: 'success' }]), /^run 3 has no target node "x{254}"$/);
    refused(
      () => mergeResults(3, [{ node: 'a', status: 'done' as 'success' }]),
      /invalid node status "done": must be one of queued, pending, success, failure/,
    );
    refused(() => mergeResults(3, [{ node: 'a', status: 'success', written: 1 as unknown as boolean }]), /written of node a must be a boolean/);
    refused(() => mergeResults(3, [{ node: 'a', status: 'success', observed: 10n }]), /observed state of node a is not JSON-serialisable/);
    refused(() => mergeResults(3, [{ node: 'a', status: 'success', detail: (() => 1) as unknown as null }]), /detail of node a is not JSON-serialisable$/);
  });
});

describe('validatePageQuery', () => {
  test('defaults offset to 0 and dedupes statuses', () => {
    assert.deepEqual(validatePageQuery({ limit: 10 }), { statuses: undefined, afterSeq: undefined, offset: 0, limit: 10 });
    assert.deepEqual(validatePageQuery({ limit: 1, status: ['failure', 'failure'], afterSeq: -1 }), {
      statuses: ['failure'],
      afterSeq: -1,
      offset: 0,
      limit: 1,
    });
    assert.deepEqual(validatePageQuery({ limit: 5000, status: 'queued', offset: 3 }).statuses, ['queued']);
  });
});

describe('validateRunInput', () => {
  test('accepts the longest names and a full set of fields', () => {
    validateRunInput({ key: 'k', workflowId: 'w', revision: 1, dryRun: false, retryOf: 2, targets: ['a'.repeat(253), 'b'] });
  });
});
