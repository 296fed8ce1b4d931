import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { ApiException, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { mapNodeError } from './errors.ts';
import {
  createNodeApi,
  limited,
  ListExpiredError,
  loadKubeConfig,
  MAX_TOO_MANY_REQUESTS_RETRIES,
  nodeApiOver,
  retryAfterSeconds,
  type NodeRequests,
} from './nodes.ts';
import { UNLIMITED, type RateLimiter } from './rate-limit.ts';

const tooMany = (retryAfter?: string) => new ApiException(429, 'too many requests', '', retryAfter === undefined ? {} : { 'retry-after': retryAfter });
const node = (name: string): V1Node => ({ metadata: { name, resourceVersion: '1', labels: { k: 'v' } } });

/** A limiter that never waits and counts the tokens taken. */
function countingLimiter(): RateLimiter & { taken: number } {
  const limiter = { taken: 0, acquire: async () => void limiter.taken++ };
  return limiter;
}

describe('limited', () => {
  it("waits a 429's Retry-After and sends the request again", async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await limited(
      UNLIMITED,
      async () => {
        calls++;
        if (calls < 3) throw tooMany(calls === 1 ? '2' : undefined);
        return 'ok';
      },
      async (ms) => waits.push(ms),
    );
    assert.equal(result, 'ok');
    assert.deepEqual(waits, [2000, 1000], 'Retry-After: 2, then none given (1 s)');
  });

  it('takes a token for every attempt, retries included', async () => {
    const limiter = countingLimiter();
    let calls = 0;
    await limited(
      limiter,
      async () => {
        if (++calls < 3) throw tooMany('0');
        return 'ok';
      },
      async () => undefined,
    );
    assert.equal(limiter.taken, 3);
  });

  it('gives up after a bounded number of 429s, returning the error; other errors at once', async () => {
    let calls = 0;
    await assert.rejects(
      limited(
        UNLIMITED,
        async () => {
          calls++;
          throw tooMany('1');
        },
        async () => undefined,
      ),
      (err: unknown) => err instanceof ApiException && err.code === 429,
    );
    assert.equal(calls, MAX_TOO_MANY_REQUESTS_RETRIES + 1);
    for (const code of [500, 503, 410]) {
      calls = 0;
      await assert.rejects(
        limited(
          UNLIMITED,
          async () => {
            calls++;
            throw new ApiException(code, 'boom', '', { 'retry-after': '1' });
          },
          async () => undefined,
        ),
      );
      assert.equal(calls, 1, `${code} is not retried here`);
    }
  });
});

describe('retryAfterSeconds', () => {
  it('reads delay-seconds or an HTTP-date, caps at 60 s, and falls back to 1 s', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterSeconds(tooMany('3')), 3);
    assert.equal(retryAfterSeconds(tooMany('0')), 0);
    assert.equal(retryAfterSeconds(tooMany('3600')), 60, 'Retry-After is capped');
    assert.equal(retryAfterSeconds(tooMany('Wed, 01 Jan 2025 00:00:07 GMT'), now), 7);
    assert.equal(retryAfterSeconds(tooMany('Tue, 31 Dec 2024 23:00:00 GMT'), now), 0, 'a date in the past: at once');
    for (const odd of [undefined, '', '  ', '-5', '1.5', '2025-01-01', 'soon', 'Someday']) assert.equal(retryAfterSeconds(tooMany(odd)), 1, String(odd));
    assert.equal(retryAfterSeconds(new ApiException(429, 'm', '', { 'Retry-After': '4' })), 4);
  });

  it('is only for a 429 of the API server', () => {
    assert.equal(retryAfterSeconds(new ApiException(503, 'm', '', { 'retry-after': '5' })), undefined);
    assert.equal(retryAfterSeconds(Object.assign(new Error('x'), { code: 429, headers: { 'retry-after': '5' } })), undefined);
  });
});

