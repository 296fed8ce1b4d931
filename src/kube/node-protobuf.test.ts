import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeNodeList, decodeStatus, isProtobuf } from './node-protobuf.ts';

describe('Kubernetes protobuf answers', () => {
  it('knows the protobuf media type, with or without parameters', () => {
    assert.ok(isProtobuf('application/vnd.kubernetes.protobuf'));
    assert.ok(isProtobuf('Application/Vnd.Kubernetes.Protobuf; charset=binary'));
    assert.ok(!isProtobuf('application/json'));
    assert.ok(!isProtobuf(undefined));
  });

  it('refuses bytes without the magic number, or truncated after it', () => {
    assert.throws(() => decodeNodeList(Buffer.from('{"items":[]}')), /no magic number/);
    assert.throws(() => decodeStatus(Buffer.from([0x6b, 0x38])), /no magic number/);
    // Envelope field 2 (raw) claims 100 bytes and has none.
    assert.throws(() => decodeNodeList(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 100])));
  });

  it('reads an empty list and a status from minimal envelopes', () => {
    assert.deepEqual(decodeNodeList(Buffer.from([0x6b, 0x38, 0x73, 0x00])), { items: [], continue: '', resourceVersion: '' });
    // raw = Status{message(3): "no", code(6): 403}
    const status = [0x1a, 2, 0x6e, 0x6f, 0x30, 0x93, 0x03];
    const decoded = decodeStatus(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, status.length, ...status]));
    assert.equal(decoded.message, 'no');
    assert.equal(decoded.code, 403);
  });

  it('refuses a compressed envelope it cannot read', () => {
    const encoding = Buffer.from('gzip');
    assert.throws(() => decodeNodeList(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x1a, encoding.length, ...encoding])), /unsupported encoding: gzip/);
  });
});
