import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TARGETS, normalizeTargets } from './targets.ts';

describe('normalizeTargets', () => {
  const cases: [string, unknown, ReturnType<typeof normalizeTargets>][] = [
    ['list', ['a', 'b'], { ok: true, targets: ['a', 'b'] }],
    ['comma string', 'a, b ,c', { ok: true, targets: ['a', 'b', 'c'] }],
    ['single string', 'a', { ok: true, targets: ['a'] }],
    ['missing', undefined, { ok: false, message: 'target nodes are missing: give at least one node name' }],
    ['empty list', [], { ok: false, message: 'target nodes are empty: give at least one node name' }],
    ['empty string', '', { ok: false, message: 'target nodes are empty: give at least one node name' }],
    ['non-string item', ['a', 3], { ok: false, message: 'target node #2 is not a string (number)' }],
    ['null item', [null], { ok: false, message: 'target node #1 is not a string (null)' }],
    ['empty item', 'a,,b', { ok: false, message: 'target node #2 is empty' }],
    ['duplicate', ['a', 'b', 'a'], { ok: false, message: 'target node a is listed more than once' }],
    ['object', { a: 1 }, { ok: false, message: 'target nodes must be a list of node names or a comma-separated string, not object' }],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(normalizeTargets(input), expected));
  }
});

describe('normalizeTargets bounds', () => {
  const names = (n: number) => Array.from({ length: n }, (_, i) => `node-${i}`);

  it(`takes exactly ${MAX_TARGETS} names and refuses one more`, () => {
    const at = normalizeTargets(names(MAX_TARGETS));
    assert.ok(at.ok && at.targets.length === MAX_TARGETS);
    assert.deepEqual(normalizeTargets(names(MAX_TARGETS + 1)), {
      ok: false,
      message: `too many target nodes: ${MAX_TARGETS + 1} given, a run takes at most ${MAX_TARGETS}; split the site into several runs (by rack or filter)`,
    });
  });

  it('refuses a name Kubernetes would refuse, echoing at most 320 characters of it', () => {
    const refused = normalizeTargets(['ok-1', 'Not_A_Node']);
    assert.ok(!refused.ok);
    assert.match(refused.message, /^target node #2 "Not_A_Node" is not a node name: a lowercase RFC 1123 subdomain/);
    const huge = normalizeTargets(['x'.repeat(1_000_000)]);
    assert.ok(!huge.ok);
    assert.match(huge.message, /^target node #1 "x{320}…" \(1000000 characters\) is not a node name: must be no more than 253 bytes/);
    assert.ok(huge.message.length < 1000, `${huge.message.length} characters`);
  });
});
