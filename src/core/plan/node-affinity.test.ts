import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { matchesLabelSelector, matchesNodeSelector, matchesRequiredAffinity, type NodeSelectorTerm, type SelectorRequirement } from './node-affinity.ts';

const node = (labels: Record<string, string>, name = 'n1') => ({ name, labels });
const term = (...matchExpressions: SelectorRequirement[]): NodeSelectorTerm => ({ matchExpressions });
const affinity = (...nodeSelectorTerms: NodeSelectorTerm[]) => ({ nodeSelectorTerms });
const req = (key: string, operator: string, ...values: string[]): SelectorRequirement => ({ key, operator, values });

describe('matchesRequiredAffinity (Kubernetes nodeaffinity semantics)', () => {
  const cases: [string, SelectorRequirement, Record<string, string>, boolean][] = [
    ['In matches a listed value', req('zone', 'In', 'a', 'b'), { zone: 'b' }, true],
    ['In fails on an unlisted value', req('zone', 'In', 'a'), { zone: 'c' }, false],
    ['In fails on an absent key', req('zone', 'In', 'a'), {}, false],
    ['NotIn fails on a listed value', req('zone', 'NotIn', 'a'), { zone: 'a' }, false],
    ['NotIn matches an absent key', req('zone', 'NotIn', 'a'), {}, true],
    ['Exists matches an empty value', req('gpu', 'Exists'), { gpu: '' }, true],
    ['DoesNotExist fails on a present key', req('gpu', 'DoesNotExist'), { gpu: '' }, false],
    ['Gt compares integers, not text', req('cores', 'Gt', '9'), { cores: '10' }, true],
    ['Lt compares integers', req('cores', 'Lt', '10'), { cores: '9' }, true],
    ['Gt with leading zeros reads decimal', req('cores', 'Gt', '7'), { cores: '010' }, true],
    ['Gt fails on an equal value', req('cores', 'Gt', '10'), { cores: '10' }, false],
    ['Gt fails on a label that is not an integer', req('cores', 'Gt', '1'), { cores: 'many' }, false],
    ['Gt fails on an absent key', req('cores', 'Gt', '1'), {}, false],
    ['Gt on a value beyond int64 fails', req('cores', 'Gt', '1'), { cores: '9223372036854775808' }, false],
    ['Gt at the int64 edge compares exactly', req('cores', 'Gt', '9223372036854775806'), { cores: '9223372036854775807' }, true],
    ['Gt with a bound that is not an integer parses to nothing', req('cores', 'Gt', 'five'), { cores: '10' }, false],
    ['Gt with two values parses to nothing', req('cores', 'Gt', '1', '2'), { cores: '10' }, false],
    ['Gt with a negative bound is refused (not a label value)', req('cores', 'Gt', '-1'), { cores: '10' }, false],
    ['In without values parses to nothing', req('zone', 'In'), { zone: '' }, false],
    ['NotIn without values parses to nothing', req('zone', 'NotIn'), {}, false],
    ['Exists with values parses to nothing', req('gpu', 'Exists', 'x'), { gpu: 'x' }, false],
    ['an unknown operator parses to nothing', req('zone', 'Equals', 'a'), { zone: 'a' }, false],
    ['an invalid key parses to nothing', req('bad key', 'DoesNotExist'), {}, false],
    ['an invalid value parses to nothing', req('zone', 'NotIn', 'a b'), {}, false],
  ];
  for (const [name, requirement, labels, expected] of cases) {
    it(name, () => assert.equal(matchesRequiredAffinity(affinity(term(requirement)), node(labels)), expected));
  }

  it('no affinity matches every node; an affinity without terms matches none', () => {
    assert.equal(matchesRequiredAffinity(undefined, node({})), true);
    assert.equal(matchesRequiredAffinity(affinity(), node({})), false);
  });

  it('a term with no requirements matches nothing, even beside others', () => {
    assert.equal(matchesRequiredAffinity(affinity({}), node({})), false);
    assert.equal(matchesRequiredAffinity(affinity({ matchExpressions: [], matchFields: [] }), node({})), false);
    assert.equal(matchesRequiredAffinity(affinity({}, term(req('a', 'Exists'))), node({ a: '1' })), true);
  });

  it('terms are ORed, and a term that does not parse leaves the others working', () => {
    const a = affinity(term(req('zone', 'In')), term(req('zone', 'In', 'b')));
    assert.equal(matchesRequiredAffinity(a, node({ zone: 'b' })), true);
    assert.equal(matchesRequiredAffinity(a, node({ zone: 'a' })), false);
  });

  it('requirements of a term are ANDed', () => {
    const a = affinity(term(req('zone', 'In', 'a'), req('gpu', 'Exists')));
    assert.equal(matchesRequiredAffinity(a, node({ zone: 'a', gpu: '1' })), true);
    assert.equal(matchesRequiredAffinity(a, node({ zone: 'a' })), false);
  });

  it('matchFields: In/NotIn on metadata.name with exactly one value, ANDed with the expressions', () => {
    const byName = (operator: string, ...values: string[]) => affinity({ matchFields: [{ key: 'metadata.name', operator, values }] });
    assert.equal(matchesRequiredAffinity(byName('In', 'n1'), node({})), true);
    assert.equal(matchesRequiredAffinity(byName('In', 'n2'), node({})), false);
    assert.equal(matchesRequiredAffinity(byName('NotIn', 'n2'), node({})), true);
    assert.equal(matchesRequiredAffinity(byName('In', 'n1', 'n2'), node({})), false);
    assert.equal(matchesRequiredAffinity(byName('Exists'), node({})), false);
    const both = affinity({ matchExpressions: [req('zone', 'In', 'a')], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] });
    assert.equal(matchesRequiredAffinity(both, node({ zone: 'a' })), true);
    assert.equal(matchesRequiredAffinity(both, node({ zone: 'b' })), false);
    assert.equal(matchesRequiredAffinity(both, node({ zone: 'a' }, 'n2')), false);
  });
});

