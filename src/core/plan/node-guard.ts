/**
 * The guard on a node write: a JSON Patch (RFC 6902) whose `test`
 * operations cover exactly what the plan was made from, followed by the
 * plan's changes. The API server applies the whole patch atomically to the
 * node as stored, so the write lands only if every label, annotation and
 * taint the plan read is still as it was read; a write by anyone else to
 * anything else (status heartbeats, leases, other owners' labels) no longer
 * makes relabel's write fail, and no update is lost: every value the plan
 * depends on is tested, and nothing outside the patch's own paths changes.
 *
 * `test` of a member with value `null` passes when the member is absent
 * and fails when it is present (the API server's JSON Patch behaves so);
 * an absent labels or annotations map is tested the same way.
 */
import { APPLIED_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION } from './constants.ts';
import { OS_ARCH_ALIASES } from './label-keys.ts';
import type { PlanPolicy } from './label-plan.ts';
import { readOwnedLabels, readOwnedRecord } from './owned-labels.ts';
import { liftedTaintKey, taintId, type Taint, type TaintLift } from './taints.ts';

/** One JSON Patch operation, as relabel sends them. */
export type JsonPatchOp = { op: 'test'; path: string; value: unknown } | { op: 'add'; path: string; value: unknown } | { op: 'remove'; path: string };

/** What the plan of one node was made from: the keys it read, and whether it read the taints. */
export type PlanReads = {
  /** Label keys whose value (or absence) the plan depends on, sorted. */
  labels: string[];
  /** Annotation keys whose value (or absence) the plan depends on, sorted. */
  annotations: string[];
  /** Whether the plan depends on the node's taint list. */
  taints: boolean;
  /**
   * When it does: the taints (`key:effect`) it depends on, sorted: those the
   * documents want and those relabel's record says it owns. Others' taints
   * are kept as they are whatever they are; the guard tests only these (and
   * any it removes), so a write by someone else to another taint (the node
   * controller's not-ready taint on a new node) does not refuse relabel's.
   */
  taintIds?: string[];
  /** The plan lifts relabel's join taint (this key) where it finds it: it depends on its absence too. */
  lift?: string;
};

/** The node as read, as far as the guard tests it. */
export type GuardedState = {
  uid?: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints?: readonly Taint[];
};

/** The changes of one write, as the merge patch `nodePatch` builds them (`null` removes). */
export type NodeChanges = {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> };
  spec?: { taints: Taint[] | null };
};

/** Every annotation relabel keeps its records in: a plan reads each of them. */
const RECORDS = [OWNED_LABELS_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_TAINTS_ANNOTATION, APPLIED_ANNOTATION];

/** Every entry of a record counts as read, valid or not. */
const anyEntry = () => true;

