import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeNodeList, decodeStatus, isProtobuf, listMetaPrefix } from './node-protobuf.ts';

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

  it("reads a page's list metadata from its first bytes, once they hold it", () => {
    const field = (n: number, bytes: number[]) => [n * 8 + 2, bytes.length, ...bytes];
    const text = (t: string) => [...Buffer.from(t)];
    // ListMeta{resourceVersion(2): "42", continue(3): "next"}, then one item (field 2) the prefix need not hold.
    const meta = [...field(2, text('42')), ...field(3, text('next'))];
    const raw = [...field(1, meta), ...field(2, text('an item'))];
    const answer = [0x6b, 0x38, 0x73, 0x00, ...field(1, text('v1 NodeList')), ...field(2, raw)];
    const metaEnd = answer.length - field(2, text('an item')).length;
    for (let n = 0; n <= answer.length; n++) {
      const read = listMetaPrefix(Buffer.from(answer.slice(0, n)));
      if (n < metaEnd) assert.equal(read, undefined, `${n} bytes do not hold it`);
      else assert.deepEqual(read, { continue: 'next', resourceVersion: '42' }, `${n} bytes hold it`);
    }
    // Without the envelope's type, the raw message comes first: read the same.
    assert.deepEqual(listMetaPrefix(Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(2, raw)])), { continue: 'next', resourceVersion: '42' });
    // Laid out otherwise (items first, or not an answer at all): it cannot tell, and says so.
    assert.equal(listMetaPrefix(Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(2, [...field(2, text('an item')), ...field(1, meta)])])), null);
    assert.equal(listMetaPrefix(Buffer.from('{"metadata":{}}')), null);
    // Metadata claiming more bytes than its message holds is not read.
    assert.equal(listMetaPrefix(Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(2, [0x0a, 50, ...meta])])), null);
  });

  it('refuses a compressed envelope it cannot read', () => {
    const encoding = Buffer.from('gzip');
    assert.throws(() => decodeNodeList(Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x1a, encoding.length, ...encoding])), /unsupported encoding: gzip/);
  });
});
