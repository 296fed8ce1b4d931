/**
 * The small slice of the Kubernetes API relabel uses: read, list and patch
 * Nodes. Everything else talks to this interface, so error mapping can be
 * unit-tested against a fake and proven against the real server. Every
 * request takes a token from a client-side rate limiter first, and a 429
 * answer is retried after the server's Retry-After.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions, type V1Node, type V1NodeList } from '@kubernetes/client-node';
import type { JsonPatchOp } from '../core/plan/node-guard.ts';
import { nodePageLister, type NodePageLister } from './node-list.ts';
import { tokenBucket, type RateLimiter } from './rate-limit.ts';

/** Default requests per second to the API server (client-go's controllers commonly run 50/100). */
export const DEFAULT_KUBE_QPS = 50;

/** Default requests allowed at once above the rate. */
export const DEFAULT_KUBE_BURST = 100;

/** Times a request answered 429 is retried after the server's Retry-After before the error is returned. */
export const MAX_TOO_MANY_REQUESTS_RETRIES = 5;

/** Longest Retry-After honoured, in seconds. */
const MAX_RETRY_AFTER_S = 60;

/** What relabel needs to know of a Node. */
export interface NodeState {
  name: string;
  /** The Node's uid, when the server gave one (Events name the Node by it). */
  uid?: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
}

/**
 * Read, list and patch Nodes. Errors are the client's `ApiException` (after
 * any 429 retries), a {@link ListExpiredError}, or network errors; see
 * `errors.ts` for how callers map them.
 */
export interface NodeApi {
  /** Reads one Node. */
  readNode(name: string): Promise<NodeState>;
  /**
   * Lists every Node, one page of at most `pageSize` (a whole number ≥ 1)
   * at a time with limit and continue; each page is one request and takes
   * one rate-limit token. The next page is asked for as soon as its
   * continue token is known (a protobuf answer opens with it), so the
   * server prepares it while this one is read: at most one page is read
   * ahead of the one the caller holds. A
   * continue token that expires between pages (410 Gone) ends the iteration
   * with a retryable {@link ListExpiredError}; the list is not restarted
   * here, since the pages already yielded would be yielded again.
   */
  listNodes(options: { pageSize: number }): AsyncIterable<NodeState[]>;
  /**
   * Sends one patch to a Node and returns its new state: a list of
   * operations as a JSON Patch (RFC 6902; relabel's own writes, whose
   * failed `test` is answered 422, see `isStaleWrite`), an object as a JSON
   * merge patch (RFC 7386).
   */
  patchNode(name: string, patch: readonly JsonPatchOp[] | object): Promise<NodeState>;
}

export { KubeconfigError, loadKubeConfig } from './kubeconfig.ts';

/**
 * A time as the API server writes it (RFC 3339 in UTC, whole seconds): the
 * client turns it into a Date, and a guard tests it against the stored text.
 */
