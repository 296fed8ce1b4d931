/**
 * Which nodes are joining, and the queue the join watcher hands them out
 * from. Pure: the watcher feeds it what the API server says (a LIST, then
 * watch events) and takes batches for runs; no I/O, no clock of its own.
 *
 * A node is joining when it is new to relabel (no update run or node write
 * of relabel's has left a record on it: a new Node, or one registered again
 * after a re-provision, which is a new object) or when it carries relabel's
 * join taint (the label policy's `join_taint_key`, by default
 * {@link UNINITIALIZED_TAINT_KEY}). That is a state of the node, not an event, so a
 * watcher that starts again (a killed worker, a lost watch) finds by one
 * LIST every node that joined while it was away. Each Node object (uid) is
 * handed out once per queue, so a node a run could not label (it failed,
 * or the policy keeps the taint) is not run again and again; only a node
 * seen labelled that carries the join taint again is handed out again.
 */
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';

/** Why a node is joining. */
export const JoinReason = {
  /** No record of relabel's on it: never labelled by relabel. */
  new: 'new',
  /** It carries relabel's join taint. */
  uninitialized: 'uninitialized',
} as const;
/** One of the {@link JoinReason} strings. */
export type JoinReason = (typeof JoinReason)[keyof typeof JoinReason];

/** What the queue reads of a Node. */
export interface JoinNode {
  name: string;
  uid?: string;
  annotations: Record<string, string>;
  taints: readonly { key: string }[];
}

/** Why `node` is joining, or undefined when it is not; `taintKey` is the join taint's key. */
export function joinReason(node: Pick<JoinNode, 'annotations' | 'taints'>, taintKey: string = UNINITIALIZED_TAINT_KEY): JoinReason | undefined {
  if (node.taints.some((t) => t.key === taintKey)) return JoinReason.uninitialized;
  if (node.annotations[APPLIED_ANNOTATION] === undefined && node.annotations[OWNED_LABELS_ANNOTATION] === undefined) return JoinReason.new;
  return undefined;
}

/** A joining node waiting for, or handed to, a run. */
export interface JoiningNode {
  name: string;
  uid: string;
  /** When the watcher first saw it joining (ms since the epoch). */
  since: number;
}

/** What observing a node did. */
export type JoinObservation =
  /** Joining and managed: now waiting for a run (or already was). */
  | { kind: 'queued' }
  /** Joining, but the design does not manage it: left alone (`first`: counted now). */
  | { kind: 'unmanaged'; first: boolean }
  /** Joining, but already handed to a run once: not again. */
  | { kind: 'handled' }
  /** Handed to a run and now seen labelled, `seconds` after it was first seen joining. */
  | { kind: 'labelled'; seconds: number }
  /** Not joining. */
  | { kind: 'settled' };

/** Most Node objects a queue remembers having handed out, or skipped as unmanaged (oldest forgotten first). */
export const MAX_REMEMBERED = 100_000;

/** Adds `key` to an insertion-ordered set bounded to {@link MAX_REMEMBERED}; true when it was not there. */
function remember(set: Set<string>, key: string): boolean {
  if (set.has(key)) return false;
  set.add(key);
  if (set.size > MAX_REMEMBERED) set.delete(set.values().next().value as string);
  return true;
}

/**
 * The join watcher's queue. Nodes are keyed by name (a name is one Node
 * at a time) and remembered by uid (a name registered again is a new
 * Node and joins again).
 */
export class JoinQueue {
  /** Joining nodes waiting for a run, oldest first. */
  private readonly pending = new Map<string, JoiningNode>();
  /** Handed to a run, not yet seen labelled. */
  private readonly awaiting = new Map<string, JoiningNode>();
  /** uids handed to a run. */
  private readonly handed = new Set<string>();
  /** uids handed to a run and then seen labelled. */
  private readonly lifted = new Set<string>();
  /** uids skipped as unmanaged. */
  private readonly skipped = new Set<string>();
  /** Observations so far: orders what the watch saw against when a LIST began. */
  private observations = 0;
  /** For each waiting or awaited node, the observation that last saw it. */
  private readonly lastSeen = new Map<string, number>();

  /** Nodes waiting for a run. */
  get size(): number {
    return this.pending.size;
  }

  /** Nodes handed to a run and not yet seen labelled. */
  get inFlight(): number {
    return this.awaiting.size;
  }

  /** ms since the epoch when the oldest waiting node was first seen; undefined when none waits. */
  oldest(): number | undefined {
    return this.pending.values().next().value?.since;
  }