describe('listNodes', () => {
  /** A fake CoreV1Api over `names`, pages cut by `limit`, continue token = next index. */
  function fakeCore(names: string[], fail?: (request: { limit?: number; _continue?: string }, call: number) => Error | undefined) {
    const requests: { limit?: number; _continue?: string }[] = [];
    const core: NodeRequests = {
      readNode: () => Promise.reject(new Error('not used')),
      patchNode: () => Promise.reject(new Error('not used')),
      listNode: async (param) => {
        const request = { limit: param?.limit, _continue: param?._continue };
        requests.push(request);
        const failure = fail?.(request, requests.length);
        if (failure) throw failure;
        const from = Number(param?._continue ?? 0);
        const to = Math.min(names.length, from + (param?.limit ?? names.length));
        return { items: names.slice(from, to).map(node), metadata: to < names.length ? { _continue: String(to) } : {} };
      },
    };
    return { core, requests };
  }

  it('yields one page per request, at most pageSize each, each request taking a token', async () => {
    const names = Array.from({ length: 7 }, (_, i) => `n${i}`);
    const { core, requests } = fakeCore(names);
    const limiter = countingLimiter();
    const pages: string[][] = [];
    for await (const page of nodeApiOver(core, limiter).listNodes({ pageSize: 3 })) pages.push(page.map((n) => n.name));
    assert.deepEqual(pages, [['n0', 'n1', 'n2'], ['n3', 'n4', 'n5'], ['n6']]);
    assert.deepEqual(requests, [
      { limit: 3, _continue: undefined },
      { limit: 3, _continue: '3' },
      { limit: 3, _continue: '6' },
    ]);
    assert.equal(limiter.taken, 3);
  });

  it('reads one page ahead of the caller, never two', async () => {
    const { core, requests } = fakeCore(Array.from({ length: 10 }, (_, i) => `n${i}`));
    for await (const page of nodeApiOver(core, UNLIMITED).listNodes({ pageSize: 2 })) {
      assert.equal(page.length, 2);
      await new Promise((resolve) => setTimeout(resolve, 5));
      break;
    }
    assert.equal(requests.length, 2);
  });

  it("asks for the next page once the answer's first bytes tell its token, before the page is read whole", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `n${i}`);
    const sent: string[] = [];
    const core: NodeRequests = {
      readNode: () => Promise.reject(new Error('not used')),
      patchNode: () => Promise.reject(new Error('not used')),
      listNode: async ({ limit, _continue, onContinue }) => {
        const from = Number(_continue ?? 0);
        const to = Math.min(names.length, from + limit);
        sent.push(`ask ${from}`);
        onContinue?.(to < names.length ? String(to) : '');
        await new Promise((resolve) => setTimeout(resolve, 5));
        sent.push(`read ${from}`);
        return { items: names.slice(from, to).map(node), metadata: to < names.length ? { _continue: String(to) } : {} };
      },
    };
    const seen: string[] = [];
    for await (const page of nodeApiOver(core, UNLIMITED).listNodes({ pageSize: 2 })) seen.push(...page.map((n) => n.name));
    assert.deepEqual(seen, names);
    assert.deepEqual(sent, ['ask 0', 'ask 2', 'read 0', 'ask 4', 'read 2', 'read 4']);
  });

  it('fails the list when a token read early is not the one its page gives', async () => {
    const core: NodeRequests = {
      readNode: () => Promise.reject(new Error('not used')),
      patchNode: () => Promise.reject(new Error('not used')),
      listNode: async ({ _continue, onContinue }) => {
        onContinue?.('elsewhere');
        return { items: [node(`n${_continue ?? 0}`)], metadata: { _continue: _continue === undefined ? '1' : '' } };
      },
    };
    await assert.rejects(
      (async () => {
        for await (const _page of nodeApiOver(core, UNLIMITED).listNodes({ pageSize: 1 }));
      })(),
      /continue token read early differs/,
    );
  });

  it('sends a page answered 429 again with the same continue token', async () => {
    const { core, requests } = fakeCore(['a', 'b', 'c'], (r, call) => (r._continue === '2' && call === 2 ? tooMany('0') : undefined));
    const seen: string[] = [];
    for await (const page of nodeApiOver(core, UNLIMITED).listNodes({ pageSize: 2 })) seen.push(...page.map((n) => n.name));
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.deepEqual(
      requests.map((r) => r._continue),
      [undefined, '2', '2'],
    );
  });

  it('reports every request sent to the observer: verb, status and seconds, a 429 and its retry each once', async () => {
    const { core } = fakeCore(['a', 'b', 'c'], (r, call) => (r._continue === '2' && call === 2 ? tooMany('0') : undefined));
    const seen: [string, number][] = [];
    const api = nodeApiOver(core, UNLIMITED, (verb, code, seconds) => {
      assert.ok(seconds >= 0 && seconds < 5, `seconds ${seconds}`);
      seen.push([verb, code]);
    });
    for await (const _page of api.listNodes({ pageSize: 2 }));
    assert.deepEqual(seen, [
      ['list', 200],
      ['list', 429],
      ['list', 200],
    ]);
  });

  it('ends with a retryable ListExpiredError when the continue token expires (410)', async () => {
    const gone = new ApiException(410, 'Unknown API Status Code!', JSON.stringify({ reason: 'Expired', message: 'too old resource version' }), {});
    const { core } = fakeCore(['a', 'b', 'c'], (r) => (r._continue ? gone : undefined));
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const page of nodeApiOver(core, UNLIMITED).listNodes({ pageSize: 2 })) seen.push(...page.map((n) => n.name));
      })(),
      (err: unknown) => err instanceof ListExpiredError && err.pages === 1 && err.cause === gone && /410 Gone/.test(err.message),
    );
    assert.deepEqual(seen, ['a', 'b'], 'the first page was yielded before the token expired');
    const expired = new ListExpiredError(1, gone);
    assert.equal(mapNodeError(expired, '*', 'list'), expired, 'left to the retry policy');
    assert.equal(expired.name, 'ListExpiredError', 'the failure type Temporal reports');
  });

  it('refuses a page size that would not bound the page', async () => {
    const { core, requests } = fakeCore(['a']);
    for (const pageSize of [0, -1, 1.5, Number.NaN]) {
      await assert.rejects(nodeApiOver(core, UNLIMITED).listNodes({ pageSize })[Symbol.asyncIterator]().next(), RangeError);
    }
    assert.equal(requests.length, 0);
  });
});