function rfc3339(time: Date | string): string {
  const date = typeof time === 'string' ? new Date(time) : time;
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Converts the client's Node object into {@link NodeState}. */
export function toNodeState(node: V1Node): NodeState {
  return {
    name: node.metadata?.name ?? '',
    ...(node.metadata?.uid ? { uid: node.metadata.uid } : {}),
    resourceVersion: node.metadata?.resourceVersion ?? '',
    labels: { ...(node.metadata?.labels ?? {}) },
    annotations: { ...(node.metadata?.annotations ?? {}) },
    taints: (node.spec?.taints ?? []).map((t) => ({
      key: t.key,
      effect: t.effect,
      ...(t.value === undefined ? {} : { value: t.value }),
      ...(t.timeAdded ? { timeAdded: rfc3339(t.timeAdded) } : {}),
    })),
  };
}

/**
 * Seconds a 429 answer asks to wait before the request is sent again: its
 * Retry-After (delay-seconds, or an HTTP-date counted from `now`), capped at
 * 60 s; 1 s when it names none or one that does not parse. `undefined` for
 * anything but a 429 from the API server: a 503's Retry-After is left to the
 * caller's retry policy, as every other error is.
 */
export function retryAfterSeconds(err: unknown, now: number = Date.now()): number | undefined {
  if (!(err instanceof ApiException) || err.code !== 429) return undefined;
  // The client copies fetch's headers, whose names are lower case; a hand-built exception may not be.
  const headers = (err.headers ?? {}) as Record<string, string | undefined>;
  const header = (headers['retry-after'] ?? headers['Retry-After'] ?? '').trim();
  let seconds = /^\d+$/.test(header) ? Number(header) : NaN;
  // An HTTP-date starts with the day's name; Date.parse alone would take '-5' or '1.5' for dates.
  if (Number.isNaN(seconds) && /^[A-Za-z]{3}/.test(header)) {
    const at = Date.parse(header);
    if (!Number.isNaN(at)) seconds = Math.max(0, Math.ceil((at - now) / 1000));
  }
  return Number.isNaN(seconds) ? 1 : Math.min(seconds, MAX_RETRY_AFTER_S);
}

/**
 * Sends `request` after taking a token from `limiter`; a 429 answer waits
 * its Retry-After ({@link retryAfterSeconds}) and sends it again, taking a
 * new token, up to {@link MAX_TOO_MANY_REQUESTS_RETRIES} times, then throws
 * that 429 (which the caller's retry policy still retries). Any other error
 * is thrown at once. `wait` is injectable for tests.
 */
export async function limited<T>(limiter: RateLimiter, request: () => Promise<T>, wait: (ms: number) => Promise<unknown> = sleep): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    await limiter.acquire();
    try {
      return await request();
    } catch (err) {
      const seconds = retryAfterSeconds(err);
      if (seconds === undefined || attempt >= MAX_TOO_MANY_REQUESTS_RETRIES) throw err;
      await wait(seconds * 1000);
    }
  }
}

/**
 * Makes `kc` reuse one connection pool for every request. The client builds
 * a new undici Agent for each request, so each one opens (and the API
 * server accepts) a fresh TLS connection; one kept-alive pool per
 * KubeConfig removes that cost, which dominates when thousands of nodes are
 * patched. The options come from the same cluster and user every time.
 */
function reuseConnections(kc: KubeConfig): void {
  const target = kc as unknown as { createDispatcher?: (...args: unknown[]) => unknown };
  const create = target.createDispatcher;
  if (typeof create !== 'function') return;
  let shared: unknown;
  target.createDispatcher = (...args: unknown[]) => (shared ??= create.apply(kc, args));
}

/**
 * A paginated LIST whose continue token expired (410 Gone) before its last
 * page: the server compacted the revision the list was reading. Retryable:
 * the caller lists again from the start (pages it already consumed come
 * again). `cause` is the client's 410 `ApiException`; `kind` names what
 * was listed (Node unless told).
 */
export class ListExpiredError extends Error {
  override readonly name = 'ListExpiredError';
  /** Pages yielded before the token expired. */
  readonly pages: number;
  constructor(pages: number, cause: unknown, kind = 'Node') {
    super(`the ${kind} list expired after ${pages} page(s) (410 Gone: continue token too old); list again from the start`, { cause });
    this.pages = pages;
  }
}

