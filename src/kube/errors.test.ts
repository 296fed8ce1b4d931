import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { forbiddenMessage, httpStatus, isStaleWrite, kubeStatus, mapNodeError, MAX_API_MESSAGE } from './errors.ts';

const answer = (code: number, message = 'm') => new ApiException(code, `HTTP ${code}`, JSON.stringify({ message }), {});

/** A 403 `Status` body as kube-apiserver's RBAC authorizer writes it. */
const denied = (verb: string, name: string | undefined, user: string) =>
  new ApiException(
    403,
    'Unknown API Status Code!',
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `nodes${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "nodes" in API group "" at the cluster scope`,
      reason: 'Forbidden',
      details: { ...(name ? { name } : {}), kind: 'nodes' },
      code: 403,
    }),
    {},
  );

function mapped(err: unknown, node: string, action: 'read' | 'list' | 'patch'): ApplicationFailure {
  const failure = mapNodeError(err, node, action);
  assert.ok(failure instanceof ApplicationFailure);
  assert.equal(failure.nonRetryable, true);
  return failure;
}

describe('mapNodeError', () => {
  it('makes permanent answers non-retryable failures with a type', () => {
    const cases: [number, string, RegExp][] = [
      [404, 'NodeNotFound', /^node n1 not found in the cluster/],
      [422, 'Invalid', /^the API server rejected the request to patch node n1: bad/],
      [409, 'Conflict', /^node n1 changed while relabelling/],
    ];
    for (const [code, type, message] of cases) {
      const failure = mapped(answer(code, 'bad'), 'n1', code === 404 ? 'read' : 'patch');
      assert.equal(failure.type, type, String(code));
      assert.match(failure.message, message);
    }
  });

  it('says a 401 is rejected credentials, with its own type, naming what was asked', () => {
    // The client gives a 401 without a body.
    const unauthorized = new ApiException(401, 'Unauthorized', undefined, {});
    const read = mapped(unauthorized, 'n1', 'read');
    assert.equal(read.type, 'Unauthorized');
    assert.equal(
      read.message,
      "the Kubernetes API server rejected relabel's credentials (401) reading node n1: check the token or client certificate of the kubeconfig",
    );
    assert.match(mapped(unauthorized, 'n1', 'patch').message, /\(401\) patching node n1:/);
    assert.match(mapped(unauthorized, '(all)', 'list').message, /\(401\) listing nodes:/);
  });

  it('says which verb on which resource a 403 denied, and for whom, from the Status body', () => {
    const patch = mapped(denied('patch', 'n1', 'system:serviceaccount:default:reader'), 'n1', 'patch');
    assert.equal(patch.type, 'Forbidden');
    assert.equal(patch.message, 'patch on nodes "n1" denied for user "system:serviceaccount:default:reader" (403); relabel needs get, list and patch on nodes');
    const list = mapped(denied('list', undefined, 'nobody'), '(all)', 'list');
    assert.equal(list.message, 'list on nodes denied for user "nobody" (403); relabel needs get, list and patch on nodes');
    // A body that says nothing usable: what relabel asked for, and the body's text.
    assert.equal(
      forbiddenMessage(kubeStatus(answer(403, 'denied by policy X')), 'read', 'n2'),
      'get on nodes "n2" denied (403): denied by policy X; relabel needs get, list and patch on nodes',
    );
    // A webhook authorizer's reason after the standard sentence is kept.
    const webhook = new ApiException(
      403,
      'x',
      JSON.stringify({ message: 'nodes "n1" is forbidden: User "u" cannot patch resource "nodes" in API group "" at the cluster scope: change freeze' }),
      {},
    );
    assert.match(mapped(webhook, 'n1', 'patch').message, /^patch on nodes "n1" denied for user "u" \(403\): change freeze;/);
  });

  it('quotes at most a bounded part of the server answer', () => {
    const huge = 'x'.repeat(100_000);
    for (const code of [403, 422, 409]) {
      const failure = mapped(answer(code, huge), 'n1', 'patch');
      assert.ok(failure.message.length < MAX_API_MESSAGE + 200, `${code}: ${failure.message.length}`);
    }
    const notJson = new ApiException(403, 'x', `<html>${huge}</html>`, {});
    assert.ok(mapped(notJson, 'n1', 'patch').message.length < MAX_API_MESSAGE + 200);
  });

  it('leaves 429, 5xx and network errors as they are, for the retry policy', () => {
    for (const err of [answer(429), answer(503), Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })]) {
      assert.equal(mapNodeError(err, 'n1', 'read'), err);
    }
    assert.equal(httpStatus(Object.assign(new Error('x'), { code: 404 })), undefined, 'only an ApiException is an answer of the API server');
  });
});

describe('isStaleWrite', () => {
  const answer = (code: number, body: unknown) => new ApiException(code, 'x', body, {});
  it('is true for a failed JSON Patch test (422) and a resourceVersion conflict (409), false for other refusals', () => {
    assert.equal(isStaleWrite(answer(422, { message: 'testing value /metadata/labels/a failed: test failed' })), true);
    assert.equal(isStaleWrite(answer(422, '{"message":"test operation does not apply: is missing path: /metadata/labels/a: missing value"}')), true);
    assert.equal(isStaleWrite(answer(409, { message: 'the object has been modified' })), true);
    const notApplied = {
      kind: 'Status',
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    };
    assert.equal(isStaleWrite(answer(422, JSON.stringify(notApplied))), true, "the API server's answer to a JSON Patch that does not apply");
    assert.equal(isStaleWrite(answer(422, { ...notApplied, details: { causes: [{ field: 'metadata.labels', message: 'Invalid value' }] } })), false);
    assert.equal(isStaleWrite(answer(422, { message: 'Node "n1" is invalid: metadata.labels: Invalid value: "bad key"' })), false);
    assert.equal(isStaleWrite(answer(400, { message: 'testing value /x failed' })), false);
    assert.equal(isStaleWrite(new Error('testing value /x failed')), false);
  });

  it('is true for a taint relabel appends that someone else added meanwhile (the server refuses the duplicate), false for any other duplicate', () => {
    const duplicate = (field: string) => ({
      message: 'Node "n1" is invalid: metadata.taints[2]: Duplicate value',
      reason: 'Invalid',
      details: { causes: [{ reason: 'FieldValueDuplicate', field, message: 'Duplicate value: taints must be unique by key and effect pair' }] },
      code: 422,
    });
    assert.equal(isStaleWrite(answer(422, duplicate('metadata.taints[2]'))), true);
    assert.equal(isStaleWrite(answer(422, duplicate('spec.taints[0]'))), true);
    assert.equal(isStaleWrite(answer(422, duplicate('metadata.labels'))), false);
    const mixed = duplicate('metadata.taints[2]');
    mixed.details.causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: 'Invalid value' });
    assert.equal(isStaleWrite(answer(422, mixed)), false, 'a duplicate beside a real refusal is a real refusal');
  });
});
