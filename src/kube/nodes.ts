/**
 * The small slice of the Kubernetes API relabel uses: read, list and patch
 * Nodes. Everything else talks to this interface, so error mapping can be
 * unit-tested against a fake and proven against the real server. Every
 * request takes a token from a client-side rate limiter first, and a 429
 * answer is retried after the server's Retry-After.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
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
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
}

/** Read and patch Nodes. Errors are the client's; see `kube-errors.ts` for their mapping. */
export interface NodeApi {
  /** Reads one Node. */
  readNode(name: string): Promise<NodeState>;
  /**
   * Lists every Node, one page of at most `pageSize` at a time (limit and
   * continue), so a caller never holds more than a page. An expired
   * continue token (410) ends the iteration with that error.
   */
  listNodes(options: { pageSize: number }): AsyncIterable<NodeState[]>;
  /** Sends one JSON merge patch to a Node and returns its new state. */
  patchNode(name: string, patch: object): Promise<NodeState>;
}

/**
 * Loads a kubeconfig: the file at `path` when given, else `KUBECONFIG`, the
 * in-cluster service account, or ~/.kube/config (the client's default order).
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** Converts the client's Node object into {@link NodeState}. */
export function toNodeState(node: V1Node): NodeState {
  return {
    name: node.metadata?.name ?? '',
    resourceVersion: node.metadata?.resourceVersion ?? '',
    labels: { ...(node.metadata?.labels ?? {}) },
    annotations: { ...(node.metadata?.annotations ?? {}) },
    taints: (node.spec?.taints ?? []).map((t) => ({
      key: t.key,
      effect: t.effect,
      ...(t.value === undefined ? {} : { value: t.value }),
    })),
  };
}

/** Seconds a 429 answer asks to wait (Retry-After, capped), 1 when it names none. */
export function retryAfterSeconds(err: unknown): number | undefined {
  if (!(err instanceof ApiException) || err.code !== 429) return undefined;
  const header = Number(err.headers?.['retry-after'] ?? err.headers?.['Retry-After']);
  return Number.isFinite(header) && header >= 0 ? Math.min(header, MAX_RETRY_AFTER_S) : 1;
}

/**
 * Sends `request` after taking a token from `limiter`; a 429 answer waits
 * its Retry-After and tries again, up to {@link MAX_TOO_MANY_REQUESTS_RETRIES}
 * times, then returns the 429 (retryable for the caller).
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
 * A {@link NodeApi} backed by @kubernetes/client-node, limited to `qps`
 * requests a second with bursts of `burst` (`qps` 0: no limit).
 */
export function createNodeApi(kc: KubeConfig, rate: { qps: number; burst: number } = { qps: DEFAULT_KUBE_QPS, burst: DEFAULT_KUBE_BURST }): NodeApi {
  reuseConnections(kc);
  const core = kc.makeApiClient(CoreV1Api);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const limiter = tokenBucket(rate.qps, rate.burst);
  return {
    async readNode(name) {
      return toNodeState(await limited(limiter, () => core.readNode({ name })));
    },
    async *listNodes({ pageSize }) {
      let cont: string | undefined;
      do {
        const page = await limited(limiter, () => core.listNode({ limit: pageSize, ...(cont ? { _continue: cont } : {}) }));
        yield page.items.map(toNodeState);
        cont = page.metadata?._continue || undefined;
      } while (cont);
    },
    async patchNode(name, patch) {
      return toNodeState(await limited(limiter, () => core.patchNode({ name, body: patch, fieldManager: 'relabel' }, mergePatch)));
    },
  };
}