/** Refuses a page size that is not a whole number ≥ 1 (limit 0 would ask the server for everything in one answer). */
export function checkPageSize(pageSize: number): void {
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a whole number ≥ 1, not ${pageSize}`);
}

/** One LIST page asked for: its continue token, the next page's (as soon as known) and the page itself. */
type PageInFlight = { token: string | undefined; next: Promise<string>; page: Promise<V1NodeList> };

/** The requests a {@link NodeApi} sends: the client's CoreV1Api GET and PATCH, and pages of a LIST read as plain JSON (`node-list.ts`). */
export type NodeRequests = Pick<CoreV1Api, 'readNode' | 'patchNode'> & { listNode: NodePageLister };

/** The kinds of request a {@link NodeApi} sends. */
export type NodeVerb = 'get' | 'list' | 'patch';

/**
 * Told of every request a {@link NodeApi} sends (each LIST page, each retry
 * after a 429): its verb, the HTTP status of the answer (0 when none came:
 * a network error) and the seconds from sending to the answer, the wait for
 * a rate-limit token excluded. Must not throw.
 */
export type NodeRequestObserver = (verb: NodeVerb, code: number, seconds: number) => void;

/** `request`, timed and reported to `observe` when there is one. */
function observed<T>(observe: NodeRequestObserver | undefined, verb: NodeVerb, request: () => Promise<T>): () => Promise<T> {
  if (!observe) return request;
  return async () => {
    const started = performance.now();
    try {
      const answer = await request();
      observe(verb, 200, (performance.now() - started) / 1000);
      return answer;
    } catch (err) {
      observe(verb, err instanceof ApiException ? err.code : 0, (performance.now() - started) / 1000);
      throw err;
    }
  };
}

/**
 * A {@link NodeApi} over `core`: every request (each LIST page, GET, PATCH,
 * and each retry after a 429) takes a token from `limiter` first, and is
 * reported to `observe` when given. Patches carry field manager `relabel`.
 */
export function nodeApiOver(core: NodeRequests, limiter: RateLimiter, observe?: NodeRequestObserver): NodeApi {
  const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    async readNode(name) {
      return toNodeState(
        await limited(
          limiter,
          observed(observe, 'get', () => core.readNode({ name })),
        ),
      );
    },
    async *listNodes({ pageSize }) {
      checkPageSize(pageSize);
      const ask = (token: string | undefined): PageInFlight => {
        let tell: (token: string) => void = () => undefined;
        const next = new Promise<string>((resolve) => (tell = resolve));
        const page = limited(
          limiter,
          observed(observe, 'list', () => core.listNode({ limit: pageSize, ...(token ? { _continue: token } : {}), onContinue: tell })),
        );
        // Whatever comes first tells the next token: the answer's first bytes, or the whole page. The
        // failure handler also keeps a page read ahead, which a caller that stops early never awaits, from going unhandled.
        page.then(
          (p) => tell(p.metadata?._continue ?? ''),
          () => tell(''),
        );
        return { token, next, page };
      };
      let pages = 0;
      for (let current: PageInFlight | undefined = ask(undefined); current;) {
        const token: string = await current.next;
        // The next page is asked for as soon as its token is known, while this one is still read.
        const following: PageInFlight | undefined = token ? ask(token) : undefined;
        let page;
        try {
          page = await current.page;
        } catch (err) {
          if (current.token && err instanceof ApiException && err.code === 410) throw new ListExpiredError(pages, err);
          throw err;
        }
        // The token read from the answer's first bytes must be the one the whole answer gives.
        if ((page.metadata?._continue ?? '') !== token) throw new Error(`LIST page ${pages + 1}: continue token read early differs from the page's`);
        pages++;
        yield page.items.map(toNodeState);
        current = following;
      }
    },
    async patchNode(name, patch) {
      return toNodeState(
        await limited(
          limiter,
          observed(observe, 'patch', () => core.patchNode({ name, body: patch, fieldManager: 'relabel' }, Array.isArray(patch) ? jsonPatch : mergePatch)),
        ),
      );
    },
  };
}

/**
 * A {@link NodeApi} backed by @kubernetes/client-node, limited to `qps`
 * requests a second with bursts of `burst` (defaults
 * {@link DEFAULT_KUBE_QPS} / {@link DEFAULT_KUBE_BURST}); `qps` ≤ 0 or not
 * finite means no limit. Given a `limiter`, that one is used instead (one
 * limiter shared with the Event requests). Requests share one kept-alive
 * connection pool (every client made from `kc` afterwards too) and are
 * reported to `observe` when given.
 */
export function createNodeApi(
  kc: KubeConfig,
  rate: { qps: number; burst: number } = { qps: DEFAULT_KUBE_QPS, burst: DEFAULT_KUBE_BURST },
  observe?: NodeRequestObserver,
  limiter: RateLimiter = tokenBucket(rate.qps, rate.burst),
): NodeApi {
  reuseConnections(kc);
  const core = kc.makeApiClient(CoreV1Api);
  return nodeApiOver({ readNode: (p) => core.readNode(p), patchNode: (p, o) => core.patchNode(p, o), listNode: nodePageLister(kc) }, limiter, observe);
}
