import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, RetryState, TerminatedFailure } from '@temporalio/common';
import { applicationFailureOf, clientFailure, failureSummary, isUnreachable } from './failure.ts';

const failed = (cause?: Error) => new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE);
const activity = (cause?: Error) => new ActivityFailure('Activity task failed', 'detectDrift', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', cause);
const child = (cause?: Error) =>
  new ChildWorkflowFailure('default', { workflowId: 'w/n1', runId: 'r' }, 'relabelNode', RetryState.NON_RETRYABLE_FAILURE, cause);
const errors = [
  { source: 'site.yaml', line: 3, message: 'bad' },
  { source: 'site.yaml', line: 9, message: 'worse' },
  { source: 'policy.yaml', line: 1, message: 'worst' },
];
const grpc = (code: number) => Object.assign(new Error(`${code} UNAVAILABLE: connection refused`), { code, details: 'connection refused', metadata: {} });

describe('client failure helper', () => {
  it("keeps a workflow's DocumentValidationFailed with every listed error and the full count", () => {
    const app = ApplicationFailure.create({
      type: 'DocumentValidationFailed',
      message: 'revision 2: 3 document error(s)',
      nonRetryable: true,
      details: [{ revision: 2, errorCount: 3, errors }],
    });
    assert.deepEqual(clientFailure(failed(app)), {
      type: 'DocumentValidationFailed',
      message: 'revision 2: 3 document error(s)',
      details: errors,
      problemCount: 3,
    });
    // Still found when the workflow let the activity failure through, under a child too.
    assert.deepEqual(clientFailure(failed(child(activity(app))))?.details, errors);
  });

  it('keeps other details as they are, and leaves missing or empty details out', () => {
    const detail = { node: 'n1', status: 403 };
    assert.deepEqual(clientFailure(failed(ApplicationFailure.create({ type: 'Forbidden', message: 'no', nonRetryable: true, details: [detail] }))), {
      type: 'Forbidden',
      message: 'no',
      details: [detail],
    });
    assert.deepEqual(clientFailure(failed(ApplicationFailure.nonRetryable('none yet', 'NoCommittedRevision'))), {
      type: 'NoCommittedRevision',
      message: 'none yet',
    });
    const update = new WorkflowUpdateFailedError(
      'Workflow Update failed',
      ApplicationFailure.create({ type: 'NotRunning', message: 'all started', details: [] }),
    );
    assert.deepEqual(clientFailure(update), { type: 'NotRunning', message: 'all started' });
  });

  it('is undefined for a type outside the vocabulary and for non-Application failures', () => {
    assert.equal(clientFailure(failed(ApplicationFailure.create({ type: 'TypeError', message: 'x' }))), undefined);
    assert.equal(clientFailure(failed(new TerminatedFailure('terminated by admin'))), undefined);
    assert.equal(clientFailure(failed()), undefined);
    assert.equal(clientFailure(new Error('plain')), undefined);
  });

  it('maps an unreachable server (gRPC UNAVAILABLE, bare or wrapped) to Unavailable', () => {
    assert.equal(clientFailure(grpc(14))?.type, 'Unavailable');
    assert.equal(isUnreachable(Object.assign(new Error('service error'), { cause: grpc(14) })), true);
    assert.equal(isUnreachable(grpc(5)), false);
  });

  it('summarises any failure: a type outside the vocabulary as it is, others as Error with the innermost message', () => {
    assert.deepEqual(failureSummary(failed(ApplicationFailure.create({ type: 'TypeError', message: 'x' }))), { type: 'TypeError', message: 'x' });
    assert.deepEqual(failureSummary(failed(ApplicationFailure.create({ message: 'untyped' }))), { type: 'Error', message: 'untyped' });
    assert.deepEqual(failureSummary(failed(new TerminatedFailure('terminated by admin'))), { type: 'Error', message: 'terminated by admin' });
    assert.deepEqual(failureSummary(new Error('not found')), { type: 'Error', message: 'not found' });
    assert.equal(applicationFailureOf(failed(activity())), undefined);
  });
});