const sorted = (keys: Iterable<string>) => [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The keys a plan of `state` towards `desired` reads: every desired label,
 * every label the ownership record names, the os/arch alias pairs when the
 * policy reconciles them; relabel's records, every desired and owned
 * annotation when annotations are planned; the taint list when taints are
 * planned or the join taint may be lifted.
 */
export function planReads(
  input: {
    desired: Readonly<Record<string, string>>;
    desiredAnnotations?: Readonly<Record<string, string>>;
    desiredTaints?: readonly Taint[];
    policy: PlanPolicy;
    /** The join taint the write lifts (see {@link TaintLift}). */
    liftTaint?: TaintLift;
  },
  state: Pick<GuardedState, 'annotations'>,
): PlanReads {
  const labels = [...Object.keys(input.desired), ...readOwnedLabels(state.annotations).owned];
  if (input.policy.reconcileOsArchAliases) for (const { ga, beta } of OS_ARCH_ALIASES) labels.push(ga, beta);
  const annotations = [...RECORDS];
  if (input.desiredAnnotations !== undefined) {
    annotations.push(...Object.keys(input.desiredAnnotations), ...readOwnedRecord(state.annotations, OWNED_ANNOTATIONS_ANNOTATION, anyEntry).owned);
  }
  const lift = liftedTaintKey(input.liftTaint);
  const taints = input.desiredTaints !== undefined || lift !== undefined;
  if (!taints) return { labels: sorted(labels), annotations: sorted(annotations), taints };
  const taintIds = [...(input.desiredTaints ?? []).map(taintId), ...readOwnedRecord(state.annotations, OWNED_TAINTS_ANNOTATION, anyEntry).owned];
  return { labels: sorted(labels), annotations: sorted(annotations), taints, taintIds: sorted(taintIds), ...(lift !== undefined ? { lift } : {}) };
}

/** A JSON Pointer reference token: `~` and `/` escaped. */
export function pointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A taint as the API server serializes it: empty fields left out. */
function storedTaint(t: Taint): Taint {
  return { key: t.key, effect: t.effect, ...(t.value ? { value: t.value } : {}), ...(t.timeAdded ? { timeAdded: t.timeAdded } : {}) };
}

/** The tests and changes of one string map (`labels` or `annotations`) of the node's metadata. */
function mapOps(
  field: 'labels' | 'annotations',
  read: Readonly<Record<string, string>>,
  keys: readonly string[],
  changes: Record<string, string | null> | undefined,
): JsonPatchOp[] {
  const base = `/metadata/${field}`;
  const entries = Object.entries(changes ?? {});
  if (Object.keys(read).length === 0) {
    // The API server leaves an empty map out of the object: test it absent, then add it whole.
    if (keys.length === 0 && entries.length === 0) return [];
    const added = Object.fromEntries(entries.filter((e): e is [string, string] => e[1] !== null));
    return [{ op: 'test', path: base, value: null }, ...(Object.keys(added).length > 0 ? [{ op: 'add' as const, path: base, value: added }] : [])];
  }
  const ops: JsonPatchOp[] = keys.map((key) => ({ op: 'test', path: `${base}/${pointerToken(key)}`, value: Object.hasOwn(read, key) ? read[key] : null }));
  for (const [key, value] of entries) {
    const path = `${base}/${pointerToken(key)}`;
    if (value !== null) ops.push({ op: 'add', path, value });
    else if (Object.hasOwn(read, key)) ops.push({ op: 'remove', path });
  }
  return ops;
}

/**
 * The JSON Patch writing `changes` to a node read as `state`, guarded by
 * what the plan `reads`: the node's uid (a node deleted and made again is
 * not the node read), a test of each key read with its value as read (or
 * absent), the taint list as read when the plan read it; then the changes.
 * Every key the changes touch must be among the keys read, as the plan's
 * keys are.
 */
export function guardedPatch(changes: NodeChanges, state: GuardedState, reads: PlanReads): JsonPatchOp[] {
  const ops: JsonPatchOp[] = state.uid ? [{ op: 'test', path: '/metadata/uid', value: state.uid }] : [];
  ops.push(...mapOps('labels', state.labels, reads.labels, changes.metadata.labels));
  ops.push(...mapOps('annotations', state.annotations, reads.annotations, changes.metadata.annotations));
  ops.push(...taintOps(changes.spec?.taints, state.taints ?? [], reads));
  return ops;
}

/**
 * `next` as a change of `taints`: the indexes it drops (the order of the
 * rest kept) and the taints it appends. Undefined when it changes the list
 * otherwise (a value changed in place), leaves it empty, or appends to a
 * node without a list.
 */
function listChange(taints: readonly Taint[], next: readonly Taint[] | null | undefined): { removed: number[]; added: Taint[] } | undefined {
  if (next === undefined) return { removed: [], added: [] };
  if (next === null || next.length === 0) return undefined;
  const same = (a: Taint, b: Taint) => JSON.stringify(storedTaint(a)) === JSON.stringify(storedTaint(b));
  const removed: number[] = [];
  let j = 0;
  taints.forEach((t, i) => {
    if (j < next.length && same(t, next[j] as Taint)) j++;
    else removed.push(i);
  });
  const added = next.slice(j);
  if (added.length > 0 && taints.length === 0) return undefined;
  // A taint whose value changes stays where it is, as in the plan's list: written whole.
  const dropped = new Set(removed.map((i) => taintId(taints[i] as Taint)));
  if (added.some((t) => dropped.has(taintId(t)))) return undefined;
  return { removed, added };
}

/**
 * The tests and changes of the taint list. When the plan knows which taints
 * it depends on, each of them present on the node, and its change drops
 * taints and appends others: each such taint and each dropped one is
 * tested at its index, the dropped ones are removed by index (last first),
 * the new ones appended. A taint of someone else's added, changed or
 * removed after them does not refuse the write (one before them moves the
 * indexes, and does); a taint someone else adds that relabel appends too
 * is refused by the API server as a duplicate, which relabel reads as a
 * stale write. Otherwise the whole list as read is tested and written.
 */
function taintOps(next: Taint[] | null | undefined, taints: readonly Taint[], reads: PlanReads): JsonPatchOp[] {
  const change = reads.taintIds === undefined ? undefined : listChange(taints, next);
  const present = new Set([...taints, ...(change?.added ?? [])].map(taintId));
  // What the plan found absent cannot be tested by index: a lift that found no taint to lift, an owned taint gone.
  const liftable = reads.lift === undefined || taints.some((t) => t.key === reads.lift);
  if (change === undefined || !liftable || !(reads.taintIds ?? []).every((id) => present.has(id))) {
    if (!reads.taints && next === undefined) return [];
    const ops: JsonPatchOp[] = [{ op: 'test', path: '/spec/taints', value: taints.length > 0 ? taints.map(storedTaint) : null }];
    if (next !== undefined && next !== null && next.length > 0) ops.push({ op: 'add', path: '/spec/taints', value: next.map(storedTaint) });
    else if (next !== undefined && taints.length > 0) ops.push({ op: 'remove', path: '/spec/taints' });
    return ops;
  }
  const depends = new Set(reads.taintIds);
  const dropped = new Set(change.removed);
  const ops: JsonPatchOp[] = [];
  taints.forEach((t, i) => {
    if (dropped.has(i) || depends.has(taintId(t))) ops.push({ op: 'test', path: `/spec/taints/${i}`, value: storedTaint(t) });
  });
  for (const i of [...change.removed].reverse()) ops.push({ op: 'remove', path: `/spec/taints/${i}` });
  for (const t of change.added) ops.push({ op: 'add', path: '/spec/taints/-', value: storedTaint(t) });
  return ops;
}
