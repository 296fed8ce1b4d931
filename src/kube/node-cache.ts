/**
 * A worker's own copy of the cluster's Nodes, kept by a watch, as
 * Kubernetes' own controllers keep theirs. A LIST of every Node is most of
 * what a run that changes nothing costs, on the API server above all;
 * served from the copy, it costs one LIST of a single Node instead.
 *
 * A read is as fresh as a LIST: it first asks the cluster for its current
 * resourceVersion (a LIST limited to one Node, which the server answers
 * consistently), then waits until the watch has delivered everything up to
 * it (a watch sends its changes in resourceVersion order, so a change or a
 * bookmark past it means every earlier Node change is in the copy). On a
 * cluster whose Nodes change (heartbeats, runs) that takes milliseconds; on
 * a quiet one, or while the copy is being built again, the read LISTs as it
 * would without a copy. resourceVersions are compared as the integers they
 * are on every Kubernetes release; a server whose versions are not digits
 * gets no copy.
 *
 * The copy holds at most `maxNodes` Nodes (the fields relabel reads, a few
 * hundred bytes to a kilobyte and a half each): a larger cluster is listed
 * on every read, and the worker's memory stays bounded.
 */
import type { NodePageLister } from './node-list.ts';
import { checkPageSize, limited, type NodeApi } from './nodes.ts';
import type { NodeWatchApi } from './node-watch.ts';
import type { RateLimiter } from './rate-limit.ts';
import { DEFAULT_FRESH_WAIT_MS, WatchedNodes } from './watched-nodes.ts';

/** Where a LIST was served from. */
export type NodeReadSource = 'cache' | 'list';

export interface NodeCacheOptions {
  /** Most Nodes held; with more in the cluster, the copy is dropped and every read LISTs. */
  maxNodes: number;
  /**
   * Wait, in ms, for the copy to reach the cluster's current version before
   * a read LISTs instead; longer, up to MAX_FRESH_WAIT_MS (5 s), when the
   * copy's own last LIST took longer: the LIST a read would fall back to
   * costs about as much.
   */
  freshWaitMs?: number;
  /** Nodes a page when the copy is built (the watch API's LIST). */
  pageSize?: number;
  /** Told of every LIST served, and from where. Must not throw. */
  onRead?: (source: NodeReadSource) => void;
  /** Told when the copy is built (`info`), lost or dropped (`warn`), and of each read (`info`). Must not throw. */
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** A {@link NodeApi} whose LISTs come from the copy when it is fresh; `close` stops the watch. */
export type CachedNodeApi = NodeApi & {
  close(): void;
  readonly size: number;
  /** Settles once the first build has ended, built or not; with `stalledMs`, also once the build has received no page for that long. */
  ready(stalledMs?: number): Promise<void>;
};

/**
 * `api` with a copy of the Nodes kept by `watch`; `currentVersion` answers
 * the cluster's resourceVersion now (see {@link clusterVersion}). The copy
 * starts building at once; a read while it is first built waits for it.
 * GETs and patches go to `api` as they are.
 */
export function cachedNodeApi(api: NodeApi, watch: NodeWatchApi, currentVersion: () => Promise<string>, options: NodeCacheOptions): CachedNodeApi {
  const copy = new WatchedNodes(watch, currentVersion, {
    maxNodes: options.maxNodes,
    freshWaitMs: options.freshWaitMs ?? DEFAULT_FRESH_WAIT_MS,
    pageSize: options.pageSize ?? 500,
    log: options.log,
  });
  return {
    readNode: (name) => api.readNode(name),
    patchNode: (name, patch) => api.patchNode(name, patch),
    async *listNodes(opts) {
      checkPageSize(opts.pageSize);
      const started = performance.now();
      const freshness = await copy.fresh();
      const source = freshness === 'fresh' ? 'cache' : 'list';
      options.onRead?.(source);
      const checkedMs = Math.round(performance.now() - started);
      let nodes = 0;
      for await (const page of source === 'cache' ? copy.pages(opts.pageSize) : api.listNodes(opts)) {
        nodes += page.length;
        yield page;
      }
      options.log?.('info', 'nodes read', { source, freshness, checkedMs, nodes, ms: Math.round(performance.now() - started) });
    },
    close: () => copy.close(),
    ready: (stalledMs) => copy.ready(stalledMs),
    get size() {
      return copy.size;
    },
  };
}

/** The cluster's resourceVersion now: the version of a LIST of one Node, which the server answers consistently. */
export async function clusterVersion(lister: NodePageLister, limiter: RateLimiter): Promise<string> {
  const page = await limited(limiter, () => lister({ limit: 1 }));
  return page.metadata?.resourceVersion ?? '';
}
