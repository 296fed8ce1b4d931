import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { KubeMetric, kubeRequestMetrics, logLevel } from './telemetry.ts';

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

describe('kubeRequestMetrics', () => {
  /** A meter recording what is added and recorded, by metric name. */
  function recordingMeter(): { meter: MetricMeter; seen: [string, number, MetricTags | undefined][] } {
    const seen: [string, number, MetricTags | undefined][] = [];
    const meter: MetricMeter = {
      createCounter: (name) => Object.assign(noopMetricMeter.createCounter(name), { add: (v: number, tags?: MetricTags) => void seen.push([name, v, tags]) }),
      createHistogram: (name, valueType) =>
        Object.assign(noopMetricMeter.createHistogram(name, valueType), { record: (v: number, tags?: MetricTags) => void seen.push([name, v, tags]) }),
      createGauge: (name) => noopMetricMeter.createGauge(name),
      withTags: () => meter,
    };
    return { meter, seen };
  }

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
