/**
 * The plans of a Node's annotations and taints, beside its label plan and
 * under the same rules: set what the documents want, remove only what the
 * ownership record says relabel set, never touch anything else. Annotations
 * are owned by key ({@link OWNED_ANNOTATIONS_ANNOTATION}), taints by
 * `key:effect` ({@link OWNED_TAINTS_ANNOTATION}). relabel's own records and
 * Kubernetes' system taints are never planned, whatever a record says.
 */
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_TAINTS_ANNOTATION, RECORD_ANNOTATIONS } from './constants.ts';
import { isValidAnnotationKey } from './label-syntax.ts';
import { formatOwnedLabels, readOwnedRecord } from './owned-labels.ts';
import { byTaintId, isJoinTaintKey, isSystemTaintKey, parseTaintId, taintId, type JoinTaintPolicy, type Taint } from './taints.ts';

/** The changes to one Node's annotations and their ownership record. Lists sorted. */
export type AnnotationPlan = {
  /** Annotations to create or change. */
  set: Record<string, string>;
  /** Owned annotations present on the Node and no longer desired. */
  remove: string[];
  /** Desired annotations already present with the right value, not yet owned. */
  adopt: string[];
  /** Desired annotations already present, right value, owned. */
  unchanged: string[];
  /** The new ownership record. */
  owned: string[];
  ownershipChanged: boolean;
  /** True when nothing of the annotations is to be written. */
  empty: boolean;
};

/** The changes to one Node's taints and their ownership record. Lists sorted by `key:effect`. */
export type TaintPlan = {
  /** Taints to add, or whose value changes. */
  add: Taint[];
  /** Owned taints present on the Node and no longer desired. */
  remove: Taint[];
  /** Desired taints already present as desired, not yet owned (as `key:effect`). */
  adopt: string[];
  /** The new ownership record (`key:effect` entries). */
  owned: string[];
  ownershipChanged: boolean;
  /** The Node's whole taint list after the plan: everyone else's taints as they were, in their order. */
  next: Taint[];
  /** True when `next` differs from the Node's list. */
  changed: boolean;
  /** True when nothing of the taints is to be written. */
  empty: boolean;
};

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** True when relabel may own annotation `key`: a valid annotation key (upper case allowed) that is not one of its own records. */
function ownableAnnotation(key: string): boolean {
  return isValidAnnotationKey(key) && !RECORD_ANNOTATIONS.includes(key);
}

/** Whether relabel may own a taint (`key:effect`) under `policy`: not a system taint, not the join taint. */
function ownableTaint(policy: JoinTaintPolicy | undefined): (id: string) => boolean {
  return (id) => {
    const parsed = parseTaintId(id);
    return parsed !== undefined && !isSystemTaintKey(parsed.key) && !isJoinTaintKey(parsed.key, policy);
  };
}

/**
 * Plans one Node's annotations: every desired annotation whose value differs
 * is set, every owned one no longer desired is removed (if present), nothing
 * else is touched. `desired` is trusted to be validated.
 */
export function planAnnotations(annotations: Readonly<Record<string, string>>, desired: Readonly<Record<string, string>>): AnnotationPlan {
  const previous = readOwnedRecord(annotations, OWNED_ANNOTATIONS_ANNOTATION, ownableAnnotation);
  const previouslyOwned = new Set(previous.owned);
  const set: Record<string, string> = {};
  const adopt: string[] = [];
  const unchanged: string[] = [];
  const keys = Object.keys(desired).sort(byText);
  for (const key of keys) {
    const value = desired[key] ?? '';
    if (!Object.hasOwn(annotations, key) || annotations[key] !== value) set[key] = value;
    else if (previouslyOwned.has(key)) unchanged.push(key);
    else adopt.push(key);
  }
  const remove = previous.owned.filter((key) => !Object.hasOwn(desired, key) && Object.hasOwn(annotations, key));
  const owned = keys;
  const ownershipChanged = formatOwnedLabels(owned) !== previous.raw;
  return { set, remove, adopt, unchanged, owned, ownershipChanged, empty: Object.keys(set).length === 0 && remove.length === 0 && !ownershipChanged };
}

/**
 * Plans one Node's taints: every desired taint absent or with another value
 * is added (replacing the Node's taint of that key and effect), every owned
 * taint no longer desired is removed (if present), and every other taint is
 * kept as it is, where it is. `desired` is trusted to be validated (no system
 * taint, one per key and effect). A record entry naming the join taint
 * (`policy`'s, or the default) is dropped: the join taint is lifted, never owned.
 */
export function planTaints(
  taints: readonly Taint[],
  annotations: Readonly<Record<string, string>>,
  desired: readonly Taint[],
  policy?: JoinTaintPolicy,
): TaintPlan {
  const previous = readOwnedRecord(annotations, OWNED_TAINTS_ANNOTATION, ownableTaint(policy));
  const previouslyOwned = new Set(previous.owned);
  const current = new Map(taints.map((t) => [taintId(t), t]));
  const wanted = new Map([...desired].sort(byTaintId).map((t) => [taintId(t), t]));
  const add: Taint[] = [];
  const adopt: string[] = [];
  for (const [id, taint] of wanted) {
    const present = current.get(id);
    if (present === undefined || (present.value ?? '') !== (taint.value ?? '')) add.push(taint);
    else if (!previouslyOwned.has(id)) adopt.push(id);
  }
  const remove = previous.owned.filter((id) => !wanted.has(id) && current.has(id)).map((id) => current.get(id) as Taint);
  const removed = new Set(remove.map(taintId));
  const added = new Map(add.map((t) => [taintId(t), t]));
  const next = taints.filter((t) => !removed.has(taintId(t))).map((t) => added.get(taintId(t)) ?? t);
  next.push(...add.filter((t) => !current.has(taintId(t))));
  const owned = [...wanted.keys()];
  const ownershipChanged = formatOwnedLabels(owned) !== previous.raw;
  const changed = add.length > 0 || remove.length > 0;
  return { add, remove, adopt, owned, ownershipChanged, next, changed, empty: !changed && !ownershipChanged };
}
