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
import type { Taint } from './taints.ts';

/** One JSON Patch operation, as relabel sends them. */
export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** What the plan of one node was made from: the keys it read, and whether it read the taints. */
export type PlanReads = {
  /** Label keys whose value (or absence) the plan depends on, sorted. */
  labels: string[];
  /** Annotation keys whose value (or absence) the plan depends on, sorted. */
  annotations: string[];
  /** Whether the plan depends on the node's taint list. */
  taints: boolean;
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
 * planned or the uninitialized taint may be lifted.
 */
export function planReads(
  input: {
    desired: Readonly<Record<string, string>>;
    desiredAnnotations?: Readonly<Record<string, string>>;
    desiredTaints?: readonly Taint[];
    policy: PlanPolicy;
    liftTaint?: boolean;
  },
  state: Pick<GuardedState, 'annotations'>,
): PlanReads {
  const labels = [...Object.keys(input.desired), ...readOwnedLabels(state.annotations).owned];
  if (input.policy.reconcileOsArchAliases) for (const { ga, beta } of OS_ARCH_ALIASES) labels.push(ga, beta);
  const annotations = [...RECORDS];
  if (input.desiredAnnotations !== undefined) {
    annotations.push(...Object.keys(input.desiredAnnotations), ...readOwnedRecord(state.annotations, OWNED_ANNOTATIONS_ANNOTATION, anyEntry).owned);
  }
  return { labels: sorted(labels), annotations: sorted(annotations), taints: input.desiredTaints !== undefined || input.liftTaint === true };
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
function mapOps(field: 'labels' | 'annotations', read: Readonly<Record<string, string>>, keys: readonly string[], changes: Record<string, string | null> | undefined): JsonPatchOp[] {
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
  const taints = state.taints ?? [];
  if (reads.taints || changes.spec) ops.push({ op: 'test', path: '/spec/taints', value: taints.length > 0 ? taints.map(storedTaint) : null });
  if (changes.spec) {
    const next = changes.spec.taints;
    if (next !== null && next.length > 0) ops.push({ op: 'add', path: '/spec/taints', value: next.map(storedTaint) });
    else if (taints.length > 0) ops.push({ op: 'remove', path: '/spec/taints' });
  }
  return ops;
}
