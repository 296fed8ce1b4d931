import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeTargets } from './targets.ts';

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
