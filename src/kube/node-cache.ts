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
 * The copy is the worker's node informer's (node-informer.ts), which also
 * feeds the join watchers: it holds at most `maxNodes` Nodes (the fields
 * relabel reads, a few hundred bytes to a kilobyte and a half each), so a
 * larger cluster is listed on every read, and the worker's memory stays
 * bounded.
 */
import type { NodePageLister } from './node-list.ts';
import { asVersion, type NodeInformer } from './node-informer.ts';
import { checkPageSize, limited, type NodeApi } from './nodes.ts';
import type { RateLimiter } from './rate-limit.ts';

/** Where a LIST was served from. */
export type NodeReadSource = 'cache' | 'list';

/** The copy is fresh, or why a read LISTs: no copy (off, outgrown, being built), changes too rare to wait for, no version, or the watch not there in time. */
export type Freshness = 'fresh' | 'not built' | 'quiet' | 'no version' | 'behind';

/** Default wait for the copy to reach the cluster's version: a heartbeating cluster's Nodes change every few ms. */
export const DEFAULT_FRESH_WAIT_MS = 250;

/** Longest wait for the copy, whatever a LIST costs. */
export const MAX_FRESH_WAIT_MS = 5_000;

export interface NodeCacheOptions {
  /**
   * Wait, in ms, for the copy to reach the cluster's current version before
   * a read LISTs instead; longer, up to MAX_FRESH_WAIT_MS (5 s), when the
   * copy's own last LIST took longer: the LIST a read would fall back to
   * costs about as much.
   */
  freshWaitMs?: number;
  /** Told of every LIST served, and from where. Must not throw. */
  onRead?: (source: NodeReadSource) => void;
  /** Told of each read (`info`). Must not throw. */
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** A {@link NodeApi} whose LISTs come from the informer's copy when it is fresh; `close` stops following it. */
export type CachedNodeApi = NodeApi & {
  close(): void;
  readonly size: number;
  /** Settles once the informer's first build has ended, built or not; with `stalledMs`, also once the build has received no page for that long. */
  ready(stalledMs?: number): Promise<void>;
};

/**
 * How fresh the informer's copy is: it follows the informer as a subscriber
 * to learn when the copy was built, how long its LIST took and how often the
 * Nodes change.
 */
class CopyFreshness {
  /** When the last change came, and the mean gap between changes (weighted to the recent ones). */
  private lastChange = 0;
  private gap = Infinity;
  /** When the copy was last built, and how long its LIST took. */
  private builtAt = 0;
  private listMs = 0;
  readonly subscription;
  private readonly informer: NodeInformer;
  private readonly currentVersion: () => Promise<string>;
  private readonly freshWaitMs: number;

  constructor(informer: NodeInformer, currentVersion: () => Promise<string>, freshWaitMs: number) {
    this.informer = informer;
    this.currentVersion = currentVersion;
    this.freshWaitMs = freshWaitMs;
    this.subscription = informer.subscribe(
      {
        synced: ({ fromCopy, listMs }) => {
          if (fromCopy) return;
          this.builtAt = performance.now();
          this.listMs = listMs;
        },
        changed: () => this.changed(),
      },
      { passive: true },
    );
  }

  /**
   * Whether the copy holds every Node change up to the cluster's version
   * now (waiting at most `freshWaitMs`, or what the last build's LIST
   * took): `fresh`, or why not. Until the first build ends (built or not),
   * a read waits for it rather than LIST beside it.
   */
  async fresh(): Promise<Freshness> {
    await this.informer.ready();
    if (!this.informer.current) return 'not built';
    const freshWaitMs = Math.max(this.freshWaitMs, Math.min(this.listMs, MAX_FRESH_WAIT_MS));
    // Changes further apart than the wait, or none for longer: the next one would likely come too late.
    // Right after a build nothing is known yet, and the read waits.
    const since = performance.now() - Math.max(this.lastChange, this.builtAt);
    if (since > freshWaitMs || (this.gap !== Infinity && this.gap > freshWaitMs)) return 'quiet';
    let target: bigint | undefined;
    try {
      target = asVersion(await this.currentVersion());
    } catch {
      // The LIST that follows meets the same error and reports it.
      return 'no version';
    }
    if (target === undefined) return 'no version';
    return (await this.informer.reaches(target, freshWaitMs)) ? 'fresh' : 'behind';
  }

  private changed(): void {
    const now = performance.now();
    if (this.lastChange > 0) this.gap = this.gap === Infinity ? now - this.lastChange : 0.9 * this.gap + 0.1 * (now - this.lastChange);
    this.lastChange = now;
  }
}

/**
 * `api` with the copy of the Nodes `informer` keeps; `currentVersion`
 * answers the cluster's resourceVersion now (see {@link clusterVersion}).
 * A read while the copy is first built waits for it. GETs and patches go to
 * `api` as they are.
 */
export function cachedNodeApi(api: NodeApi, informer: NodeInformer, currentVersion: () => Promise<string>, options: NodeCacheOptions = {}): CachedNodeApi {
  const copy = new CopyFreshness(informer, currentVersion, options.freshWaitMs ?? DEFAULT_FRESH_WAIT_MS);
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
      for await (const page of source === 'cache' ? informer.pages(opts.pageSize) : api.listNodes(opts)) {
        nodes += page.length;
        yield page;
      }
      options.log?.('info', 'nodes read', { source, freshness, checkedMs, nodes, ms: Math.round(performance.now() - started) });
    },
    close: () => copy.subscription.close(),
    ready: (stalledMs) => informer.ready(stalledMs),
    get size() {
      return informer.size;
    },
  };
}

/** The cluster's resourceVersion now: the version of a LIST of one Node, which the server answers consistently. */
export async function clusterVersion(lister: NodePageLister, limiter: RateLimiter): Promise<string> {
  const page = await limited(limiter, () => lister({ limit: 1 }));
  return page.metadata?.resourceVersion ?? '';
}
