/**
 * Drift: how a Node relabel manages stands against the documents, read
 * without writing anything. A node of the latest committed design is
 * `missing` (not in the cluster), `unmanaged` (no update run ever wrote it),
 * `drifted` (something relabel owns on it is no longer as the revision it
 * carries wants: someone edited or removed it), `moved` (as its revision
 * wants, written as a member of one node set, and the latest design puts
 * it in another, or names it), `pending` (as its revision wants, but a
 * newer committed revision would change it) or `in_sync`. A node in the
 * cluster that carries this site's applied-run record but that the latest
 * design neither names nor puts in a set is `orphaned` (see
 * {@link classifyOrphan}). When several could apply, the first in
 * {@link DRIFT_PRECEDENCE} wins.
 */
import { isSiteRecord, readAppliedRun } from './applied-run.ts';
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION } from './constants.ts';
import { planLabels, type LabelPlan, type PlanPolicy } from './label-plan.ts';
import { taintId, type Taint } from './taints.ts';

/** Where a node stands. */
export const DriftState = {
  missing: 'missing',
  unmanaged: 'unmanaged',
  drifted: 'drifted',
  moved: 'moved',
  pending: 'pending',
  inSync: 'in_sync',
  orphaned: 'orphaned',
} as const;
/** One of the {@link DriftState} strings. */
export type DriftState = (typeof DriftState)[keyof typeof DriftState];

/**
 * The order in which states win when more than one could apply: a node not
 * in the cluster is only `missing`; one no run wrote is only `unmanaged`
 * (there is no revision to drift from); a node that drifted from its own
 * revision is `drifted` even when a newer revision is waiting (healing it
 * to its revision comes first, and is what `heal` does); `moved` when it
 * is as its revision wants but its set changed (a run at the latest
 * revision is what it waits for, as a pending node does); `pending` only
 * when it is otherwise as its revision wants. `orphaned` is of nodes the
 * latest design does not hold, so it never meets the others but `missing`.
 */
export const DRIFT_PRECEDENCE: readonly DriftState[] = [
  DriftState.missing,
  DriftState.orphaned,
  DriftState.unmanaged,
  DriftState.drifted,
  DriftState.moved,
  DriftState.pending,
  DriftState.inSync,
];

/** What a drift policy does with orphaned nodes: keep what relabel wrote (report only), or start a run releasing them. */
export const OrphanAction = { keep: 'keep', release: 'release' } as const;
/** One of the {@link OrphanAction} strings. */
export type OrphanAction = (typeof OrphanAction)[keyof typeof OrphanAction];

/** What a drift policy does with drifted nodes: report them, or start a run restoring them. */
export const DriftAction = { report: 'report', heal: 'heal' } as const;
/** One of the {@link DriftAction} strings. */
export type DriftAction = (typeof DriftAction)[keyof typeof DriftAction];

/** How one owned key differs from what the revision wants. */
export const DriftChange = {
  /** Present with another value than wanted. */
  changed: 'changed',
  /** Wanted, and absent. */
  removed: 'removed',
  /** Owned and no longer wanted, yet present (its ownership record was edited). */
  unwanted: 'unwanted',
} as const;
/** One of the {@link DriftChange} strings. */
export type DriftChange = (typeof DriftChange)[keyof typeof DriftChange];

/** One drifted label: its key, how it differs, the wanted and the observed value. */
export type LabelDrift = { key: string; change: DriftChange; want?: string; have?: string };
/** One drifted annotation (values are not kept: they may be large) or taint (`key:effect`). */
export type KeyDrift = { key: string; change: DriftChange };

/** Everything owned that differs from what the revision wants; empty lists when nothing does. */
export type DriftKeys = {
  labels: LabelDrift[];
  annotations: KeyDrift[];
  taints: KeyDrift[];
  /** Ownership records that were edited (their annotation keys). */
  records: string[];
};

/** What one revision wants of one node. */
export type NodeWants = {
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints: readonly Taint[];
  policy: PlanPolicy;
};

