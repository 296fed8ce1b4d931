/**
 * The label plan: the pure diff between a Node's current labels and its
 * desired labels, bounded by what relabel owns, with the plans of its
 * annotations and taints when they are managed too (see `metadata-plan.ts`). Applying it is one patch
 * carrying the label changes and the ownership record together, guarded by
 * what the plan read (see `node-guard.ts`); an empty plan means no write at all.
 */
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION } from './constants.ts';
import { isKubeletLabelKey, isProtectedLabelKey, OS_ARCH_ALIASES } from './label-keys.ts';
import { planAnnotations, planTaints, type AnnotationPlan, type TaintPlan } from './metadata-plan.ts';
import { formatOwnedLabels, readOwnedLabels } from './owned-labels.ts';
import type { Taint } from './taints.ts';

/** The parts of the label policy the planner obeys. A `SitePolicy` fits. */
export type PlanPolicy = {
  /** KEP-793: set a beta os/arch label to its GA twin's value when they differ. */
  reconcileOsArchAliases: boolean;
  /** Keys (or `prefix/` entries) never written or removed. */
  protectedKeys: readonly string[];
  /** The join taint's key when the policy names one (`join_taint_key`): never owned. */
  joinTaintKey?: string;
};

/** What the planner needs to know about one Node. */
export type LabelPlanInput = {
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  desired: Readonly<Record<string, string>>;
  policy: PlanPolicy;
  /** The Node's taints; needed when `desiredTaints` is given. */
  taints?: readonly Taint[];
  /** Desired annotations; without them annotations are not planned (and none is removed). */
  desiredAnnotations?: Readonly<Record<string, string>>;
  /** Desired taints; without them taints are not planned (and none is removed). */
  desiredTaints?: readonly Taint[];
};

/** The changes to make to one Node's labels and ownership record. All lists sorted. */
export type LabelPlan = {
  /** Labels to create or change (desired keys whose value differs, and reconciled aliases). */
  set: Record<string, string>;
  /** Owned labels present on the Node and no longer desired. */
  remove: string[];
  /** Desired keys already present with the right value, not yet owned: recorded as owned. */
  adopt: string[];
  /** Desired keys already present with the right value and already owned. */
  unchanged: string[];
  /** The new ownership record. */
  owned: string[];
  /** Whether the ownership annotation must be rewritten. */
  ownershipChanged: boolean;
  /** True when nothing at all is to be written. */
  empty: boolean;
  /** Beta os/arch keys in `set` because of alias reconciliation (never owned). */
  aliases: string[];
  /** Desired keys refused because the kubelet owns them or the policy protects them. */
  ignored: string[];
  /** Entries of the ownership annotation that are not label keys (see `readOwnedLabels`). */
  discardedOwned: string[];
  /** The annotations' plan, or null when annotations are not planned. */
  annotations: AnnotationPlan | null;
  /** The taints' plan, or null when taints are not planned. */
  taints: TaintPlan | null;
};

/** Orders strings by UTF-16 code unit, as every sorted list of label keys here is. */
export const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The values `labels` held for the keys a plan sets, for those it held: what
 * each change replaces (a new key replaces nothing). Undefined when none.
 */
export function replacedValues(set: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const held = Object.keys(set).filter((key) => Object.hasOwn(labels, key));
  return held.length === 0 ? undefined : Object.fromEntries(held.map((key) => [key, labels[key] ?? '']));
}

/**
 * Plans one Node's label changes.
 *
 * Contract (each property-tested):
 * - every desired key whose current value differs is set;
 * - every owned key that is no longer desired is removed (if present);
 * - a key neither desired nor owned is never touched;
 * - kubelet-owned keys are never written or removed, except that with
 *   `reconcileOsArchAliases` a beta os/arch label present with a value other
 *   than its GA twin's is set to the GA value (KEP-793, Kubernetes ≥ 1.18:
 *   the GA label is the truth; nothing is done when either label is absent);
 *   alias keys never enter the ownership record;
 * - protected keys are neither written nor removed, and their ownership
 *   entry, if any, is left as it is;
 * - applying the plan and planning again gives an empty plan.
 *
 * `desired` is trusted to be valid label syntax (it comes from a validated
 * design); the planner does not re-check it.
 */
