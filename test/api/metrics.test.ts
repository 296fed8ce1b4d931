/**
 * The API's `/metrics` over a real store: a known set of requests gives
 * exact counts by method, route pattern and status, requests no route
 * matched share one series, and no requested URL shows up as a label.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { metricValue, uniqueSuffix } from '../helpers.ts';
import { emptyStoreUrl, startTestApi, type TestApi } from '../api-support.ts';

describe('API metrics', () => {
  let api: TestApi;

  before(async () => {
    api = await startTestApi({ storeUrl: emptyStoreUrl(), taskQueue: `relabel-api-metrics-${uniqueSuffix()}` });
  });
  after(async () => api?.close());

  it('counts every request by method, route pattern and status, exactly', async () => {
    const secret = `x${uniqueSuffix()}`;
    const answers = [
      ...(await Promise.all([1, 2, 3].map(() => api.call('GET', '/health', { token: null })))),
      await api.call('GET', '/api/v1.0/revisions'),
      await api.call('GET', '/api/v1.0/revisions'),
      await api.call('GET', '/api/v1.0/revisions', { token: null }),
      await api.call('GET', '/api/v1.0/revisions/7'),
      await api.call('GET', '/api/v1.0/revisions/8'),
      await api.call('GET', `/no/such/${secret}`),
      await api.call('GET', `/no/such/${secret}/either`),
      await api.call('DELETE', '/health'),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 401, 404, 404, 404, 404, 405],
    );

    const answer = await api.call('GET', '/metrics', { token: null });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const count = (method: string, route: string, code: string) => metricValue(answer.text, 'relabel_api_requests_total', { method, route, code });
    assert.deepEqual(
      {
        health: count('GET', '/health', '200'),
        revisions: count('GET', '/api/v1.0/revisions', '200'),
        unauthorized: count('GET', '/api/v1.0/revisions', '401'),
        notFound: count('GET', '/api/v1.0/revisions/:id', '404'),
        unmatched: count('GET', '(unmatched)', '404'),
        notAllowed: count('DELETE', '/health', '405'),
      },
      { health: 3, revisions: 2, unauthorized: 1, notFound: 2, unmatched: 2, notAllowed: 1 },
    );
    assert.equal(metricValue(answer.text, 'relabel_api_requests_total'), answers.length, 'nothing else counted (this scrape is counted once answered)');
    assert.equal(metricValue(answer.text, 'relabel_api_request_duration_seconds_count'), answers.length);
    assert.equal(metricValue(answer.text, 'relabel_api_request_duration_seconds_count', { method: 'GET', route: '/api/v1.0/revisions/:id', code: '404' }), 2);
    assert.doesNotMatch(answer.text, new RegExp(secret), 'requested URLs are never labels');
    assert.doesNotMatch(answer.text, /revisions\/7/);

    const again = await api.call('GET', '/metrics', { token: null });
    assert.equal(metricValue(again.text, 'relabel_api_requests_total', { route: '/metrics', code: '200' }), 1, 'the first scrape, counted');
  });
});