describe('matchesNodeSelector and matchesLabelSelector', () => {
  it('a nodeSelector needs every key with its value; empty matches all', () => {
    assert.equal(matchesNodeSelector({ a: '1', b: '' }, { a: '1', b: '', c: 'x' }), true);
    assert.equal(matchesNodeSelector({ a: '1' }, { a: '2' }), false);
    assert.equal(matchesNodeSelector({ b: '' }, {}), false);
    assert.equal(matchesNodeSelector({}, {}), true);
    assert.equal(matchesNodeSelector(undefined, {}), true);
  });

  it('a PDB selector: null selects nothing, empty selects everything, bad operators nothing', () => {
    assert.equal(matchesLabelSelector(null, { app: 'x' }), false);
    assert.equal(matchesLabelSelector(undefined, {}), false);
    assert.equal(matchesLabelSelector({}, {}), true);
    assert.equal(matchesLabelSelector({ matchLabels: { app: 'x' } }, { app: 'x', tier: 'y' }), true);
    assert.equal(matchesLabelSelector({ matchLabels: { app: 'x' }, matchExpressions: [req('tier', 'NotIn', 'y')] }, { app: 'x', tier: 'y' }), false);
    assert.equal(matchesLabelSelector({ matchExpressions: [req('n', 'Gt', '1')] }, { n: '5' }), false);
    assert.equal(matchesLabelSelector({ matchExpressions: [req('tier', 'DoesNotExist')] }, { app: 'x' }), true);
  });
});