  /**
   * Takes in what the API server says of `node` at `now` (ms): queues a
   * joining node `manages` says the design manages, unless its uid was
   * handed out before; drops a waiting node that is no longer joining
   * (another writer labelled it). `taintKey` is the join taint's key under
   * the design's policy.
   */
  observe(node: JoinNode, manages: (name: string) => boolean, now: number, taintKey: string = UNINITIALIZED_TAINT_KEY): JoinObservation {
    const reason = joinReason(node, taintKey);
    const uid = node.uid ?? node.name;
    this.observations++;
    if (reason === undefined) {
      this.pending.delete(node.name);
      const awaited = this.awaiting.get(node.name);
      if (awaited && awaited.uid === uid) {
        this.awaiting.delete(node.name);
        remember(this.lifted, uid);
      }
      this.forgetSeen(node.name);
      return awaited && awaited.uid === uid ? { kind: 'labelled', seconds: Math.max(0, (now - awaited.since) / 1000) } : { kind: 'settled' };
    }
    if (!manages(node.name)) {
      this.pending.delete(node.name);
      this.forgetSeen(node.name);
      return { kind: 'unmanaged', first: remember(this.skipped, uid) };
    }
    this.lastSeen.set(node.name, this.observations);
    // The join taint put on a node after its run labelled it (Karpenter adds a NodePool's startupTaints when
    // it registers a Node it created, which can be after a join run wrote the new Node): joining again.
    if (reason === JoinReason.uninitialized && this.lifted.delete(uid)) this.handed.delete(uid);
    if (this.handed.has(uid)) return { kind: 'handled' };
    const waiting = this.pending.get(node.name);
    // A name registered again while its old Node still waited: the new Node waits from now.
    if (!waiting || waiting.uid !== uid) this.pending.set(node.name, { name: node.name, uid, since: waiting?.uid === uid ? waiting.since : now });
    return { kind: 'queued' };
  }

  /** Forgets a deleted Node. */
  delete(name: string): void {
    this.pending.delete(name);
    this.awaiting.delete(name);
    this.lastSeen.delete(name);
  }

  /** Drops `name`'s last-seen mark unless it still waits or is awaited. */
  private forgetSeen(name: string): void {
    if (!this.pending.has(name) && !this.awaiting.has(name)) this.lastSeen.delete(name);
  }

  /** Marks the start of a LIST: hand the mark to {@link keepOnly} once the LIST is read. */
  listBegins(): number {
    return this.observations;
  }

  /**
   * After a LIST that began at `mark` (from {@link listBegins}), forgets
   * the waiting and awaited nodes it did not return: they were deleted
   * while no watch ran. A node the watch saw after the LIST began is kept
   * even when the LIST missed it: it was created after the LIST's snapshot.
   */
  keepOnly(present: ReadonlySet<string>, mark: number): void {
    const gone = (name: string) => !present.has(name) && (this.lastSeen.get(name) ?? 0) <= mark;
    for (const name of [...this.pending.keys()]) if (gone(name)) this.pending.delete(name);
    for (const name of [...this.awaiting.keys()]) if (gone(name)) this.awaiting.delete(name);
    for (const name of [...this.lastSeen.keys()]) this.forgetSeen(name);
  }

  /** Takes up to `max` waiting nodes, oldest first, as handed to a run: they are not handed out again. */
  take(max: number): JoiningNode[] {
    const batch: JoiningNode[] = [];
    for (const node of this.pending.values()) {
      if (batch.length >= max) break;
      batch.push(node);
    }
    for (const node of batch) {
      this.pending.delete(node.name);
      remember(this.handed, node.uid);
      this.awaiting.set(node.name, node);
      // A node never seen labelled (its run failed, or the policy keeps the taint) is forgotten, oldest first.
      if (this.awaiting.size > MAX_REMEMBERED) this.awaiting.delete(this.awaiting.keys().next().value as string);
    }
    return batch;
  }

  /** Puts back nodes taken for a run that did not start: they wait again, ahead of later ones, with their first-seen times. */
  putBack(batch: readonly JoiningNode[]): void {
    const later = [...this.pending.values()];
    this.pending.clear();
    for (const node of batch) {
      this.handed.delete(node.uid);
      this.awaiting.delete(node.name);
      this.pending.set(node.name, node);
    }
    for (const node of later) if (!this.pending.has(node.name)) this.pending.set(node.name, node);
  }
}
