import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { JoinMetric, joinMetrics, KubeMetric, kubeRequestMetrics, logLevel, WatchMetric, watchMetrics } from './telemetry.ts';

describe('logLevel', () => {
  it('takes the five levels in any case, and refuses anything else naming them', () => {
    assert.equal(logLevel('WARN'), 'warn');
    assert.equal(logLevel(' debug '), 'debug');
    assert.throws(() => logLevel('verbose'), { message: 'log level "verbose": expected one of trace, debug, info, warn, error' });
    assert.throws(
      () => logLevel('x'.repeat(100)),
      (err: Error) => err.message.length < 120,
    );
  });
});

/** A meter recording what is added, recorded and set, by metric name. */
function recordingMeter(): { meter: MetricMeter; seen: [string, number, MetricTags | undefined][] } {
  const seen: [string, number, MetricTags | undefined][] = [];
  const meter: MetricMeter = {
    createCounter: (name) => Object.assign(noopMetricMeter.createCounter(name), { add: (v: number, tags?: MetricTags) => void seen.push([name, v, tags]) }),
    createHistogram: (name, valueType) =>
      Object.assign(noopMetricMeter.createHistogram(name, valueType), { record: (v: number, tags?: MetricTags) => void seen.push([name, v, tags]) }),
    createGauge: (name, valueType) =>
      Object.assign(noopMetricMeter.createGauge(name, valueType), { set: (v: number, tags?: MetricTags) => void seen.push([name, v, tags]) }),
    withTags: () => meter,
  };
  return { meter, seen };
}

describe('kubeRequestMetrics', () => {
  it('times every request by verb and status, and counts 429s by verb and 409s on patches', () => {
    const { meter, seen } = recordingMeter();
    const observe = kubeRequestMetrics(meter);
    observe('get', 200, 0.01);
    observe('list', 429, 0.02);
    observe('patch', 409, 0.03);
    observe('get', 409, 0.04);
    observe('patch', 0, 0.05);
    assert.deepEqual(seen, [
      [KubeMetric.requestSeconds, 0.01, { verb: 'get', code: '200' }],
      [KubeMetric.requestSeconds, 0.02, { verb: 'list', code: '429' }],
      [KubeMetric.throttled, 1, { verb: 'list' }],
      [KubeMetric.requestSeconds, 0.03, { verb: 'patch', code: '409' }],
      [KubeMetric.conflicts, 1, undefined],
      [KubeMetric.requestSeconds, 0.04, { verb: 'get', code: '409' }],
      [KubeMetric.requestSeconds, 0.05, { verb: 'patch', code: '0' }],
    ]);
  });
});

describe('watchMetrics', () => {
  it("sets each drift state's gauge from a detection, and counts each plugin's poll by outcome", () => {
    const { meter, seen } = recordingMeter();
    const metrics = watchMetrics(meter);
    metrics.detected('s', { total: 12, missing: 1, unmanaged: 2, drifted: 3, moved: 1, pending: 0, in_sync: 4, orphaned: 1 });
    metrics.polled('s', [
      { plugin: 'a', ok: true },
      { plugin: 'b', ok: false, error: 'exit 1' },
    ]);
    assert.deepEqual(seen, [
      [WatchMetric.driftNodes, 1, { site: 's', state: 'missing' }],
      [WatchMetric.driftNodes, 2, { site: 's', state: 'unmanaged' }],
      [WatchMetric.driftNodes, 3, { site: 's', state: 'drifted' }],
      [WatchMetric.driftNodes, 1, { site: 's', state: 'moved' }],
      [WatchMetric.driftNodes, 0, { site: 's', state: 'pending' }],
      [WatchMetric.driftNodes, 4, { site: 's', state: 'in_sync' }],
      [WatchMetric.driftNodes, 1, { site: 's', state: 'orphaned' }],
      [WatchMetric.pluginPolls, 1, { site: 's', plugin: 'a', outcome: 'ok' }],
      [WatchMetric.pluginPolls, 1, { site: 's', plugin: 'b', outcome: 'failed' }],
    ]);
  });
});

describe('joinMetrics', () => {
  it('counts joining nodes left alone one at a time, and the nodes of a join run that failed by the run', () => {
    const { meter, seen } = recordingMeter();
    const metrics = joinMetrics(meter);
    metrics.unmanaged('s');
    metrics.run('s', 3);
    metrics.failed('s', 2);
    assert.deepEqual(seen, [
      [JoinMetric.unmanaged, 1, { site: 's' }],
      [JoinMetric.runs, 1, { site: 's' }],
      [JoinMetric.dispatched, 3, { site: 's' }],
      [JoinMetric.failed, 2, { site: 's' }],
    ]);
  });
});

describe("the Helm chart's alerts", () => {
  it('read only metrics relabel exports', () => {
    const rules = readFileSync(new URL('../../deploy/helm/relabel/templates/prometheusrule.yaml', import.meta.url), 'utf8');
    const sources = readdirSync(new URL('..', import.meta.url), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => readFileSync(new URL(`../${f}`, import.meta.url), 'utf8'))
      .join('\n');
    const read = [...new Set([...rules.matchAll(/\b(relabel_[a-z_]+?)(?:_bucket|_count|_sum)?\{/g)].map((m) => m[1] as string))];
    assert.ok(read.length >= 6, `the rules read ${read.length} relabel metrics`);
    assert.deepEqual(
      read.filter((name) => !sources.includes(`'${name}'`)),
      [],
    );
  });
});
