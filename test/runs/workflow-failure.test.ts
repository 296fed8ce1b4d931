import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { applicationCause, ensureRelabelFailure, failureInfo, innermostFailure, rejectionOf } from '../../src/workflows/failure.ts';

const activity = (cause?: Error) => new ActivityFailure('Activity task failed', 'applyNodePlan', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
const child = (cause?: Error) =>
  new ChildWorkflowFailure('default', { workflowId: 'w/n1', runId: 'r' }, 'relabelNode', RetryState.NON_RETRYABLE_FAILURE, cause);
const errors = [
  { source: 'site.yaml', line: 3, message: 'bad' },
  { source: 'site.yaml', line: 9, message: 'worse' },
];
const rejected = () =>
  ApplicationFailure.create({
    type: 'DocumentValidationFailed',
    message: 'revision 2: 2 document error(s)',
    nonRetryable: true,
    details: [{ revision: 2, errorCount: 2, errors }],
  });

describe('workflow failure helpers', () => {
  it('finds the ApplicationFailure under nested child and activity wrappers, with its details', () => {
    const app = rejected();
    assert.equal(innermostFailure(child(activity(app))), app);
    assert.equal(applicationCause(child(activity(app))), app);
    assert.deepEqual(failureInfo(child(activity(app))), {
      type: 'DocumentValidationFailed',
      message: 'revision 2: 2 document error(s)',
      details: [{ revision: 2, errorCount: 2, errors }],
    });
  });

  it('stops at the first failure that is not a wrapper', () => {
    const inner = ApplicationFailure.nonRetryable('inner', 'NodeNotFound');
    const outer = ApplicationFailure.create({ type: 'Forbidden', message: 'outer', nonRetryable: true, cause: inner });
    assert.equal(applicationCause(activity(outer))?.type, 'Forbidden');
  });

  it('reports a non-Application failure by its name, and a wrapper without cause as itself', () => {
    const timeout = new TimeoutFailure('activity timed out', undefined, TimeoutType.START_TO_CLOSE);
    assert.equal(applicationCause(activity(timeout)), undefined);
    assert.deepEqual(failureInfo(child(activity(timeout))), { type: 'TimeoutFailure', message: 'activity timed out' });
    assert.deepEqual(failureInfo(activity()), { type: 'ActivityFailure', message: 'Activity task failed' });
    assert.deepEqual(failureInfo('boom'), { type: 'Error', message: 'boom' });
  });

  it('leaves details out when there are none, and a type-less failure as Error', () => {
    assert.deepEqual(failureInfo(activity(ApplicationFailure.create({ message: 'plain', nonRetryable: true }))), { type: 'Error', message: 'plain' });
    assert.deepEqual(failureInfo(activity(ApplicationFailure.create({ type: 'Invalid', message: 'x', details: [] }))), { type: 'Invalid', message: 'x' });
  });

  it('turns anything into a non-retryable ApplicationFailure with relabel type, keeping details', () => {
    const ensured = ensureRelabelFailure(activity(rejected()));
    assert.equal(ensured.type, 'DocumentValidationFailed');
    assert.equal(ensured.nonRetryable, true);
    assert.deepEqual(ensured.details, [{ revision: 2, errorCount: 2, errors }]);
    const timeout = ensureRelabelFailure(activity(new TimeoutFailure('timed out', undefined, TimeoutType.HEARTBEAT)));
    assert.deepEqual([timeout.type, timeout.message, timeout.nonRetryable], ['InternalError', 'TimeoutFailure: timed out', true]);
    const plain = ensureRelabelFailure(new Error('oops'));
    assert.deepEqual([plain.type, plain.message], ['InternalError', 'Error: oops']);
  });

  it('rejects only for a non-retryable ApplicationFailure unless asked for any', () => {
    assert.equal(rejectionOf(activity(rejected()))?.type, 'DocumentValidationFailed');
    const retryable = activity(ApplicationFailure.retryable('try again', 'Conflict'));
    assert.equal(rejectionOf(retryable), undefined);
    assert.equal(rejectionOf(retryable, { anyApplicationFailure: true })?.nonRetryable, true);
    assert.equal(rejectionOf(activity(new TimeoutFailure('t', undefined, TimeoutType.START_TO_CLOSE)), { anyApplicationFailure: true }), undefined);
  });
});
