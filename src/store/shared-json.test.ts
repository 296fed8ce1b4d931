import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseShared, stringifyShared } from './shared-json.ts';

describe('shared JSON', () => {
  it('reads back what JSON would, for any JSON value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())), (value) => {
        assert.deepEqual(parseShared(stringifyShared(value)), JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves out undefined members and nulls undefined elements, keeps "__proto__" as a member', () => {
    const value = { a: undefined, b: [undefined, 1, () => 1, Number.NaN], ['__proto__']: { x: 1 }, c: { d: [] } };
    const back = parseShared(stringifyShared(value)) as Record<string, unknown>;
    assert.deepEqual(back, JSON.parse(JSON.stringify(value)));
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.deepEqual(Object.keys(back), ['b', '__proto__', 'c']);
  });

  it('writes a repeated value once and reads it back as one shared object', () => {
    const labels = () => ({ rack: 'rack-1', 'host-profile': 'compute', site: 'site-1', tags: ['baremetal', 'compute'] });
    const nodes = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`n${i}`, { name: `n${i}`, labels: labels() }]));
    const text = stringifyShared({ nodes });
    assert.ok(text.length < JSON.stringify({ nodes }).length / 2, `${text.length} bytes`);
    const back = parseShared(text) as { nodes: Record<string, { labels: object }> };
    assert.ok(back.nodes.n0?.labels);
    assert.equal(back.nodes.n0.labels, back.nodes.n999?.labels);
    assert.deepEqual(back, { nodes });
  });

  it('refuses text that is not a table, naming the entry', () => {
    assert.throws(() => parseShared('{}'), /not a shared JSON table/);
    assert.throws(() => parseShared('[["o","a",[0]]]'), /entry 0 names no earlier entry/);
    assert.throws(() => parseShared('[["a"],["o","a",[1]]]'), /entry 1 names no earlier entry/);
    assert.throws(() => parseShared('[["x"]]'), /entry 0 is neither/);
    assert.throws(() => parseShared('[["o",1,2]]'), /entry 0 has a key/);
    assert.throws(() => parseShared('[1]'), /entry 0 is not an array/);
  });
});