const keyArb = fc.constantFrom('a', 'b', 'example.com/c');
const valueArb = fc.constantFrom('', '1', '2', '10', '007', 'x');
const labelsArb = fc.dictionary(keyArb, valueArb);
const intText = fc.constantFrom('0', '1', '2', '7', '10', '007');
/** Requirements Kubernetes parses. */
const validReqArb: fc.Arbitrary<SelectorRequirement> = fc.oneof(
  fc.record({ key: keyArb, operator: fc.constantFrom('In', 'NotIn'), values: fc.array(valueArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ key: keyArb, operator: fc.constantFrom('Exists', 'DoesNotExist'), values: fc.constant([]) }),
  fc.record({ key: keyArb, operator: fc.constantFrom('Gt', 'Lt'), values: intText.map((v) => [v]) }),
);
/** Any requirement, often one Kubernetes refuses to parse. */
const anyReqArb = fc.oneof(
  validReqArb,
  fc.record({
    key: fc.constantFrom('a', 'bad key'),
    operator: fc.constantFrom('In', 'Gt', 'Exists', 'Foo'),
    values: fc.array(fc.constantFrom('', 'x', '1', '-1'), { maxLength: 2 }),
  }),
);
const fieldArb = fc.record({
  key: fc.constant('metadata.name'),
  operator: fc.constantFrom('In', 'NotIn'),
  values: fc.constantFrom(['n1'], ['n2'], ['n1', 'n2']),
});
const termArb: fc.Arbitrary<NodeSelectorTerm> = fc.record({
  matchExpressions: fc.array(anyReqArb, { maxLength: 3 }),
  matchFields: fc.array(fieldArb, { maxLength: 1 }),
});
const nodeArb = fc.record({ name: fc.constantFrom('n1', 'n2'), labels: labelsArb });

describe('node selection properties', () => {
  it('terms are ORed: the terms of two affinities together match exactly when either does', () => {
    fc.assert(
      fc.property(fc.array(termArb, { maxLength: 3 }), fc.array(termArb, { maxLength: 3 }), nodeArb, (x, y, n) => {
        assert.equal(
          matchesRequiredAffinity(affinity(...x, ...y), n),
          matchesRequiredAffinity(affinity(...x), n) || matchesRequiredAffinity(affinity(...y), n),
        );
      }),
    );
  });

  it('requirements are ANDed: one term of both lists matches exactly when each list does, and one unparsable requirement spoils the term', () => {
    fc.assert(
      fc.property(fc.array(validReqArb, { minLength: 1, maxLength: 3 }), fc.array(anyReqArb, { minLength: 1, maxLength: 3 }), nodeArb, (x, y, n) => {
        const both = matchesRequiredAffinity(affinity(term(...x, ...y)), n);
        const each = matchesRequiredAffinity(affinity(term(...x)), n) && matchesRequiredAffinity(affinity(term(...y)), n);
        assert.equal(both, each);
      }),
    );
  });

  it('NotIn is the complement of In, DoesNotExist of Exists', () => {
    fc.assert(
      fc.property(keyArb, fc.array(valueArb, { minLength: 1, maxLength: 3 }), nodeArb, (key, values, n) => {
        const one = (operator: string, vs: string[]) => matchesRequiredAffinity(affinity(term(req(key, operator, ...vs))), n);
        assert.equal(one('NotIn', values), !one('In', values));
        assert.equal(one('DoesNotExist', []), !one('Exists', []));
      }),
    );
  });

  it('Gt and Lt compare as integers: exactly one of >, <, = holds for an integer label', () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), (value, bound) => {
        const n = node({ a: String(value) });
        const one = (operator: string, v: string) => matchesRequiredAffinity(affinity(term(req('a', operator, v))), n);
        const holds = [one('Gt', String(bound)), one('Lt', String(bound)), one('In', String(bound))].filter(Boolean);
        assert.equal(holds.length, 1);
        assert.equal(one('Gt', String(bound)), value > bound);
      }),
    );
  });

  it('a nodeSelector is a one-term affinity of single-value Ins, and a PDB matchLabels the same', () => {
    fc.assert(
      fc.property(fc.dictionary(keyArb, valueArb, { minKeys: 1 }), nodeArb, (selector, n) => {
        const asTerm = term(...Object.entries(selector).map(([k, v]) => req(k, 'In', v)));
        assert.equal(matchesNodeSelector(selector, n.labels), matchesRequiredAffinity(affinity(asTerm), n));
        assert.equal(matchesLabelSelector({ matchLabels: selector }, n.labels), matchesNodeSelector(selector, n.labels));
      }),
    );
  });
});
