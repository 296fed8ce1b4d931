import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { meterNodeWrites, patchOps, type WriteMeter } from './write-meter.ts';

describe('patchOps', () => {
  it('counts the operations of a JSON Patch and its tests, and none of a merge patch', () => {
    const patch = [
      { op: 'test', path: '/metadata/uid', value: 'u' },
      { op: 'test', path: '/metadata/labels/a', value: null },
      { op: 'add', path: '/metadata/labels/a', value: 'b' },
    ];
    assert.deepEqual(patchOps(JSON.stringify(patch)), { ops: 3, testOps: 2, byKind: { 'test uid': 1, 'test labels': 1, 'add labels': 1 } });
    const taints = [
      { op: 'test', path: '/spec/taints/0', value: {} },
      { op: 'remove', path: '/spec/taints/0' },
    ];
    assert.deepEqual(patchOps(JSON.stringify(taints)).byKind, { 'test taints': 1, 'remove taints': 1 });
    assert.deepEqual(patchOps(JSON.stringify({ metadata: { labels: { a: 'b' } } })), { ops: 0, testOps: 0, byKind: {} });
  });
});

describe('meterNodeWrites', () => {
  it("counts a process's Node PATCH and PUT requests and their bodies, and nothing else", async () => {
    const server = createServer((req, res) => req.resume().on('end', () => res.end('{}')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const meter: WriteMeter = { requests: 0, bodyBytes: 0, ops: 0, testOps: 0, byKind: {} };
      meterNodeWrites(meter);
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const patch = JSON.stringify([
        { op: 'test', path: '/metadata/uid', value: 'u' },
        { op: 'add', path: '/metadata/labels/a', value: 'b' },
      ]);
      const send = async (method: string, path: string, body?: string) =>
        void (await (await fetch(`${base}${path}`, { method, ...(body ? { body } : {}) })).text());
      await send('PATCH', '/api/v1/nodes/n1?fieldManager=relabel', patch);
      await send('PUT', '/api/v1/nodes/n2', '{"metadata":{}}');
      await send('PATCH', '/api/v1/nodes/n1/status', patch);
      await send('POST', '/api/v1/namespaces/default/events', patch);
      await send('GET', '/api/v1/nodes/n1');
      assert.deepEqual(meter, {
        requests: 2,
        bodyBytes: Buffer.byteLength(patch) + 15,
        ops: 2,
        testOps: 1,
        byKind: { 'test uid': 1, 'add labels': 1 },
      });
    } finally {
      server.close();
    }
  });
});
