import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { selectorKeys, selectorMatches, selectorProblems, selectorString, type LabelSelector } from './label-selector.ts';
import { labelsArb, requirementArb, selectorArb } from '../../../test/kit/plan/selector-arbitraries.ts';

// An evaluator of the API server's string syntax, written apart from the
// matcher: each comma-separated term on its own (set members never hold a
// comma-free split problem, since values here have none).
function evaluateString(selector: string, labels: Record<string, string>): boolean {
  const terms = selector.match(/[^,()]+(\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const term = raw.trim();
    let m = /^(\S+) (in|notin) \((.*)\)$/.exec(term);
    if (m) {
      const [, key = '', op, list = ''] = m;
      const values = list.split(',');
      const has = key in labels;
      return op === 'in' ? has && values.includes(labels[key] ?? '') : !has || !values.includes(labels[key] ?? '');
    }
    m = /^(\S+)=(.*)$/.exec(term);
    if (m) return (m[1] ?? '') in labels && labels[m[1] ?? ''] === m[2];
    if (term.startsWith('!')) return !(term.slice(1) in labels);
    return term in labels;
  });
}

describe('selectorMatches', () => {
  const node = { 'karpenter.sh/nodepool': 'general', zone: 'a' };
  const cases: [string, LabelSelector, boolean][] = [
    ['matchLabels equal', { matchLabels: { 'karpenter.sh/nodepool': 'general' } }, true],
    ['matchLabels other value', { matchLabels: { 'karpenter.sh/nodepool': 'gpu' } }, false],
    ['matchLabels missing key', { matchLabels: { tier: 'x' } }, false],
    ['In', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, true],
    ['In, key missing', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] }, false],
    ['NotIn, value listed', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, false],
    ['NotIn, key missing matches', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, true],
    ['DoesNotExist, key missing', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, true],
    ['DoesNotExist, key present', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, false],
    ['all must hold', { matchLabels: { zone: 'a' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, false],
  ];
  for (const [name, selector, expected] of cases) it(name, () => assert.equal(selectorMatches(selector, node), expected));

  it('a key inherited from Object.prototype is not a label', () => {
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}), false);
  });

  it('agrees with the string syntax it prints, evaluated separately', () => {
    fc.assert(
      fc.property(selectorArb, labelsArb, (selector, labels) => selectorMatches(selector, labels) === evaluateString(selectorString(selector), labels)),
    );
  });

  it('is the conjunction of its requirements', () => {
    fc.assert(
      fc.property(fc.array(requirementArb, { minLength: 1, maxLength: 4 }), labelsArb, (expressions, labels) => {
        const each = expressions.every((r) => selectorMatches({ matchExpressions: [r] }, labels));
        return selectorMatches({ matchExpressions: expressions }, labels) === each;
      }),
    );
  });

  it('NotIn is the negation of In, DoesNotExist of Exists', () => {
    fc.assert(
      fc.property(requirementArb, labelsArb, (r, labels) => {
        const flip = { In: 'NotIn', NotIn: 'In', Exists: 'DoesNotExist', DoesNotExist: 'Exists' } as const;
        const flipped = flip[r.operator];
        const other = { ...r, operator: flipped };
        return selectorMatches({ matchExpressions: [r] }, labels) !== selectorMatches({ matchExpressions: [other] }, labels);
      }),
    );
  });
});

describe('selectorString and selectorKeys', () => {
  it('prints each requirement in the API server syntax', () => {
    const selector: LabelSelector = {
      matchLabels: { 'karpenter.sh/nodepool': 'gpu' },
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['b', 'a', 'b'] },
        { key: 'tier', operator: 'NotIn', values: ['x'] },
        { key: 'gpu', operator: 'Exists' },
        { key: 'spot', operator: 'DoesNotExist' },
      ],
    };
    assert.equal(selectorString(selector), 'karpenter.sh/nodepool=gpu,zone in (a,b),tier notin (x),gpu,!spot');
    assert.deepEqual(selectorKeys(selector), ['gpu', 'karpenter.sh/nodepool', 'spot', 'tier', 'zone']);
  });
});

describe('selectorProblems', () => {
  it('accepts every generated selector', () => {
    fc.assert(fc.property(selectorArb, (selector) => selectorProblems(selector).length === 0));
  });

  const cases: [string, unknown, [string, string][]][] = [
    ['not a mapping', 'x', [['', 'selector must be a mapping with matchLabels and/or matchExpressions']]],
    ['empty', {}, [['', 'a selector needs at least one requirement (matchLabels or matchExpressions): an empty one would match every node']]],
    ['unknown field', { matchLabel: { a: 'b' } }, [['matchLabel', 'unknown field "matchLabel" (allowed: matchLabels, matchExpressions)']]],
    [
      'unknown operator',
      { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      [['matchExpressions.0.operator', 'unknown operator "Gt" (one of In, NotIn, Exists, DoesNotExist)']],
    ],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, [['matchExpressions.0.operator', 'operator In needs at least one value']]],
    [
      'NotIn with an empty list',
      { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] },
      [['matchExpressions.0.values', 'operator NotIn needs at least one value']],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      [['matchExpressions.0.values', 'operator Exists takes no values']],
    ],
    ['a bad key', { matchLabels: { 'a/b/c': 'x' } }, [['matchLabels.a/b/c', 'Invalid value: "a/b/c"']]],
    ['a bad value', { matchExpressions: [{ key: 'a', operator: 'In', values: ['-x'] }] }, [['matchExpressions.0.values.0', 'Invalid value: "-x"']]],
    ['a number value', { matchLabels: { a: 1 } }, [['matchLabels.a', 'selector values must be strings; quote it in YAML']]],
    ['missing key', { matchExpressions: [{ operator: 'Exists' }] }, [['matchExpressions.0.key', 'key is required and must be a string']]],
  ];
  for (const [name, selector, expected] of cases) {
    it(name, () => {
      const found = selectorProblems(selector).map((p) => [p.path.join('.'), p.message]);
      assert.equal(found.length, expected.length, JSON.stringify(found));
      for (const [i, [path, message]] of expected.entries()) {
        assert.equal(found[i]?.[0], path);
        assert.ok(found[i]?.[1]?.startsWith(message), found[i]?.[1]);
      }
    });
  }
});