export function planLabels(input: LabelPlanInput): LabelPlan {
  const { labels, desired, policy } = input;
  const present = (key: string) => Object.hasOwn(labels, key);
  const isProtected = (key: string) => isProtectedLabelKey(key, policy.protectedKeys);
  const previous = readOwnedLabels(input.annotations);
  const previouslyOwned = new Set(previous.owned);

  const set: [string, string][] = [];
  const adopt: string[] = [];
  const unchanged: string[] = [];
  const ignored: string[] = [];
  const owned = new Set<string>();
  for (const key of Object.keys(desired).sort(byText)) {
    const value = desired[key] ?? '';
    if (isKubeletLabelKey(key) || isProtected(key)) {
      ignored.push(key);
      continue;
    }
    owned.add(key);
    if (!present(key) || labels[key] !== value) set.push([key, value]);
    else if (previouslyOwned.has(key)) unchanged.push(key);
    else adopt.push(key);
  }

  const remove: string[] = [];
  for (const key of previous.owned) {
    if (isKubeletLabelKey(key) || owned.has(key)) continue;
    if (isProtected(key)) owned.add(key);
    else if (present(key)) remove.push(key);
  }

  const aliases: string[] = [];
  if (policy.reconcileOsArchAliases) {
    for (const { ga, beta } of OS_ARCH_ALIASES) {
      const truth = labels[ga];
      if (present(ga) && present(beta) && truth !== undefined && labels[beta] !== truth) {
        set.push([beta, truth]);
        aliases.push(beta);
      }
    }
  }

  const ownedList = [...owned].sort(byText);
  const ownershipChanged = formatOwnedLabels(ownedList) !== previous.raw;
  const annotations = input.desiredAnnotations === undefined ? null : planAnnotations(input.annotations, input.desiredAnnotations);
  const taints = input.desiredTaints === undefined ? null : planTaints(input.taints ?? [], input.annotations, input.desiredTaints, policy);
  return {
    set: Object.fromEntries(set.sort(([a], [b]) => byText(a, b))),
    remove,
    adopt,
    unchanged,
    owned: ownedList,
    ownershipChanged,
    empty: set.length === 0 && remove.length === 0 && !ownershipChanged && annotations?.empty !== false && taints?.empty !== false,
    aliases,
    ignored,
    discardedOwned: previous.discarded,
    annotations,
    taints,
  };
}

/** The labels a Node has after `plan` is applied to `labels` (a new object; inputs unchanged). */
export function applyPlan(labels: Readonly<Record<string, string>>, plan: LabelPlan): Record<string, string> {
  const next = new Map(Object.entries(labels));
  for (const key of plan.remove) next.delete(key);
  for (const [key, value] of Object.entries(plan.set)) next.set(key, value);
  return Object.fromEntries(next);
}

/**
 * The annotations a Node has after `plan` is applied: its annotation changes
 * and every ownership record it rewrites (a new object).
 */
export function applyOwnership(annotations: Readonly<Record<string, string>>, plan: LabelPlan): Record<string, string> {
  const next = new Map(Object.entries(annotations));
  for (const [key, value] of Object.entries(annotationChanges(plan))) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  return Object.fromEntries(next);
}

/**
 * The annotation part of `plan`'s merge patch: annotations set and removed
 * (`null`), and each ownership record that changes (`null` once it is empty).
 */
export function annotationChanges(plan: LabelPlan): Record<string, string | null> {
  const changes: [string, string | null][] = [];
  if (plan.ownershipChanged) changes.push([OWNED_LABELS_ANNOTATION, formatOwnedLabels(plan.owned)]);
  const { annotations, taints } = plan;
  if (annotations !== null) {
    changes.push(...Object.entries(annotations.set), ...annotations.remove.map((key): [string, null] => [key, null]));
    if (annotations.ownershipChanged) changes.push([OWNED_ANNOTATIONS_ANNOTATION, formatOwnedLabels(annotations.owned)]);
  }
  if (taints?.ownershipChanged) changes.push([OWNED_TAINTS_ANNOTATION, formatOwnedLabels(taints.owned)]);
  return Object.fromEntries(changes.sort(([a], [b]) => byText(a, b)));
}

/** A JSON merge patch (RFC 7386) for a Node; `null` removes a key. */
export type NodeLabelPatch = {
  metadata: {
    labels?: Record<string, string | null>;
    annotations?: Record<string, string | null>;
  };
};

/**
 * The metadata part of the merge-patch body applying `plan` in one request:
 * changed labels, removed labels as `null`, the annotation changes and the
 * ownership records that change (see {@link annotationChanges}); the taint
 * list is added by `nodePatch`, the guard by `guardedPatch`. Returns null
 * for an empty plan: nothing is to be sent.
 */
export function labelPatch(plan: LabelPlan): NodeLabelPatch | null {
  if (plan.empty) return null;
  const metadata: NodeLabelPatch['metadata'] = {};
  const labels: [string, string | null][] = [...Object.entries(plan.set), ...plan.remove.map((key): [string, null] => [key, null])];
  if (labels.length > 0) metadata.labels = Object.fromEntries(labels.sort(([a], [b]) => byText(a, b)));
  const annotations = annotationChanges(plan);
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { metadata };
}
