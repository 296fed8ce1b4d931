import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatInterval, parseInterval, SCHEDULE_KINDS, scheduleKind } from './schedules.ts';
import { RelabelError } from './relabel-error.ts';

describe('schedule intervals and kinds', () => {
  it('reads intervals as 90s, 10m, 1h30m, 1d and writes them back the same way', () => {
    for (const [text, ms] of [
      ['90s', 90_000],
      ['10m', 600_000],
      ['1h30m', 5_400_000],
      ['1d', 86_400_000],
      ['7d', 604_800_000],
      ['1m', 60_000],
    ] as const) {
      assert.equal(parseInterval(text), ms, text);
    }
    assert.equal(formatInterval(600_000), '10m');
    assert.equal(formatInterval(5_400_000), '1h30m');
    assert.equal(formatInterval(90_000), '1m30s');
  });

  it('refuses a bad interval, naming it and the rule', () => {
    const refused = (text: string, why: RegExp) =>
      assert.throws(
        () => parseInterval(text),
        (err: unknown) => err instanceof RelabelError && err.type === 'InvalidArgument' && why.test(err.message),
      );
    refused('10', /bad interval "10": use a number and a unit, s, m, h or d/);
    refused('ten minutes', /use a number and a unit/);
    refused('-5m', /use a number and a unit/);
    refused('30s', /must be between 1m and 7d/);
    refused('8d', /must be between 1m and 7d/);
    refused(`${'9'.repeat(200)}m`, /bad interval "9{40}"/);
  });

  it('knows the drift and plugins kinds; an unknown kind is refused listing the kinds', () => {
    assert.deepEqual(Object.keys(SCHEDULE_KINDS), ['drift', 'plugins']);
    const plugins = scheduleKind('plugins');
    assert.equal(plugins.idPrefix, 'relabel-plugins');
    assert.equal(plugins.workflowType, 'pollPlugins');
    assert.deepEqual(plugins.args('atl'), [{ site: 'atl' }]);
    assert.equal(parseInterval(plugins.defaultEvery), 600_000);
    const drift = scheduleKind('drift');
    assert.equal(drift.idPrefix, 'relabel-drift');
    assert.equal(drift.workflowType, 'detectDrift');
    assert.deepEqual(drift.args('atl'), [{ site: 'atl' }]);
    assert.equal(parseInterval(drift.defaultEvery), 600_000);
    assert.throws(() => scheduleKind('toString'), /unknown schedule kind "toString": one of drift, plugins/);
  });
});
