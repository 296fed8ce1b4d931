/**
 * The worker's one list-and-watch of Nodes, as client-go's informers and
 * NFD keep theirs: one LIST, a watch from that LIST's version, a LIST again
 * when the watch is lost, and every part of the worker that follows Nodes
 * (the node cache, the join watchers) a subscriber of it, told of each
 * LIST's Nodes (a sync) and of each change after it.
 *
 * It keeps a copy of the Nodes (the store the node cache reads) while the
 * cluster has at most `maxNodes`; past that, or with `maxNodes` 0, it keeps
 * none, and runs only while a subscriber follows it. See node-cache.ts for
 * how a read uses the copy, and node-subscribers.ts for what a subscriber
 * is told.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { backoff, RELIST_BACKOFF } from './backoff.ts';
import type { NodeState } from './nodes.ts';
import { Subscribers, type NodeSubscriber, type NodeSubscription } from './node-subscribers.ts';
import { WatchExpiredError, type NodeWatchApi } from './node-watch.ts';

export type { NodeSubscriber, NodeSubscription, NodeSync } from './node-subscribers.ts';

/** How the informer lists and how many Nodes it keeps a copy of. */
export interface NodeInformerOptions {
  /** Most Nodes the copy holds (0: no copy); with more in the cluster, the copy is dropped for good. */
  maxNodes: number;
  /** Nodes a LIST page (500 by default). */
  pageSize?: number;
  /** Told when a LIST ends (`info`), when the watch is lost or the copy dropped (`warn`). Must not throw. */
  log?: ((level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void) | undefined;
}

/** The watch a build starts: its loop (which never rejects) and the error that ended it, if one did. */
type BuildWatch = { following?: Promise<void>; lost?: unknown };

/** The build was ended on purpose: no one follows the Nodes any longer, or the informer closed. */
class NotWanted extends Error {}

/** A resourceVersion as the integer it is on every Kubernetes release; undefined when it is not one. */
export const asVersion = (rv: string): bigint | undefined => (/^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined);

/** One list-and-watch of every Node, its copy, and its subscribers. */
export class NodeInformer {
  private nodes: Map<string, NodeState> | undefined = new Map();
  /** The Nodes' names in order, until one is added or deleted. */
  private names: string[] | undefined;
  /** The newest resourceVersion the watch has brought (a change or a bookmark), as an integer. */
  private version: bigint | undefined;
  /** The newest resourceVersion listed or watched, as the server wrote it. */
  private lastVersion = '';
  private live = false;
  private waiters: { target: bigint; resolve: () => void }[] = [];
  private readonly built: Promise<void>;
  private markBuilt: () => void = () => undefined;
  private readonly stop = new AbortController();
  private attempt: AbortController | undefined;
  private running = false;
  /** When the build began or last received a page. */
  private progressAt = performance.now();
  /** While the copy is built: the Nodes the watch deleted, which a later page must not add back. */
  private deletedWhileListing: Set<string> | undefined;
  private readonly subscribers: Subscribers;
  private readonly watch: NodeWatchApi;
  private readonly options: NodeInformerOptions;

  /** Starts right after it is built when it keeps a copy (`maxNodes` > 0); otherwise at its first subscriber. */
  constructor(watch: NodeWatchApi, options: NodeInformerOptions) {
    this.watch = watch;
    this.options = options;
    if (options.maxNodes <= 0) this.nodes = undefined;
    this.built = new Promise((resolve) => (this.markBuilt = resolve));
    this.subscribers = new Subscribers({
      pages: () => (this.live && this.nodes ? this.pages(this.options.pageSize ?? 500) : undefined),
      version: () => this.lastVersion,
      relist: () => this.attempt?.abort(),
      membership: () => (this.wanted() ? this.start() : this.attempt?.abort()),
    });
    // Once the caller has subscribed what it builds beside it (the node cache): the first LIST syncs it.
    queueMicrotask(() => this.start());
  }

  /** Nodes in the copy (0 without one). */
  get size(): number {
    return this.nodes?.size ?? 0;
  }

  /** The newest resourceVersion listed or watched ('' before the first LIST). */
  get resourceVersion(): string {
    return this.lastVersion;
  }

  /** Whether the copy holds every Node as of {@link resourceVersion}: built, and its watch following. */
  get current(): boolean {
    return this.live && this.nodes !== undefined && !this.stop.signal.aborted;
  }

  /** Stops the list-and-watch for good; subscribers are told nothing more. */
  close(): void {
    this.stop.abort();
    this.attempt?.abort();
  }

