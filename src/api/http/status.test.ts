import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FailureType } from '../../core/plan/failure-types.ts';
import { RelabelError } from '../../facade/relabel-error.ts';
import { StoreErrorCode } from '../../store/store-error.ts';
import { ApiError, failureBody, HTTP_STATUS_OF_FAILURE, httpStatusOf, toApiError } from './status.ts';
import { StatusBody } from './response-schemas.ts';

describe('failure types as HTTP statuses', () => {
  it('maps every failure type, store codes included', () => {
    for (const type of [...Object.values(FailureType), ...Object.values(StoreErrorCode)]) {
      assert.ok(Object.hasOwn(HTTP_STATUS_OF_FAILURE, type), `${type} is in the table`);
    }
    assert.deepEqual(httpStatusOf('SomethingNew'), { code: 500, retry: false });
    assert.deepEqual(httpStatusOf(FailureType.RunInProgress), { code: 409, retry: true });
    assert.deepEqual(httpStatusOf(FailureType.Unavailable), { code: 503, retry: true });
  });

  it('lists every document error of a validation failure', () => {
    const errors = [1, 2].map((line) => ({ source: 'site/a.yaml', document: { index: 1 }, path: 'data', line, column: 3, message: `bad ${line}` }));
    const body = StatusBody.parse(
      failureBody(toApiError(new RelabelError(FailureType.DocumentValidationFailed, 'site invalid: 2 document error(s):\n…', errors))),
    );
    assert.equal(body.code, 400);
    assert.equal(body.message, 'site invalid: 2 document error(s)');
    assert.deepEqual(
      body.details.messageList.map((m) => m.message),
      ['site/a.yaml:1:3 document 1 data: bad 1', 'site/a.yaml:2:3 document 1 data: bad 2'],
    );
  });

  it('never leaks the message of an unexpected error', () => {
    const body = failureBody(toApiError(new Error('password=hunter2')));
    assert.equal(body.code, 500);
    assert.ok(!JSON.stringify(body).includes('hunter2'));
  });

  it("maps Fastify's request errors and an unreachable Temporal", () => {
    const fastify = (code: string, statusCode: number) => Object.assign(new Error(code), { code, statusCode });
    assert.equal(failureBody(toApiError(fastify('FST_ERR_CTP_BODY_TOO_LARGE', 413))).code, 413);
    assert.equal(failureBody(toApiError(fastify('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415))).code, 415);
    assert.equal(failureBody(toApiError(Object.assign(new SyntaxError('Unexpected token'), { statusCode: 400 }))).code, 400);
    const grpc = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused', metadata: {} });
    assert.equal(failureBody(toApiError(grpc)).code, 503);
    assert.equal(failureBody(new ApiError(FailureType.MethodNotAllowed, 'no')).code, 405);
  });
});