describe('createNodeApi over HTTP', () => {
  // A loopback HTTP server stands in for the API server, so the real client's
  // request building and ApiException (status, body, lower-case headers) are used.
  let server: Server;
  let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  const seen: { method?: string; url?: string; contentType?: string; acceptEncoding?: string }[] = [];
  let kc: KubeConfig;

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, contentType: req.headers['content-type'], acceptEncoding: req.headers['accept-encoding'] });
        handler(req, body, res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    kc = new KubeConfig();
    kc.loadFromClusterAndUser({ name: 'fake', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'nobody' });
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const status = (code: number, message: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });

  it('retries a 429 after its Retry-After header, as the client reports it', async () => {
    seen.length = 0;
    let calls = 0;
    handler = (_req, _body, res) => {
      if (++calls === 1) json(res, 429, status(429, 'too many requests, please try again later'), { 'Retry-After': '0' });
      else json(res, 200, node('n1'));
    };
    const state = await createNodeApi(kc, { qps: 0, burst: 1 }).readNode('n1');
    assert.equal(state.name, 'n1');
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      ['GET /api/v1/nodes/n1', 'GET /api/v1/nodes/n1'],
    );

    // Always 429: the header is read from the client's exception (0 s, not the 1 s fallback), then the 429 is returned.
    seen.length = 0;
    handler = (_req, _body, res) => json(res, 429, status(429, 'too many requests'), { 'Retry-After': '0' });
    const t0 = performance.now();
    const err = await createNodeApi(kc, { qps: 0, burst: 1 })
      .readNode('n1')
      .catch((e: unknown) => e);
    assert.ok(err instanceof ApiException && err.code === 429);
    assert.equal(retryAfterSeconds(err), 0);
    assert.equal(seen.length, MAX_TOO_MANY_REQUESTS_RETRIES + 1);
    assert.ok(performance.now() - t0 < MAX_TOO_MANY_REQUESTS_RETRIES * 1000, 'waited Retry-After: 0, not the 1 s fallback');
  });

  it('pages a LIST with limit and continue', async () => {
    seen.length = 0;
    handler = (req, _body, res) => {
      const cont = new URL(req.url ?? '', 'http://x').searchParams.get('continue');
      json(res, 200, cont ? { items: [node('c')], metadata: {} } : { items: [node('a'), node('b')], metadata: { continue: 'tok/2' } });
    };
    const pages: string[][] = [];
    for await (const page of createNodeApi(kc, { qps: 0, burst: 1 }).listNodes({ pageSize: 2 })) pages.push(page.map((n) => n.name));
    assert.deepEqual(pages, [['a', 'b'], ['c']]);
    const queries = seen.map((s) => Object.fromEntries(new URL(s.url ?? '', 'http://x').searchParams));
    assert.deepEqual(queries, [{ limit: '2' }, { limit: '2', continue: 'tok/2' }]);
  });

  it('lists uncompressed when the kubeconfig says disable-compression, gzipped otherwise', async () => {
    // Answers gzipped whenever the request accepts gzip, as the API server does for large ones.
    handler = (req, _body, res) => {
      const body = JSON.stringify({ items: [node('a')], metadata: {} });
      if (!/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) return json(res, 200, JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(body));
    };
    const names = async (from: KubeConfig) => {
      const listed: string[] = [];
      for await (const page of createNodeApi(from, { qps: 0, burst: 1 }).listNodes({ pageSize: 10 })) listed.push(...page.map((n) => n.name));
      return listed;
    };
    seen.length = 0;
    assert.deepEqual(await names(kc), ['a']);
    assert.match(seen[0]?.acceptEncoding ?? '', /\bgzip\b/, 'a kubeconfig without the field asks for gzip');

    const dir = mkdtempSync(join(tmpdir(), 'relabel-compression-'));
    try {
      const server = kc.getCurrentCluster()?.server;
      const config = (disable: string) => {
        const path = join(dir, `kubeconfig-${disable}`);
        const cluster = `{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true${disable ? `, disable-compression: ${disable}` : ''}}}`;
        writeFileSync(
          path,
          `clusters: [${cluster}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
        );
        return loadKubeConfig(path);
      };
      seen.length = 0;
      assert.deepEqual(await names(config('true')), ['a']);
      assert.equal(seen[0]?.acceptEncoding, 'identity');
      seen.length = 0;
      assert.deepEqual(await names(config('false')), ['a']);
      assert.match(seen[0]?.acceptEncoding ?? '', /\bgzip\b/, 'disable-compression: false asks for gzip');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('patches with a JSON merge patch as field manager relabel', async () => {
    seen.length = 0;
    let sent = '';
    handler = (_req, body, res) => {
      sent = body;
      json(res, 200, { metadata: { name: 'n1', resourceVersion: '2', labels: { k: 'w' } } });
    };
    const state = await createNodeApi(kc, { qps: 0, burst: 1 }).patchNode('n1', { metadata: { labels: { k: 'w' } } });
    assert.deepEqual(state.labels, { k: 'w' });
    assert.equal(seen[0]?.method, 'PATCH');
    assert.equal(seen[0]?.contentType, 'application/merge-patch+json');
    assert.equal(new URL(seen[0]?.url ?? '', 'http://x').searchParams.get('fieldManager'), 'relabel');
    assert.deepEqual(JSON.parse(sent), { metadata: { labels: { k: 'w' } } });
  });

  it('sends a list of operations as a JSON Patch', async () => {
    seen.length = 0;
    let sent = '';
    handler = (_req, body, res) => {
      sent = body;
      json(res, 200, { metadata: { name: 'n1', resourceVersion: '3', labels: { k: 'w' } } });
    };
    const ops = [
      { op: 'test' as const, path: '/metadata/labels/k', value: null },
      { op: 'add' as const, path: '/metadata/labels/k', value: 'w' },
    ];
    await createNodeApi(kc, { qps: 0, burst: 1 }).patchNode('n1', ops);
    assert.equal(seen[0]?.contentType, 'application/json-patch+json');
    assert.deepEqual(JSON.parse(sent), ops);
  });

  it("gives the client's ApiException, which mapNodeError classifies (401 and 403 told apart)", async () => {
    const api = createNodeApi(kc, { qps: 0, burst: 1 });
    handler = (_req, _body, res) => json(res, 403, status(403, 'nodes "n1" is forbidden: User "u" cannot patch resource "nodes"'));
    const forbidden = await api.patchNode('n1', {}).catch((err: unknown) => err);
    assert.ok(forbidden instanceof ApiException && forbidden.code === 403);
    const mapped403 = mapNodeError(forbidden, 'n1', 'patch');
    assert.ok(mapped403 instanceof ApplicationFailure);
    assert.equal(mapped403.type, 'Forbidden');
    assert.match(mapped403.message, /^patch on nodes "n1" denied for user "u" \(403\)/);

    handler = (_req, _body, res) => json(res, 401, status(401, 'Unauthorized'));
    const unauthorized = await api.readNode('n1').catch((err: unknown) => err);
    const mapped401 = mapNodeError(unauthorized, 'n1', 'read');
    assert.ok(mapped401 instanceof ApplicationFailure);
    assert.equal(mapped401.type, 'Unauthorized');
    assert.match(mapped401.message, /rejected relabel's credentials \(401\) reading node n1/);
  });
});