  /**
   * Follows the Nodes for `subscriber` until the subscription closes: a sync
   * first (see {@link NodeSubscriber}), then each change. A `passive` one
   * (the node cache, which reads the copy) asks for no sync of its own and
   * does not keep the informer running: it is told of the informer's own
   * LISTs and changes while something else keeps it going.
   */
  subscribe(subscriber: NodeSubscriber, options: { passive?: boolean } = {}): NodeSubscription {
    return this.subscribers.add(subscriber, options.passive === true);
  }

  /**
   * Settles once the first build has ended, built or not; with `stalledMs`,
   * also once the build has received no page for that long (an API server
   * that does not answer), however long a build that goes on takes.
   */
  async ready(stalledMs?: number): Promise<void> {
    if (stalledMs === undefined) return this.built;
    for (let ended = false; !ended;) {
      const quiet = performance.now() - this.progressAt;
      if (quiet >= stalledMs) return;
      ended = await Promise.race([this.built.then(() => true), sleep(stalledMs - quiet, false, { ref: false })]);
    }
  }

  /** The copy's Nodes in name order, each as it is when its page is handed out (none without a copy). */
  *pages(pageSize: number): Generator<NodeState[]> {
    const nodes = this.nodes;
    if (!nodes) return;
    const order = (this.names ??= [...nodes.keys()].sort());
    for (let i = 0; i < order.length; i += pageSize) {
      const page: NodeState[] = [];
      for (let k = i; k < Math.min(order.length, i + pageSize); k++) {
        const node = nodes.get(order[k] as string);
        if (node) page.push(node);
      }
      yield page;
    }
  }

  /** Whether the copy reaches `target` within `ms` (it holds every change up to it): false when it has none, or is lost meanwhile. */
  async reaches(target: bigint, ms: number): Promise<boolean> {
    if (!this.current) return false;
    if (this.reached(target)) return true;
    const waiter = { target, resolve: () => undefined as void };
    const reached = new Promise<void>((resolve) => this.waiters.push(Object.assign(waiter, { resolve })));
    await Promise.race([reached, sleep(ms, undefined, { ref: false })]);
    this.waiters = this.waiters.filter((w) => w !== waiter);
    return this.current && this.reached(target);
  }

  private reached(target: bigint): boolean {
    return this.version !== undefined && this.version >= target;
  }

  /** Whether anything follows the Nodes: the copy, or a subscriber. */
  private wanted(): boolean {
    return !this.stop.signal.aborted && (this.nodes !== undefined || this.subscribers.active > 0);
  }

  private start(): void {
    if (this.running || !this.wanted()) return;
    this.running = true;
    this.keep()
      .catch((err: unknown) => this.options.log?.('warn', 'node informer stopped', { error: String(err).slice(0, 300) }))
      .finally(() => {
        this.running = false;
        this.lose();
        this.subscribers.stopped();
        this.markBuilt();
        // A subscriber that came while the loop was ending.
        this.start();
      });
  }

