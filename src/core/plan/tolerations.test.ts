import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { daemonPodTolerations, noExecuteOutcome, toleratesTaint, toleratesTaints, type Toleration } from './tolerations.ts';

describe('tolerations (Toleration.ToleratesTaint, taint eviction)', () => {
  const t = (key: string, effect: string, value?: string) => ({ key, effect, ...(value === undefined ? {} : { value }) });
  const cases: [string, Toleration, ReturnType<typeof t>, boolean][] = [
    ['empty key with Exists tolerates every taint', { operator: 'Exists' }, t('any', 'NoExecute', 'v'), true],
    ['an empty effect matches every effect', { key: 'k', operator: 'Exists' }, t('k', 'NoSchedule'), true],
    ['a different effect does not', { key: 'k', operator: 'Exists', effect: 'NoSchedule' }, t('k', 'NoExecute'), false],
    ['no operator means Equal', { key: 'k', value: 'v' }, t('k', 'NoSchedule', 'v'), true],
    ['Equal compares values', { key: 'k', operator: 'Equal', value: 'v' }, t('k', 'NoSchedule', 'w'), false],
    ['Equal without a value tolerates a taint without one', { key: 'k', operator: 'Equal' }, t('k', 'NoSchedule'), true],
    ['empty key with Equal compares values only', { operator: 'Equal', value: '' }, t('other', 'NoSchedule'), true],
    ['Gt: the taint value above the bound', { key: 'k', operator: 'Gt', value: '5' }, t('k', 'NoSchedule', '10'), true],
    ['Lt: the taint value below the bound', { key: 'k', operator: 'Lt', value: '5' }, t('k', 'NoSchedule', '10'), false],
    ['Gt: a taint value that is not an integer', { key: 'k', operator: 'Gt', value: '5' }, t('k', 'NoSchedule', 'x'), false],
    ['Gt: negative values compare', { key: 'k', operator: 'Gt', value: '-100' }, t('k', 'NoSchedule', '-50'), true],
    ['Gt: a leading zero is no integer (unlike a node selector)', { key: 'k', operator: 'Gt', value: '0100' }, t('k', 'NoSchedule', '200'), false],
    ['Lt: a plus sign is no integer', { key: 'k', operator: 'Lt', value: '100' }, t('k', 'NoSchedule', '+20'), false],
    ['Lt: the int64 edge compares exactly', { key: 'k', operator: 'Lt', value: '0' }, t('k', 'NoSchedule', '-9223372036854775808'), true],
    ['an unknown operator tolerates nothing', { key: 'k', operator: 'Matches', value: 'v' }, t('k', 'NoSchedule', 'v'), false],
  ];
  for (const [name, toleration, taint, expected] of cases) it(name, () => assert.equal(toleratesTaint(toleration, taint), expected));

  it('toleratesTaints counts only the effects asked for', () => {
    const taints = [t('a', 'PreferNoSchedule'), t('b', 'NoSchedule')];
    assert.equal(toleratesTaints([], taints, ['NoSchedule', 'NoExecute']), false);
    assert.equal(toleratesTaints([], taints, ['NoExecute']), true);
    assert.equal(toleratesTaints([{ key: 'b', operator: 'Exists' }], taints, ['NoSchedule', 'NoExecute']), true);
  });

  it('eviction: untolerated at once; else the least seconds of the first toleration matching each taint; none set: never', () => {
    const taints = [t('a', 'NoExecute'), t('b', 'NoExecute'), t('c', 'NoSchedule')];
    assert.deepEqual(noExecuteOutcome([{ key: 'a', operator: 'Exists' }], taints), { evicted: true, afterSeconds: 0 });
    assert.deepEqual(noExecuteOutcome([{ operator: 'Exists' }], taints), { evicted: false });
    assert.deepEqual(
      noExecuteOutcome(
        [
          { key: 'a', operator: 'Exists', tolerationSeconds: 300 },
          { operator: 'Exists', tolerationSeconds: 60 },
        ],
        taints,
      ),
      { evicted: true, afterSeconds: 60 },
    );
    // The first matching toleration is the one used: a later one with seconds does not count.
    assert.deepEqual(noExecuteOutcome([{ operator: 'Exists' }, { key: 'a', operator: 'Exists', tolerationSeconds: 5 }], taints), { evicted: false });
    assert.deepEqual(noExecuteOutcome([{ operator: 'Exists', tolerationSeconds: -3 }], taints), { evicted: true, afterSeconds: 0 });
    assert.deepEqual(noExecuteOutcome([], [t('c', 'NoSchedule')]), { evicted: false });
  });

  it('daemon pods get the default tolerations, replacing a same toleration with seconds', () => {
    const tolerations = daemonPodTolerations([{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }], false);
    assert.equal(tolerations.length, 6);
    assert.deepEqual(tolerations[0], { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
    assert.equal(daemonPodTolerations([], true).length, 7);
  });
});

const taintArb = fc.record(
  {
    key: fc.constantFrom('a', 'b', 'node.kubernetes.io/unschedulable'),
    value: fc.constantFrom('', 'x', '3', '12'),
    effect: fc.constantFrom('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
  },
  { requiredKeys: ['key', 'effect'] },
);
const tolerationArb: fc.Arbitrary<Toleration> = fc.record(
  {
    key: fc.constantFrom('', 'a', 'b'),
    operator: fc.constantFrom('', 'Equal', 'Exists', 'Gt', 'Lt'),
    value: fc.constantFrom('', 'x', '3', '12'),
    effect: fc.constantFrom('', 'NoSchedule', 'NoExecute'),
    tolerationSeconds: fc.integer({ min: -5, max: 600 }),
  },
  { requiredKeys: [] },
);
const effectsArb = fc.subarray(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

describe('toleration properties', () => {
  it('empty key and effect with Exists tolerates every taint', () => {
    fc.assert(fc.property(taintArb, (taint) => assert.equal(toleratesTaint({ operator: 'Exists' }, taint), true)));
  });

  it('more tolerations never tolerate less; fewer taints never need more', () => {
    fc.assert(
      fc.property(
        fc.array(tolerationArb, { maxLength: 3 }),
        fc.array(tolerationArb, { maxLength: 2 }),
        fc.array(taintArb, { maxLength: 4 }),
        effectsArb,
        (tolerations, more, taints, effects) => {
          if (!toleratesTaints(tolerations, taints, effects)) return;
          assert.equal(toleratesTaints([...tolerations, ...more], taints, effects), true);
          assert.equal(toleratesTaints(tolerations, taints.slice(1), effects), true);
        },
      ),
    );
  });

  it('eviction: never without a NoExecute taint; at once when one is untolerated; never when those used set no seconds', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { maxLength: 3 }), fc.array(taintArb, { maxLength: 4 }), (tolerations, taints) => {
        const outcome = noExecuteOutcome(tolerations, taints);
        if (!taints.some((t) => t.effect === 'NoExecute')) assert.deepEqual(outcome, { evicted: false });
        if (!toleratesTaints(tolerations, taints, ['NoExecute'])) assert.deepEqual(outcome, { evicted: true, afterSeconds: 0 });
        const forever = tolerations.map(({ tolerationSeconds: _, ...t }) => t);
        if (toleratesTaints(forever, taints, ['NoExecute'])) assert.deepEqual(noExecuteOutcome(forever, taints), { evicted: false });
        if (outcome.evicted) assert.ok(outcome.afterSeconds >= 0);
      }),
    );
  });

  it('daemon pods tolerate what their template tolerates, and the taints of a cordoned or pressured node', () => {
    fc.assert(
      fc.property(fc.array(tolerationArb, { maxLength: 3 }), fc.array(taintArb, { maxLength: 4 }), fc.boolean(), (template, taints, hostNetwork) => {
        const daemon = daemonPodTolerations(template, hostNetwork);
        if (toleratesTaints(template, taints, ['NoSchedule', 'NoExecute'])) assert.equal(toleratesTaints(daemon, taints, ['NoSchedule', 'NoExecute']), true);
        assert.equal(toleratesTaints(daemon, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }], ['NoSchedule']), true);
        // Only a template toleration met first, with seconds, can shorten the default's "for ever".
        const forever = daemonPodTolerations(
          template.map(({ tolerationSeconds: _, ...t }) => t),
          hostNetwork,
        );
        assert.equal(noExecuteOutcome(forever, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]).evicted, false);
      }),
    );
  });
});
