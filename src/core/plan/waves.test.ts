import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { approvalAfter, assignWaves, effectiveRollout, parseWaveGrouping, parseWaveSize, rolloutErrors, type EffectiveRollout } from './waves.ts';

const base: EffectiveRollout = { approval: 'none', healthTimeoutSeconds: 300, maxFailedNodes: 0 };

describe('waves', () => {
  it('parses --waves and --wave-size, refusing what is neither', () => {
    assert.deepEqual(parseWaveGrouping('rack'), { ok: true, value: 'rack' });
    assert.deepEqual(parseWaveGrouping('label:example.com/zone'), { ok: true, value: { label: 'example.com/zone' } });
    assert.equal(parseWaveGrouping('label:').ok, false);
    assert.equal(parseWaveGrouping('racks').ok, false);
    assert.deepEqual(parseWaveSize('10%'), { ok: true, value: { percent: 10 } });
    assert.deepEqual(parseWaveSize('25'), { ok: true, value: { count: 25 } });
    for (const bad of ['0', '0%', '101%', '-1', '1.5', 'ten', '']) assert.equal(parseWaveSize(bad).ok, false, bad);
  });

  it('checks a rollout given as data (the API and the policy)', () => {
    assert.deepEqual(rolloutErrors({ by: 'rack', size: { percent: 10 }, canary: 1, approval: 'first', healthTimeoutSeconds: 0, maxFailedNodes: 2 }), []);
    assert.equal(rolloutErrors({ size: { percent: 0 } }).length, 1);
    assert.equal(rolloutErrors({ canary: 0, approval: 'later' as never, healthTimeoutSeconds: -1, maxFailedNodes: 1.5 }).length, 4);
    assert.equal(rolloutErrors({ by: 'zone' as never }).length, 1);
  });

  it('merges the run over the policy; none turns waves off', () => {
    assert.equal(effectiveRollout(undefined, undefined), undefined);
    assert.equal(effectiveRollout({ by: 'rack' }, { by: 'none' }), undefined);
    assert.equal(effectiveRollout({ approval: 'each' }, undefined), undefined);
    assert.deepEqual(effectiveRollout({ by: 'rack', approval: 'each' }, { healthTimeoutSeconds: 30 }), {
      by: 'rack',
      approval: 'each',
      healthTimeoutSeconds: 30,
      maxFailedNodes: 0,
    });
  });

  it('groups by rack in name order, the canary first from the first rack, no rack last', () => {
    const members = [
      { node: 'a1', group: 'r2' },
      { node: 'b1', group: 'r1' },
      { node: 'a2', group: 'r2' },
      { node: 'x', group: null },
      { node: 'b2', group: 'r1' },
    ];
    const waves = assignWaves(members, { ...base, by: 'rack', canary: 1 });
    assert.deepEqual(waves, [
      { name: 'canary', nodes: ['b1'] },
      { name: 'rack r1', nodes: ['b2'] },
      { name: 'rack r2', nodes: ['a1', 'a2'] },
      { name: '(no rack)', nodes: ['x'] },
    ]);
    assert.deepEqual(
      assignWaves(members, { ...base, size: { percent: 40 } }).map((w) => w.nodes.length),
      [2, 2, 1],
    );
  });

  it('puts every node in exactly one non-empty wave of at most the size, the canary first', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 60 }),
        fc.array(fc.option(fc.constantFrom('r1', 'r2', 'r3'), { nil: null }), { minLength: 60, maxLength: 60 }),
        fc.record({
          by: fc.option(fc.constant('rack' as const), { nil: undefined }),
          size: fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
          canary: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        }),
        (nodes, groups, opts) => {
          const members = nodes.map((node, i) => ({ node, group: groups[i] ?? null }));
          const rollout: EffectiveRollout = {
            ...base,
            ...(opts.by ? { by: opts.by } : {}),
            ...(opts.size ? { size: { count: opts.size } } : {}),
            ...(opts.canary ? { canary: opts.canary } : {}),
          };
          const waves = assignWaves(members, rollout);
          const all = waves.flatMap((w) => w.nodes);
          assert.deepEqual([...all].sort(), [...nodes].sort());
          for (const w of waves) assert.ok(w.nodes.length > 0);
          for (const w of waves.slice(opts.canary && nodes.length > 0 ? 1 : 0)) assert.ok(w.nodes.length <= (opts.size ?? Infinity));
          if (opts.canary && nodes.length > 0) assert.equal(waves[0]?.nodes.length, Math.min(opts.canary, nodes.length));
          if (opts.by) for (const w of waves.slice(opts.canary ? 1 : 0)) assert.equal(new Set(w.nodes.map((n) => groups[nodes.indexOf(n)] ?? null)).size, 1);
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it('waits for approval after the first wave or every wave, never after the last', () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => approvalAfter({ ...base, approval: 'first' }, i, 3)),
      [true, false, false],
    );
    assert.deepEqual(
      [0, 1, 2].map((i) => approvalAfter({ ...base, approval: 'each' }, i, 3)),
      [true, true, false],
    );
    assert.deepEqual(
      [0, 1].map((i) => approvalAfter(base, i, 2)),
      [false, false],
    );
  });
});