  private readonly advance = (rv: string): void => {
    const v = asVersion(rv);
    // A server whose versions are not integers: the last one it gave.
    if (v === undefined && rv) this.lastVersion = rv;
    if (v === undefined || (this.version !== undefined && v <= this.version)) return;
    this.version = v;
    this.lastVersion = rv;
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

  /** Drops the copy for good; the list-and-watch goes on while a subscriber follows it. */
  private drop(message: string, fields: Record<string, unknown>): void {
    this.lose();
    this.nodes = undefined;
    this.names = undefined;
    this.options.log?.('warn', message, fields);
  }

  /**
   * Builds the copy, then follows the watch, building it again whenever the
   * watch is lost (after a backoff, unless the server only said 410 Gone) or
   * a subscriber needs a LIST the copy cannot give, while anything follows
   * the Nodes. The watch starts from the LIST's version as soon as the first
   * page gives it, and its changes go into the copy while the later pages
   * come: when the last page is in, the copy has caught up, rather than start
   * a watch then that must replay every change made during the LIST.
   */
  private async keep(): Promise<void> {
    const { log } = this.options;
    for (let failures = 0; this.wanted();) {
      const attempt = new AbortController();
      this.attempt = attempt;
      const watch: BuildWatch = {};
      try {
        const listing = performance.now();
        this.subscribers.listing();
        const rv = await this.build(attempt.signal, watch);
        if (watch.lost !== undefined) throw watch.lost;
        this.live = true;
        const listMs = performance.now() - listing;
        failures = 0;
        log?.('info', this.nodes ? 'node cache built' : 'nodes listed', { nodes: this.size, resourceVersion: rv, listMs: Math.round(listMs) });
        this.subscribers.synced({ resourceVersion: rv, fromCopy: false, listMs });
        this.markBuilt();
        await watch.following;
        if (watch.lost !== undefined) throw watch.lost;
      } catch (err) {
        attempt.abort();
        await watch.following;
        this.lose();
        if (!this.wanted() || err instanceof NotWanted) continue;
        const expired = err instanceof WatchExpiredError;
        if (!expired) failures++;
        log?.('warn', this.nodes ? 'node cache lost; building it again' : 'node watch lost; listing again', { error: String(err).slice(0, 300), failures });
        if (!expired) this.subscribers.failed(err === watch.lost ? 'watch' : 'list', err);
        this.markBuilt();
        if (failures > 0) await backoff(failures, RELIST_BACKOFF, this.stop.signal);
      }
    }
  }

  /**
   * LISTs every Node into a new copy (when it keeps one) and to the
   * subscribers, the watch (in `watch`) following from the first page on;
   * resolves with the LIST's version. A page's Node is older than any change
   * the watch brings (the LIST is at one version, the watch after it), so a
   * page adds to the copy only Nodes the watch has not changed or deleted
   * meanwhile. Ends early (NotWanted) when nothing follows the Nodes any more.
   */
  private async build(signal: AbortSignal, watch: BuildWatch): Promise<string> {
    this.lose();
    if (this.nodes) this.nodes = new Map();
    this.names = undefined;
    this.version = undefined;
    const deleted = new Set<string>();
    this.deletedWhileListing = deleted;
    try {
      return await this.list(signal, watch, deleted);
    } finally {
      this.deletedWhileListing = undefined;
    }
  }

  /** The LIST of {@link build}. */
  private async list(signal: AbortSignal, watch: BuildWatch, deleted: ReadonlySet<string>): Promise<string> {
    const { maxNodes } = this.options;
    const rv = await this.watch.list(this.options.pageSize ?? 500, (page, list) => {
      this.progressAt = performance.now();
      if (watch.lost !== undefined) throw watch.lost;
      if (signal.aborted && !this.wanted()) throw new NotWanted();
      if (!watch.following) {
        // The server says how many Nodes there are on the first page: too many, and no more is kept.
        if (this.nodes && list.remaining !== undefined && page.length + list.remaining > maxNodes) this.tooMany();
        if (this.nodes && asVersion(list.resourceVersion) === undefined)
          this.drop('node cache off: the API server answers resourceVersions that are not integers', { resourceVersion: list.resourceVersion.slice(0, 40) });
        if (!this.wanted()) throw new NotWanted();
        this.advance(list.resourceVersion);
        watch.following = this.followFrom(list.resourceVersion, signal).catch((err: unknown) => {
          watch.lost = err;
          // The LIST stops at its next page.
          this.lose();
        });
      }
      this.subscribers.listed(page);
      const nodes = this.nodes;
      if (!nodes) return;
      for (const node of page) if (!nodes.has(node.name) && !deleted.has(node.name)) nodes.set(node.name, node);
      this.names = undefined;
      if (nodes.size > maxNodes) this.tooMany();
      if (!this.wanted()) throw new NotWanted();
    });
    if (!watch.following) throw new Error('the Node list gave no page');
    return rv;
  }

  private tooMany(): void {
    const { maxNodes } = this.options;
    this.drop(`node cache off: the cluster has more than ${maxNodes} Nodes; every read LISTs them`, { maxNodes });
  }

  /** Watches from `rv` on, one watch after another, until `signal` aborts. */
  private async followFrom(rv: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) rv = await this.follow(rv, signal);
  }

  /** One watch from `rv`, applied to the copy and told to the subscribers; resolves with the version the next one goes on from. */
  private async follow(rv: string, signal: AbortSignal): Promise<string> {
    const next = await this.watch.watch(
      rv,
      (event) => {
        const { type, node } = event;
        const nodes = this.nodes;
        if (nodes) {
          if (type === 'DELETED') {
            if (nodes.delete(node.name)) this.names = undefined;
            this.deletedWhileListing?.add(node.name);
          } else if (nodes.has(node.name)) {
            nodes.set(node.name, node);
          } else if (nodes.size >= this.options.maxNodes) {
            this.tooMany();
          } else {
            nodes.set(node.name, node);
            this.names = undefined;
          }
        }
        this.subscribers.changed(event);
        this.advance(node.resourceVersion);
        if (!this.wanted()) this.attempt?.abort();
      },
      signal,
      this.advance,
    );
    this.advance(next);
    return next;
  }
}
