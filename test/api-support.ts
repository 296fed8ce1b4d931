/**
 * Support for the HTTP API tests: an API server over a real facade (real
 * store, real Temporal on the test worker's task queue, real kube-apiserver),
 * listening on a loopback socket, and a small client speaking to it.
 */
import { MAX_LISTED_ERRORS } from '../src/core/plan/site-error.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createNodeApi, loadKubeConfig, type NodeApi } from '../src/kube/nodes.ts';
import { openRelabel, relabelConfigFromEnv, type Relabel } from '../src/facade/index.ts';
import type { ApiToken } from '../src/api/http/auth.ts';
import { StatusBody } from '../src/api/http/response-schemas.ts';
import { createApiServer } from '../src/api/http/server.ts';
import { adminCore, createNode, kubeconfigPath, startRelabel } from './helpers.ts';

/** Tokens every API test server accepts. */
export const ADMIN = 'admin-token-for-tests';
export const VIEWER = 'viewer-token-for-tests';
export const TOKENS: ApiToken[] = [
  { token: ADMIN, role: 'admin' },
  { token: VIEWER, role: 'viewer' },
];

/** Request body limit of test servers: small, so 413 is cheap to provoke. */
export const TEST_BODY_LIMIT = 256 * 1024;

/** A URL of a fresh, empty SQLite store. */
export function emptyStoreUrl(): string {
  return `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-api-store-')), 'revisions.db')}`;
}

/** A loopback port nothing listens on (it was free a moment ago): connections are refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A kubeconfig naming a server nothing listens on. */
export async function unreachableKubeconfig(): Promise<string> {
  const port = await closedPort();
  const path = join(mkdtempSync(join(tmpdir(), 'relabel-api-kube-')), 'kubeconfig');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: nobody, user: {token: none}}]',
      'contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]',
      'current-context: nowhere',
    ].join('\n'),
  );
  return path;
}

/** An answer as the tests read it. */
export type Answer = { status: number; headers: Headers; text: string; json: any };

/** A running API server and a client for it. */
export type TestApi = {
  app: FastifyInstance;
  relabel: Relabel;
  base: string;
  /** Sends a request; `body` objects are sent as JSON, strings as given (with `type`). */
  call(method: string, path: string, options?: { token?: string | null; body?: unknown; type?: string; headers?: Record<string, string> }): Promise<Answer>;
  close(): Promise<void>;
};

/** Starts an API server over a facade on `storeUrl` and `taskQueue` (accepting `tokens`, else {@link TOKENS}), listening on a free loopback port. */
export async function startTestApi(options: { storeUrl: string; taskQueue: string; nodes?: NodeApi; tokens?: ApiToken[] }): Promise<TestApi> {
  const relabel = await openRelabel({ ...relabelConfigFromEnv(), storeUrl: options.storeUrl, taskQueue: options.taskQueue });
  const app = createApiServer({
    relabel,
    nodes: options.nodes ?? createNodeApi(loadKubeConfig(kubeconfigPath())),
    tokens: options.tokens ?? TOKENS,
    bodyLimit: TEST_BODY_LIMIT,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  const base = `http://127.0.0.1:${address.port}`;
  return {
    app,
    relabel,
    base,
    async call(method, path, { token = ADMIN, body, type, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...(token === null ? {} : { 'x-auth-token': token }), ...headers } };
      if (body !== undefined) {
        init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
        (init.headers as Record<string, string>)['content-type'] = type ?? (typeof body === 'string' ? 'application/x-yaml' : 'application/json');
      }
      const res = await fetch(`${base}${path}`, init);
      const text = await res.text();
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    async close() {
      await app.close();
      await relabel.close();
    },
  };
}

/** Asserts an answer is an Airship Status failure with `code` (and `reason`), and returns its body. */
export function assertFailure(answer: Answer, code: number, reason?: string): StatusBody {
  assert.equal(answer.status, code, `expected ${code}${reason ? ` ${reason}` : ''}, got ${answer.status}: ${answer.text.slice(0, 500)}`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  const body = StatusBody.parse(answer.json);
  assert.equal(body.status, 'Failure');
  assert.equal(body.code, code);
  // Every error listed, or the first ones and one message counting the rest.
  const listed = Math.min(body.details.errorCount, MAX_LISTED_ERRORS) + (body.details.errorCount > MAX_LISTED_ERRORS ? 1 : 0);
  assert.ok(body.details.errorCount >= 1 && body.details.messageList.length === listed);
  if (reason !== undefined) assert.equal(body.reason, reason, body.message);
  return body;
}

/** Polls `probe` until `done` holds for its value, or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value).slice(0, 1000)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * A relabel worker and an API server over the store at `storeUrl`, with
 * `nodes` registered (carrying `labels`) on the test cluster.
 */
export async function startApiAndWorker(
  storeUrl: string,
  nodes: readonly string[],
  labels: Record<string, string>,
): Promise<{ worker: Awaited<ReturnType<typeof startRelabel>>; api: TestApi }> {
  const worker = await startRelabel(storeUrl);
  const api = await startTestApi({ storeUrl, taskQueue: worker.taskQueue });
  const core = adminCore();
  for (const name of nodes) await createNode(core, name, labels);
  return { worker, api };
}
