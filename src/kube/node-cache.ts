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
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodePageLister } from './node-list.ts';
import { checkPageSize, limited, type NodeApi, type NodeState } from './nodes.ts';
import { WatchExpiredError, type NodeWatchApi } from './node-watch.ts';
import type { RateLimiter } from './rate-limit.ts';

/** Where a LIST was served from. */
export type NodeReadSource = 'cache' | 'list';

export interface NodeCacheOptions {
  /** Most Nodes held; with more in the cluster, the copy is dropped and every read LISTs. */
  maxNodes: number;
  /**
   * Wait, in ms, for the copy to reach the cluster's current version before
   * a read LISTs instead; longer, up to {@link MAX_FRESH_WAIT_MS}, when the
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
  /** Settles once the first build has ended, built or not. */
  ready(): Promise<void>;
};

/** Default wait for the copy to reach the cluster's version: a heartbeating cluster's Nodes change every few ms. */
export const DEFAULT_FRESH_WAIT_MS = 250;

/** Longest wait for the copy, whatever a LIST costs. */
export const MAX_FRESH_WAIT_MS = 5_000;

/** Longest pause between attempts to build the copy again after an error. */
const MAX_BACKOFF_MS = 30_000;

class TooManyNodes extends Error {}

/** The copy is fresh, or why a read LISTs: no copy (off, outgrown, being built), changes too rare to wait for, no version, or the watch not there in time. */
type Freshness = 'fresh' | 'not built' | 'quiet' | 'no version' | 'behind';

const asVersion = (rv: string): bigint | undefined => (/^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined);

/** The copy and the watch that keeps it: built at once, built again after the watch is lost. */
class WatchedNodes {
  private nodes = new Map<string, NodeState>();
  /** The Nodes' names in order, until one is added or deleted. */
  private names: string[] | undefined;
  /** The newest resourceVersion the watch has brought (a change or a bookmark). */
  private version: bigint | undefined;
  private live = false;
  private waiters: { target: bigint; resolve: () => void }[] = [];
  /** Until the first build ends (built or not), a read waits for it rather than LIST beside it. */
  private firstBuild = true;
  private readonly built: Promise<void>;
  private markBuilt: () => void = () => undefined;
  /** When the last change came, and the mean gap between changes (weighted to the recent ones). */
  private lastChange = 0;
  private gap = Infinity;
  /** When the copy was last built, and how long its LIST took. */
  private builtAt = 0;
  private listMs = 0;
  private readonly stop = new AbortController();

  private readonly watch: NodeWatchApi;
  private readonly currentVersion: () => Promise<string>;
  private readonly options: Required<Pick<NodeCacheOptions, 'maxNodes' | 'freshWaitMs' | 'pageSize'>> & Pick<NodeCacheOptions, 'log'>;

  constructor(watch: NodeWatchApi, currentVersion: () => Promise<string>, options: WatchedNodes['options']) {
    this.watch = watch;
    this.currentVersion = currentVersion;
    this.options = options;
    this.built = new Promise((resolve) => (this.markBuilt = resolve));
    this.keep()
      .catch((err: unknown) => this.options.log?.('warn', 'node cache stopped', { error: String(err).slice(0, 300) }))
      .finally(() => this.firstBuilt());
  }

  get size(): number {
    return this.nodes.size;
  }

  close(): void {
    this.stop.abort();
  }

  /** Settles once the first build has ended, built or not. */
  ready(): Promise<void> {
    return this.built;
  }

  /** The Nodes in name order, each as it is when its page is handed out. */
  *pages(pageSize: number): Generator<NodeState[]> {
    const order = (this.names ??= [...this.nodes.keys()].sort());
    for (let i = 0; i < order.length; i += pageSize) {
      const page: NodeState[] = [];
      for (let k = i; k < Math.min(order.length, i + pageSize); k++) {
        const node = this.nodes.get(order[k] as string);
        if (node) page.push(node);
      }
      yield page;
    }
  }

  /**
   * Whether the copy holds every Node change up to the cluster's version
   * now (waiting at most `freshWaitMs`, or what the last build's LIST
   * took): `fresh`, or why not.
   */
  async fresh(): Promise<Freshness> {
    if (this.firstBuild) await this.built;
    if (!this.live || this.stop.signal.aborted) return 'not built';
    const freshWaitMs = Math.max(this.options.freshWaitMs, Math.min(this.listMs, MAX_FRESH_WAIT_MS));
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
    if (this.reached(target)) return 'fresh';
    const waiter = { target, resolve: () => undefined as void };
    const reached = new Promise<void>((resolve) => this.waiters.push(Object.assign(waiter, { resolve })));
    await Promise.race([reached, sleep(freshWaitMs, undefined, { ref: false })]);
    this.waiters = this.waiters.filter((w) => w !== waiter);
    return this.live && this.reached(target) ? 'fresh' : 'behind';
  }

