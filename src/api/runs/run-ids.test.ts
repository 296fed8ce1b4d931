import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeRunId, encodeRunId } from './run-ids.ts';

const RUN = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

describe('action and task ids', () => {
  it('round-trip every update run, URL-safe', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'binary' }), fc.uuid(), (site, runId) => {
        const key = { workflowId: `update-labels/${site}`, runId };
        const id = encodeRunId(key);
        assert.match(id, /^[A-Za-z0-9_-]+$/);
        assert.deepEqual(decodeRunId(id), key);
      }),
    );
  });

  it('is base64url of workflowId|runId', () => {
    const id = encodeRunId({ workflowId: 'update-labels/atl-lab1', runId: RUN });
    assert.equal(Buffer.from(id, 'base64url').toString(), `update-labels/atl-lab1|${RUN}`);
  });

  it('refuses ids that do not name an update run', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    for (const id of [
      '',
      'abc',
      'a+b/c=',
      b64(`relabel-node/x|${RUN}`),
      b64(`update-labels/|${RUN}`),
      b64('update-labels/site|not-a-uuid'),
      b64(`update-labels/site${RUN}`),
      `${encodeRunId({ workflowId: 'update-labels/s', runId: RUN })}A`,
    ]) {
      assert.equal(decodeRunId(id), null, id);
    }
  });
});