/** A node as observed: the parts drift looks at. */
export type ObservedNode = {
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints?: readonly Taint[];
};

/** The classification of one node. */
export type DriftVerdict = {
  node: string;
  state: DriftState;
  /** The revision the node's applied-run record names, or null (none, or not readable). */
  revision: number | null;
  /** The run the record names, or null. */
  run: number | null;
  /** For `drifted`: what differs. */
  keys?: DriftKeys;
  /** For `pending` and `moved`: how many labels, annotations and taints a run at the latest revision would change (ownership records not counted). */
  changes?: number;
  /** For `moved` and `orphaned`: the node set the record says the node was written as a member of (absent: it was written as a named node, or the record predates sets in records). */
  set?: string;
  /** Why a node with a record is still `unmanaged` (its revision is unknown or does not list it). */
  note?: string;
};

/** The owned keys `plan` would change: what differs from what its revision wants. */
export function ownedDrift(plan: LabelPlan, observed: ObservedNode): DriftKeys {
  const aliases = new Set(plan.aliases);
  const labels: LabelDrift[] = [];
  for (const [key, want] of Object.entries(plan.set)) {
    if (aliases.has(key)) continue;
    const have = Object.hasOwn(observed.labels, key) ? observed.labels[key] : undefined;
    labels.push(have === undefined ? { key, change: DriftChange.removed, want } : { key, change: DriftChange.changed, want, have });
  }
  for (const key of plan.remove) labels.push({ key, change: DriftChange.unwanted, have: observed.labels[key] ?? '' });
  labels.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const annotations: KeyDrift[] = [];
  const a = plan.annotations;
  if (a) {
    for (const key of Object.keys(a.set))
      annotations.push({ key, change: Object.hasOwn(observed.annotations, key) ? DriftChange.changed : DriftChange.removed });
    for (const key of a.remove) annotations.push({ key, change: DriftChange.unwanted });
  }
  const taints: KeyDrift[] = [];
  const t = plan.taints;
  if (t) {
    const present = new Set((observed.taints ?? []).map(taintId));
    for (const taint of t.add) taints.push({ key: taintId(taint), change: present.has(taintId(taint)) ? DriftChange.changed : DriftChange.removed });
    for (const taint of t.remove) taints.push({ key: taintId(taint), change: DriftChange.unwanted });
  }
  const records = [
    ...(plan.ownershipChanged ? [OWNED_LABELS_ANNOTATION] : []),
    ...(a?.ownershipChanged ? [OWNED_ANNOTATIONS_ANNOTATION] : []),
    ...(t?.ownershipChanged ? [OWNED_TAINTS_ANNOTATION] : []),
  ];
  return { labels, annotations, taints, records };
}

/** How many entries `keys` holds. */
export function driftSize(keys: DriftKeys): number {
  return keys.labels.length + keys.annotations.length + keys.taints.length + keys.records.length;
}

function planFor(wants: NodeWants, observed: ObservedNode): LabelPlan {
  return planLabels({
    labels: observed.labels,
    annotations: observed.annotations,
    taints: observed.taints ?? [],
    desired: wants.labels,
    desiredAnnotations: wants.annotations,
    desiredTaints: wants.taints,
    policy: wants.policy,
  });
}

/** The revision a node's applied-run record names, or null (no record, or one not in relabel's form). */
export function carriedRevision(observed: ObservedNode | null): number | null {
  return observed === null ? null : (readAppliedRun(observed.annotations)?.revision ?? null);
}

/**
 * Classifies one node of the latest design.
 *
 * Contract (each tested): `observed` null → `missing`; no applied-run record
 * → `unmanaged`; a record whose revision's wants are unknown (`carried`
 * undefined) → `unmanaged` with a note; otherwise `drifted` when planning
 * the node against the revision it carries would change an owned key
 * (labels, annotations, taints, ownership records; never the kubelet's
 * os/arch aliases), naming each; else `pending` when planning it against
 * `latest` would change an owned key; else `in_sync`. Pure.
 */