  private reached(target: bigint): boolean {
    return this.version !== undefined && this.version >= target;
  }

  private firstBuilt(): void {
    this.firstBuild = false;
    this.markBuilt();
  }

  private readonly advance = (rv: string): void => {
    const v = asVersion(rv);
    if (v === undefined || (this.version !== undefined && v <= this.version)) return;
    this.version = v;
    if (this.waiters.length === 0) return;
    const met = this.waiters.filter((w) => w.target <= v);
    this.waiters = this.waiters.filter((w) => w.target > v);
    for (const w of met) w.resolve();
  };

  private lose(): void {
    this.live = false;
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  private drop(message: string, fields: Record<string, unknown>): void {
    this.lose();
    this.nodes = new Map();
    this.names = undefined;
    this.options.log?.('warn', message, fields);
  }

  /** Builds the copy, then follows the watch, building it again whenever the watch is lost, until closed. */
  private async keep(): Promise<void> {
    const { maxNodes, pageSize, log } = this.options;
    for (let failures = 0; !this.stop.signal.aborted;) {
      try {
        const fresh = new Map<string, NodeState>();
        const listing = performance.now();
        let rv = await this.watch.list(pageSize, (page) => {
          for (const node of page) fresh.set(node.name, node);
          if (fresh.size > maxNodes) throw new TooManyNodes();
        });
        if (asVersion(rv) === undefined) {
          return this.drop('node cache off: the API server answers resourceVersions that are not integers', { resourceVersion: rv.slice(0, 40) });
        }
        this.nodes = fresh;
        this.names = undefined;
        this.version = undefined;
        this.advance(rv);
        this.live = true;
        this.builtAt = performance.now();
        this.listMs = this.builtAt - listing;
        failures = 0;
        log?.('info', 'node cache built', { nodes: fresh.size, resourceVersion: rv, listMs: Math.round(this.listMs) });
        this.firstBuilt();
        while (!this.stop.signal.aborted) rv = await this.follow(rv);
      } catch (err) {
        if (err instanceof TooManyNodes) return this.drop(`node cache off: the cluster has more than ${maxNodes} Nodes; every read LISTs them`, { maxNodes });
        this.lose();
        if (this.stop.signal.aborted) return;
        if (!(err instanceof WatchExpiredError)) failures++;
        log?.('warn', 'node cache lost; building it again', { error: String(err).slice(0, 300), failures });
        this.firstBuilt();
        if (failures > 0) await sleep(Math.min(MAX_BACKOFF_MS, 500 * 2 ** (failures - 1)), undefined, { signal: this.stop.signal }).catch(() => undefined);
      }
    }
  }

  /** One watch from `rv`, applied to the copy; resolves with the version the next one goes on from. */
  private async follow(rv: string): Promise<string> {
    const watching = new AbortController();
    const abort = () => watching.abort();
    this.stop.signal.addEventListener('abort', abort, { once: true });
    let tooMany = false;
    try {
      const next = await this.watch.watch(
        rv,
        ({ type, node }) => {
          if (tooMany) return;
          this.changed();
          if (type === 'DELETED') {
            if (this.nodes.delete(node.name)) this.names = undefined;
          } else if (this.nodes.has(node.name)) {
            this.nodes.set(node.name, node);
          } else if (this.nodes.size >= this.options.maxNodes) {
            tooMany = true;
            return watching.abort();
          } else {
            this.nodes.set(node.name, node);
            this.names = undefined;
          }
          this.advance(node.resourceVersion);
        },
        watching.signal,
        this.advance,
      );
      if (tooMany) throw new TooManyNodes();
      this.advance(next);
      return next;
    } finally {
      this.stop.signal.removeEventListener('abort', abort);
    }
  }

  private changed(): void {
    const now = performance.now();
    if (this.lastChange > 0) this.gap = this.gap === Infinity ? now - this.lastChange : 0.9 * this.gap + 0.1 * (now - this.lastChange);
    this.lastChange = now;
  }
}

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
    ready: () => copy.ready(),
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
