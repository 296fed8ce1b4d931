/**
 * The API server's Prometheus metrics: every answered request counted and
 * timed by method, route and status. The route is the declared pattern
 * (`/api/v1.0/actions/:action_id`), never the requested URL, and requests
 * no route matched share one value, so the number of series stays bounded
 * whatever clients send. One registry per server (prom-client's default
 * registry is global to the process, and a process may run several).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';
import { defineRoute, type RouteDef } from './route.ts';

/** Names of the API metrics, as Prometheus shows them. */
export const ApiMetric = {
  requests: 'relabel_api_requests_total',
  requestSeconds: 'relabel_api_request_duration_seconds',
} as const;

/** The `route` of a request no route matched. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** Buckets of the request latency histogram, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Counts and times every request `app` answers (a hook on each response)
 * and returns the `GET /metrics` route that shows them, public like the
 * health routes: it tells only how many requests each route answered.
 */
export function apiMetrics(app: FastifyInstance): RouteDef {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'code'] as const;
  const requests = new Counter({
    name: ApiMetric.requests,
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: ApiMetric.requestSeconds,
    help: 'Time to answer HTTP requests, by method, route pattern and status, in seconds',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? UNMATCHED_ROUTE, code: String(reply.statusCode) };
    requests.inc(labels);
    seconds.observe(labels, reply.elapsedTime / 1000);
  });
  return defineRoute({
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics: requests answered and their latency by method, route and status (no token needed)',
    tag: 'health',
    access: 'public',
    responses: { 200: { description: 'Prometheus text format', text: registry.contentType } },
    async handle() {
      return { code: 200, text: { type: registry.contentType, body: await registry.metrics() } };
    },
  });
}
