import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatError } from '../plan/site-error.ts';
import { policyDoc, source } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';

describe('rollout in the label policy', () => {
  const rolloutOf = (line: string) => {
    const result = validateSite([source('p.yaml', policyDoc('p', line === '' ? {} : { rollout: line }))]);
    return result.ok ? result.design.policy.rollout : result.errors.map(formatError);
  };

  it("is optional and read into the runs' rollout", () => {
    assert.equal(rolloutOf(''), undefined);
    assert.deepEqual(rolloutOf('rollout: {waves: rack, wave_size: 10%, canary: 1, approval: first, health_timeout_seconds: 60, max_failed_nodes: 2}'), {
      by: 'rack',
      size: { percent: 10 },
      canary: 1,
      approval: 'first',
      healthTimeoutSeconds: 60,
      maxFailedNodes: 2,
    });
    assert.deepEqual(rolloutOf('rollout: {waves: "label:example.com/zone", wave_size: 4}'), { by: { label: 'example.com/zone' }, size: { count: 4 } });
    assert.deepEqual(rolloutOf('rollout: {waves: none}'), { by: 'none' });
  });

  it('refuses what is not a rollout, naming where', () => {
    const errors = rolloutOf('rollout: {waves: racks, wave_size: 0%, approval: later, health_timeout_seconds: -1, spread: 2}') as string[];
    assert.equal(errors.length, 5, errors.join('\n'));
    for (const field of ['waves', 'wave_size', 'approval', 'health_timeout_seconds']) {
      assert.ok(
        errors.some((e) => e.includes(`data.rollout.${field}`)),
        `${field}: ${errors.join('\n')}`,
      );
    }
    assert.ok(
      errors.some((e) => e.includes('spread')),
      errors.join('\n'),
    );
  });
});
