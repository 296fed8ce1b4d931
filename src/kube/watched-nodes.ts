/**
 * The Nodes' copy behind {@link cachedNodeApi}: built with one LIST, kept
 * by a watch from that LIST's version, built again when the watch is lost,
 * and dropped for good when the cluster outgrows it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeState } from './nodes.ts';
import { WatchExpiredError, type NodeWatchApi } from './node-watch.ts';

/** How a copy is kept (see NodeCacheOptions in node-cache.ts). */
export interface WatchedNodesOptions {
  maxNodes: number;
  freshWaitMs: number;
  pageSize: number;
  log?: ((level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void) | undefined;
}

/** Default wait for the copy to reach the cluster's version: a heartbeating cluster's Nodes change every few ms. */
export const DEFAULT_FRESH_WAIT_MS = 250;

/** Longest wait for the copy, whatever a LIST costs. */
export const MAX_FRESH_WAIT_MS = 5_000;

/** Longest pause between attempts to build the copy again after an error. */
const MAX_BACKOFF_MS = 30_000;

class TooManyNodes extends Error {}

/** The watch a build starts: its loop (which never rejects) and the error that ended it, if one did. */
type BuildWatch = { following?: Promise<void>; lost?: unknown };

/** The server's resourceVersion (the message) is not an integer. */
class NotIntegers extends Error {}

/** The copy is fresh, or why a read LISTs: no copy (off, outgrown, being built), changes too rare to wait for, no version, or the watch not there in time. */
export type Freshness = 'fresh' | 'not built' | 'quiet' | 'no version' | 'behind';

const asVersion = (rv: string): bigint | undefined => (/^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined);

/** The copy and the watch that keeps it: built at once, built again after the watch is lost. */
export class WatchedNodes {
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
  /** When the build began or last received a page. */
  private progressAt = performance.now();
  /** While the copy is built: the Nodes the watch deleted, which a later page must not add back. */
  private deletedWhileListing: Set<string> | undefined;

  private readonly watch: NodeWatchApi;
  private readonly currentVersion: () => Promise<string>;
  private readonly options: WatchedNodesOptions;

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

  /**
   * Builds the copy, then follows the watch, building it again whenever
   * the watch is lost, until closed. The watch starts from the LIST's
   * version as soon as the first page gives it, and its changes go into the
   * copy while the later pages come: when the last page is in, the copy has
   * caught up, rather than start a watch then that must replay every change
   * made during the LIST.
   */
  private async keep(): Promise<void> {
    const { log } = this.options;
    for (let failures = 0; !this.stop.signal.aborted;) {
      const attempt = new AbortController();
      const abort = () => attempt.abort();
      this.stop.signal.addEventListener('abort', abort, { once: true });
      const watch: BuildWatch = {};
      try {
        const listing = performance.now();
        const rv = await this.build(attempt.signal, watch);
        if (watch.lost !== undefined) throw watch.lost;
        this.live = true;
        this.builtAt = performance.now();
        this.listMs = this.builtAt - listing;
        failures = 0;
        log?.('info', 'node cache built', { nodes: this.nodes.size, resourceVersion: rv, listMs: Math.round(this.listMs) });
        this.firstBuilt();
        await watch.following;
        if (watch.lost !== undefined) throw watch.lost;
      } catch (err) {
        attempt.abort();
        await watch.following;
        if (err instanceof TooManyNodes)
          return this.drop(`node cache off: the cluster has more than ${this.options.maxNodes} Nodes; every read LISTs them`, {
            maxNodes: this.options.maxNodes,
          });
        if (err instanceof NotIntegers)
          return this.drop('node cache off: the API server answers resourceVersions that are not integers', { resourceVersion: err.message });
        this.lose();
        if (this.stop.signal.aborted) return;
        if (!(err instanceof WatchExpiredError)) failures++;
        log?.('warn', 'node cache lost; building it again', { error: String(err).slice(0, 300), failures });
        this.firstBuilt();
        if (failures > 0) await sleep(Math.min(MAX_BACKOFF_MS, 500 * 2 ** (failures - 1)), undefined, { signal: this.stop.signal }).catch(() => undefined);
      } finally {
        this.stop.signal.removeEventListener('abort', abort);
      }
    }
  }

  /**
   * LISTs every Node into a new copy, the watch (in `watch`) following
   * from the first page on; resolves with the LIST's version. A page's Node
   * is older than any change the watch brings (the LIST is at one version,
   * the watch after it), so a page adds only Nodes the watch has not
   * changed or deleted meanwhile.
   */
  private async build(signal: AbortSignal, watch: BuildWatch): Promise<string> {
    const { maxNodes, pageSize } = this.options;
    this.nodes = new Map();
    this.names = undefined;
    this.version = undefined;
    const deleted = new Set<string>();
    this.deletedWhileListing = deleted;
    let rv: string;
    try {
      rv = await this.watch.list(pageSize, (page, list) => {
        this.progressAt = performance.now();
        if (watch.lost !== undefined) throw watch.lost;
        if (!watch.following) {
          // The server says how many Nodes there are on the first page: too many, and nothing more is listed.
          if (list.remaining !== undefined && page.length + list.remaining > maxNodes) throw new TooManyNodes();
          if (asVersion(list.resourceVersion) === undefined) throw new NotIntegers(list.resourceVersion.slice(0, 40));
          this.advance(list.resourceVersion);
          watch.following = this.followFrom(list.resourceVersion, signal).catch((err: unknown) => {
            watch.lost = err;
            // The LIST stops at its next page.
            this.lose();
          });
        }
        for (const node of page) if (!this.nodes.has(node.name) && !deleted.has(node.name)) this.nodes.set(node.name, node);
        this.names = undefined;
        if (this.nodes.size > maxNodes) throw new TooManyNodes();
      });
    } finally {
      this.deletedWhileListing = undefined;
    }
    if (!watch.following) throw new Error('the Node list gave no page');
    return rv;
  }

  /** Watches from `rv` on, one watch after another, until `signal` aborts. */
  private async followFrom(rv: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) rv = await this.follow(rv, signal);
  }

  /** One watch from `rv`, applied to the copy; resolves with the version the next one goes on from. */
  private async follow(rv: string, signal: AbortSignal): Promise<string> {
    const watching = new AbortController();
    const abort = () => watching.abort();
    signal.addEventListener('abort', abort, { once: true });
    let tooMany = false;
    try {
      const next = await this.watch.watch(
        rv,
        ({ type, node }) => {
          if (tooMany) return;
          this.changed();
          if (type === 'DELETED') {
            if (this.nodes.delete(node.name)) this.names = undefined;
            this.deletedWhileListing?.add(node.name);
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
      signal.removeEventListener('abort', abort);
    }
  }

  private changed(): void {
    const now = performance.now();
    if (this.lastChange > 0) this.gap = this.gap === Infinity ? now - this.lastChange : 0.9 * this.gap + 0.1 * (now - this.lastChange);
    this.lastChange = now;
  }
}
