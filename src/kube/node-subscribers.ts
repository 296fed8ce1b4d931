/**
 * What the node informer's subscribers are told, and when (client-go's
 * event handlers, with its initial list as a sync): each subscriber first
 * gets a sync (`listing`, then the Nodes in pages by `listed`, then
 * `synced`), then every change the watch brings. A subscriber that comes
 * while the informer holds a current copy is synced from it, without a
 * request to the API server; one that comes while the informer lists is
 * synced once that LIST ends; without a copy, the informer LISTs again for
 * it. After a lost watch every subscriber gets a sync again, from the LIST
 * the informer makes then.
 */
import type { NodeState } from './nodes.ts';
import type { NodeWatchEvent } from './node-watch.ts';

/** The end of a sync: the version its Nodes are at, whether they came from the copy, and how long the LIST took (0 from the copy). */
export interface NodeSync {
  resourceVersion: string;
  fromCopy: boolean;
  listMs: number;
}

/**
 * A part of the worker that follows the Nodes. Every method is optional
 * and must not throw. A change may come between `listing` and `synced`
 * (the watch runs from the LIST's first page on), and is newer than the
 * LIST's Nodes.
 */
export interface NodeSubscriber {
  /** A sync begins: every Node there is follows in `listed`. */
  listing?(): void;
  /** Nodes of the sync, a page at a time. */
  listed?(nodes: readonly NodeState[]): void;
  /** The sync ended: every Node was listed. */
  synced?(sync: NodeSync): void;
  /** A change the watch brought. */
  changed?(event: NodeWatchEvent): void;
  /** The LIST or the watch failed; the informer lists again after a backoff, and a sync follows. */
  failed?(during: 'list' | 'watch', error: unknown): void;
}

/** A subscriber's hold on the informer. */
export interface NodeSubscription {
  /** Asks for a sync again; resolves once it ended, or the subscription closed. */
  resync(): Promise<void>;
  /** Ends the subscription: the subscriber is told nothing more. */
  close(): void;
}

/** Where the informer stands: not listing, listing, or following its watch. */
type Phase = 'idle' | 'listing' | 'following';

/** What the subscribers need of the informer. */
export interface SubscriberHooks {
  /** The copy's Nodes in pages when it is current; undefined without a current copy. */
  pages(): Iterable<readonly NodeState[]> | undefined;
  /** The version of the copy (or of the last LIST). */
  version(): string;
  /** List again now (the informer's watch follows, but there is no copy to sync from). */
  relist(): void;
  /** A subscriber came or went: start, or stop when nothing follows the Nodes. */
  membership(): void;
}

/** Each subscriber's place in the syncs: in the informer's LIST now, waiting for a sync, and who waits for its end. */
interface Entry {
  passive: boolean;
  inList: boolean;
  pending: boolean;
  waiting: (() => void)[];
}

/** The informer's subscribers and their syncs. */
export class Subscribers {
  private readonly entries = new Map<NodeSubscriber, Entry>();
  private phase: Phase = 'idle';
  private readonly hooks: SubscriberHooks;

  constructor(hooks: SubscriberHooks) {
    this.hooks = hooks;
  }

  /** Subscribers that keep the informer running (not passive). */
  get active(): number {
    let active = 0;
    for (const entry of this.entries.values()) if (!entry.passive) active++;
    return active;
  }

  /** Adds `subscriber`; a passive one asks for no sync of its own and does not keep the informer running. */
  add(subscriber: NodeSubscriber, passive = false): NodeSubscription {
    const entry: Entry = { passive, inList: false, pending: false, waiting: [] };
    this.entries.set(subscriber, entry);
    if (!passive) this.request(subscriber, entry);
    this.hooks.membership();
    return {
      resync: () =>
        new Promise<void>((resolve) => {
          if (!this.entries.has(subscriber)) return resolve();
          entry.waiting.push(resolve);
          this.request(subscriber, entry);
        }),
      close: () => {
        if (!this.entries.delete(subscriber)) return;
        for (const resolve of entry.waiting.splice(0)) resolve();
        this.hooks.membership();
      },
    };
  }

  /** The informer's LIST begins: every subscriber is synced by it. */
  listing(): void {
    this.phase = 'listing';
    for (const [subscriber, entry] of this.entries) {
      entry.inList = true;
      entry.pending = false;
      subscriber.listing?.();
    }
  }

  listed(nodes: readonly NodeState[]): void {
    for (const [subscriber, entry] of this.entries) if (entry.inList) subscriber.listed?.(nodes);
  }

  /** The informer's LIST ended: its subscribers are synced, and those that came meanwhile are served now. */
  synced(sync: NodeSync): void {
    this.phase = 'following';
    for (const [subscriber, entry] of this.entries) if (entry.inList) this.done(subscriber, entry, sync);
    for (const [subscriber, entry] of this.entries) if (entry.pending) this.serve(subscriber, entry);
  }

  changed(event: NodeWatchEvent): void {
    for (const subscriber of this.entries.keys()) subscriber.changed?.(event);
  }

  /** The LIST or watch failed: every subscriber is told, and waits for the next LIST's sync. */
  failed(during: 'list' | 'watch', error: unknown): void {
    this.phase = 'idle';
    for (const [subscriber, entry] of this.entries) {
      if (entry.inList) entry.pending = true;
      entry.inList = false;
      subscriber.failed?.(during, error);
    }
  }

  /** The informer stopped (nothing follows the Nodes, or closed): a subscriber that comes starts it again, and is synced by its LIST. */
  stopped(): void {
    this.phase = 'idle';
    for (const entry of this.entries.values()) if (entry.inList) [entry.inList, entry.pending] = [false, true];
  }

  private request(subscriber: NodeSubscriber, entry: Entry): void {
    entry.pending = true;
    // Not inside the caller's own call: a subscriber is synced once `subscribe` or `resync` has returned.
    queueMicrotask(() => this.serve(subscriber, entry));
  }

  /** Syncs a waiting subscriber from the copy, or has the informer list again for it; while it lists, the LIST's end serves it. */
  private serve(subscriber: NodeSubscriber, entry: Entry): void {
    if (!entry.pending || entry.inList || !this.entries.has(subscriber)) return;
    const pages = this.hooks.pages();
    if (pages) {
      entry.pending = false;
      subscriber.listing?.();
      for (const page of pages) subscriber.listed?.(page);
      this.done(subscriber, entry, { resourceVersion: this.hooks.version(), fromCopy: true, listMs: 0 });
    } else if (this.phase === 'following') {
      this.phase = 'idle';
      this.hooks.relist();
    }
  }

  private done(subscriber: NodeSubscriber, entry: Entry, sync: NodeSync): void {
    entry.inList = false;
    subscriber.synced?.(sync);
    for (const resolve of entry.waiting.splice(0)) resolve();
  }
}
