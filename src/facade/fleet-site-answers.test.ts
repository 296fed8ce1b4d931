/** A site's plan summed up to its survey answer: the sums, the keys with the most changes first, and its size bound whatever the plan's keys. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_SITE_ANSWER_BYTES, SITE_PLAN_KEYS } from '../contracts/fleet-survey.ts';
import { planAnswer } from './fleet-site-answers.ts';
import type { FleetPlan, LabelKeyPlan } from './plan.ts';

function planWith(labels: Record<string, LabelKeyPlan>, extra: Partial<FleetPlan> = {}): FleetPlan {
  return {
    workflowId: 'update-labels/s/dry-run/1',
    runId: 'r',
    run: 3,
    revision: 2,
    site: 's',
    targets: 10,
    statuses: { success: 9, failure: 1 },
    failureTypes: { NodeNotFound: 1 },
    changing: 7,
    nodeSets: {},
    warnings: [],
    labels,
    moreLabelKeys: 0,
    removal: { owned: 20, removed: 4, nodes: 2, keys: [], moreKeys: 0, maxFraction: 0.5, exceeded: false },
    impact: null,
    ...extra,
  };
}

const key = (gain: number, change: number, lose: number, source = 'HostProfile/edge'): LabelKeyPlan => ({
  gain,
  change,
  lose,
  adopt: 0,
  desired: gain + change,
  sources: [{ source: { kind: 'host_profile', profile: source, depth: 1 }, nodes: gain + change }],
  moreSources: 0,
});

describe('planAnswer', () => {
  it('sums the keys, lists the most changed first, and leaves out keys nothing changes', () => {
    const answer = planAnswer(
      planWith({ 'a.example/x': key(1, 0, 0), 'a.example/y': key(2, 3, 0), 'a.example/z': key(0, 0, 4), 'a.example/same': key(0, 0, 0) }),
    );
    assert.deepEqual([answer.planned, answer.changing, answer.gain, answer.change, answer.lose], [9, 7, 3, 3, 4]);
    assert.deepEqual(
      answer.keys.map((k) => k.key),
      ['a.example/y', 'a.example/z', 'a.example/x'],
    );
    assert.deepEqual(answer.notPlanned, { NodeNotFound: 1 });
    assert.deepEqual(answer.brake, { owned: 20, removed: 4, maxFraction: 0.5, exceeded: false });
  });

  it(`stays within ${MAX_SITE_ANSWER_BYTES} bytes with the longest keys, sources and warnings, counting the keys it leaves out`, () => {
    const longKey = (i: number) => `${'p'.repeat(240)}.example${i}/${'n'.repeat(63)}`;
    const labels = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        longKey(i),
        {
          ...key(100 - i, 0, 0),
          sources: Array.from({ length: 20 }, (_, j) => ({ source: { kind: 'host_profile' as const, profile: `${'h'.repeat(250)}${j}`, depth: 1 }, nodes: 1 })),
        },
      ]),
    );
    const answer = planAnswer(planWith(labels, { warnings: Array.from({ length: 50 }, () => 'w'.repeat(5000)), moreLabelKeys: 7 }));
    assert.ok(Buffer.byteLength(JSON.stringify(answer)) <= MAX_SITE_ANSWER_BYTES, `${Buffer.byteLength(JSON.stringify(answer))} bytes`);
    assert.ok(answer.keys.length >= 1 && answer.keys.length <= SITE_PLAN_KEYS);
    assert.equal(answer.keys.length + answer.moreKeys, 40 + 7, 'every key listed or counted');
    assert.equal(answer.keys[0]?.key, longKey(0), 'the most changed key kept first');
    assert.equal(
      answer.gain,
      Array.from({ length: 40 }, (_, i) => 100 - i).reduce((a, b) => a + b),
      'the sums cover every key',
    );
  });
});
