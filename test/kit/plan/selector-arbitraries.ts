/**
 * fast-check arbitraries of label selectors and label sets over a small
 * alphabet of keys and values, so that random selectors often match and
 * often miss. Shared by the selector's unit tests and the test that
 * compares it with the API server. Not product code.
 */
import fc from 'fast-check';
import { SelectorOperator, type LabelSelector, type SelectorRequirement } from '../../../src/core/plan/label-selector.ts';

/** Label keys the arbitraries draw from: plain, prefixed, and those fleets carry. */
export const SELECTOR_KEYS = ['tier', 'zone', 'example.com/gpu', 'cluster.x-k8s.io/deployment-name', 'karpenter.sh/nodepool', 'a.b-c_d'] as const;

/** Label values the arbitraries draw from (non-empty: the string syntax of a set has no empty member). */
export const SELECTOR_VALUES = ['a', 'b', 'md-0', 'pool-1', 'Z.9_x'] as const;

const key = fc.constantFrom(...SELECTOR_KEYS);
const value = fc.constantFrom(...SELECTOR_VALUES);

/** A map of labels over {@link SELECTOR_KEYS} and {@link SELECTOR_VALUES}. */
export const labelsArb: fc.Arbitrary<Record<string, string>> = fc.dictionary(key, value, { maxKeys: SELECTOR_KEYS.length });

/** One valid match expression. */
export const requirementArb: fc.Arbitrary<SelectorRequirement> = fc.oneof(
  fc.record({
    key,
    operator: fc.constantFrom(SelectorOperator.In, SelectorOperator.NotIn),
    values: fc.array(value, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key, operator: fc.constantFrom(SelectorOperator.Exists, SelectorOperator.DoesNotExist) }),
);

/** A valid selector with at least one requirement. */
export const selectorArb: fc.Arbitrary<LabelSelector> = fc
  .record({
    matchLabels: fc.option(fc.dictionary(key, value, { maxKeys: 2 }), { nil: undefined }),
    matchExpressions: fc.option(fc.array(requirementArb, { maxLength: 3 }), { nil: undefined }),
  })
  .map((s) => ({
    ...(s.matchLabels && Object.keys(s.matchLabels).length > 0 ? { matchLabels: s.matchLabels } : {}),
    ...(s.matchExpressions && s.matchExpressions.length > 0 ? { matchExpressions: s.matchExpressions } : {}),
  }))
  .filter((s) => s.matchLabels !== undefined || s.matchExpressions !== undefined);