export function classifyDrift(input: {
  node: string;
  observed: ObservedNode | null;
  /** What the latest committed revision wants of the node. */
  latest: NodeWants;
  /** What the revision the node carries wants of it; undefined when that revision or the node in it is unknown. */
  carried: NodeWants | undefined;
  /** The node set the latest design puts the node in; undefined for a node it names. */
  latestSet?: string;
}): DriftVerdict {
  const { node, observed } = input;
  if (observed === null) return { node, state: DriftState.missing, revision: null, run: null };
  const record = readAppliedRun(observed.annotations);
  if (record === null) return { node, state: DriftState.unmanaged, revision: null, run: null };
  const base = { node, revision: record.revision, run: record.run };
  if (input.carried === undefined) {
    return {
      ...base,
      state: DriftState.unmanaged,
      note: `its applied record names revision ${record.revision}, which does not list this node (or is not in the store)`,
    };
  }
  const keys = ownedDrift(planFor(input.carried, observed), observed);
  if (driftSize(keys) > 0) return { ...base, state: DriftState.drifted, keys };
  const ahead = ownedDrift(planFor(input.latest, observed), observed);
  const changes = ahead.labels.length + ahead.annotations.length + ahead.taints.length;
  if (hasMoved(record, input.latestSet)) return { ...base, state: DriftState.moved, changes, ...(record.set !== undefined ? { set: record.set } : {}) };
  if (driftSize(ahead) === 0) return { ...base, state: DriftState.inSync };
  return { ...base, state: DriftState.pending, changes };
}

/**
 * Whether a node's record says it was written in another place than the
 * latest design puts it: as a member of another set, or as a named node
 * that is now a member (or the other way round). A record from before
 * records named the site and set says nothing of where it was written.
 */
function hasMoved(record: { site?: string; set?: string }, latestSet: string | undefined): boolean {
  if (record.site === undefined && record.set === undefined) return false;
  return (record.set ?? null) !== (latestSet ?? null);
}

/**
 * Classifies a node of the cluster that the latest design neither names
 * nor puts in a node set: `orphaned` when it carries an applied-run
 * record of `site` (see `isSiteRecord`: a record without a site is this
 * site's only when `siteless`), naming the revision, run and set the
 * record names; null when it is not this site's (no record, another
 * site's, or one not in relabel's form). Pure.
 */
export function classifyOrphan(input: { node: string; observed: ObservedNode; site: string; siteless: boolean }): DriftVerdict | null {
  const record = readAppliedRun(input.observed.annotations);
  if (record === null || !isSiteRecord(record, input.site, input.siteless)) return null;
  return {
    node: input.node,
    state: DriftState.orphaned,
    revision: record.revision,
    run: record.run,
    ...(record.set !== undefined ? { set: record.set } : {}),
  };
}

/** Counts of nodes in each state. */
export type DriftCounts = Record<DriftState, number> & { total: number };

/** Zero counts. */
export function emptyDriftCounts(): DriftCounts {
  return { total: 0, missing: 0, unmanaged: 0, drifted: 0, moved: 0, pending: 0, in_sync: 0, orphaned: 0 };
}

/** A one-line description of a drifted node's keys, for people: `label a changed (x → y); taint t:NoSchedule removed`. */
export function driftText(keys: DriftKeys, max = 10): string {
  const parts = [
    ...keys.labels.map((l) =>
      l.change === DriftChange.changed
        ? `label ${l.key} changed (wants ${l.want}, has ${l.have})`
        : l.change === DriftChange.removed
          ? `label ${l.key} removed`
          : `label ${l.key} unwanted`,
    ),
    ...keys.annotations.map((k) => `annotation ${k.key} ${k.change}`),
    ...keys.taints.map((k) => `taint ${k.key} ${k.change}`),
    ...keys.records.map((r) => `record ${r} edited`),
  ];
  return parts.length > max ? `${parts.slice(0, max).join('; ')}; and ${parts.length - max} more` : parts.join('; ');
}
