/**
 * The one reconcile loop for a node's labels (and, when given, its
 * annotations and taints), shared by the relabelNode
 * workflow and the synchronous node-labels API: read → plan (pure) → no
 * write for an empty plan → one patch guarded by what the plan read (see
 * `node-guard.ts`) → verify from the stored result; a failed guard waits,
 * re-reads and re-plans.
 *
 * It does no I/O of its own: the caller passes the read and the write
 * (activities in a workflow, API calls elsewhere), so it stays deterministic
 * wherever the steps are.
 */
import { formatAppliedRun, type AppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { labelPatch, planLabels, type LabelPlan, type NodeLabelPatch, type PlanPolicy } from './label-plan.ts';
import { guardedPatch, planReads, type JsonPatchOp } from './node-guard.ts';
import { liftedTaintKey, type Taint, type TaintLift } from './taints.ts';

export type { Taint, TaintLift } from './taints.ts';

/** What the loop needs to know of a node. */
export type NodeLabelState = {
  resourceVersion: string;
  /** The node's uid, when known: a write is refused if the node was made again since. */
  uid?: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints?: readonly Taint[];
};

/**
 * The changes of one write, in merge-patch form: the label plan's metadata,
 * plus, when the taints change or the uninitialized taint is lifted, the
 * node's whole taint list (everyone else's taints are in it as they were
 * read). The loop sends them as a JSON Patch guarded by what the plan read
 * (`guardedPatch`), whose test of the taint list as read makes replacing
 * the list safe.
 */
export type NodePatch = NodeLabelPatch & { spec?: { taints: Taint[] | null } };

/** Whether `state` carries relabel's join taint (`key`, by default {@link UNINITIALIZED_TAINT_KEY}). */
export function hasUninitializedTaint(state: Pick<NodeLabelState, 'taints'>, key: string = UNINITIALIZED_TAINT_KEY): boolean {
  return (state.taints ?? []).some((t) => t.key === key);
}

/**
 * What a write says about who made it ({@link APPLIED_ANNOTATION}): the run
 * and revision it applies, null to remove a record the node carries (a
 * write that is no run's), or undefined to leave the annotation alone.
 */
export type AppliedRecord = AppliedRun | null | undefined;

/** Whether a patch for `state` lifts the join taint (the one `liftTaint` names, when the node carries it). */
export function liftsTaint(state: Pick<NodeLabelState, 'taints'>, liftTaint: TaintLift): boolean {
  const key = liftedTaintKey(liftTaint);
  return key !== undefined && hasUninitializedTaint(state, key);
}

/**
 * The patch for `plan` on `state`, ONE request for everything: labels,
 * annotations and the ownership records as `labelPatch` builds them, the
 * taint list as the plan leaves it, and with `liftTaint` the join taint it
 * names removed, so pods are let in exactly when the labels land. Null when
 * there is nothing to write; the applied-run record rides along only on a
 * patch that is sent anyway, so it never makes a node look changed.
 */
export function nodePatch(plan: LabelPlan, state: NodeLabelState, liftTaint: TaintLift, applied?: AppliedRecord): NodePatch | null {
  const labels = labelPatch(plan);
  let patch: NodePatch | null = labels;
  let taints = plan.taints?.changed === true ? plan.taints.next : undefined;
  if (liftsTaint(state, liftTaint)) taints = (taints ?? state.taints ?? []).filter((t) => t.key !== liftedTaintKey(liftTaint));
  if (taints !== undefined) {
    patch = { metadata: labels?.metadata ?? {}, spec: { taints: taints.length > 0 ? taints : null } };
  }
  if (patch === null || applied === undefined) return patch;
  if (applied === null && !Object.hasOwn(state.annotations, APPLIED_ANNOTATION)) return patch;
  const value = applied === null ? null : formatAppliedRun(applied);
  return { ...patch, metadata: { ...patch.metadata, annotations: { ...patch.metadata.annotations, [APPLIED_ANNOTATION]: value } } };
}

/** What `write` returns when the API server refused the patch because a key the plan read had changed. */
export const STALE = Symbol('stale read');

/** The I/O the loop is given. */
export type ReconcileSteps = {
  /** Reads the node. */
  read(): Promise<NodeLabelState>;
  /**
   * Sends one JSON Patch, guarded by what the plan read (see
   * `guardedPatch`); the node as stored after it, or {@link STALE} when a
   * guard failed.
   */
  write(patch: JsonPatchOp[]): Promise<NodeLabelState | typeof STALE>;
  /** Waits before the node is read again after a stale write (`attempt` is the attempt that met it). */
  backoff?(attempt: number): Promise<void>;
  /** Told each plan before anything is written (progress reporting). */
  onPlan?(plan: LabelPlan, attempt: number): void;
};

/** How a reconcile ended. */
export type ReconcileOutcome =
  /** The node carries the desired labels (or, in a dry run, `plan` says what it would take). */
  | { status: 'done'; plan: LabelPlan; written: boolean; attempts: number; taintLifted: boolean }
  /** The patch landed but the stored node still differs: `remaining` is what is left. */
  | { status: 'unverified'; plan: LabelPlan; remaining: LabelPlan; taintLeft: boolean; attempts: number }
  /** Every attempt met a concurrent change. */
  | { status: 'conflicts'; attempts: number };

/**
 * Brings one node's labels to `desired`, within what relabel owns (see
 * `planLabels`), making at most `maxAttempts` reads. With `liftTaint`, the
 * uninitialized taint goes in the same patch, and so does `applied` (see
 * {@link nodePatch}). Writes nothing when there is nothing to change or
 * `dryRun` is set, and at most one patch per read. Errors from the steps
 * propagate unchanged.
 */
export async function reconcileNodeLabels(
  input: {
    desired: Readonly<Record<string, string>>;
    /** Desired annotations and taints; without them, they are left alone. */
    desiredAnnotations?: Readonly<Record<string, string>>;
    desiredTaints?: readonly Taint[];
    policy: PlanPolicy;
    maxAttempts: number;
    dryRun?: boolean;
    /** The join taint to lift in the same write (see {@link TaintLift}). */
    liftTaint?: TaintLift;
    applied?: AppliedRecord;
  },
  steps: ReconcileSteps,
): Promise<ReconcileOutcome> {
  const { desired, policy, desiredAnnotations, desiredTaints } = input;
  const planOf = (state: NodeLabelState) => planLabels({ ...state, desired, policy, desiredAnnotations, desiredTaints });
  for (let attempt = 1; attempt <= input.maxAttempts; attempt++) {
    const state = await steps.read();
    const plan = planOf(state);
    steps.onPlan?.(plan, attempt);
    const liftTaint = input.liftTaint ?? false;
    const patch = nodePatch(plan, state, liftTaint, input.applied);
    const taintLifted = patch !== null && liftsTaint(state, liftTaint);
    // In a dry run, `taintLifted` says the taint would be lifted.
    if (patch === null || input.dryRun) return { status: 'done', plan, written: false, attempts: attempt, taintLifted };
    const after = await steps.write(guardedPatch(patch, state, planReads({ ...input, liftTaint }, state)));
    if (after === STALE) {
      if (attempt < input.maxAttempts) await steps.backoff?.(attempt);
      continue;
    }
    const remaining = planOf(after);
    const taintLeft = liftsTaint(after, liftTaint);
    if (!remaining.empty || taintLeft) return { status: 'unverified', plan, remaining, taintLeft, attempts: attempt };
    return { status: 'done', plan, written: true, attempts: attempt, taintLifted };
  }
  return { status: 'conflicts', attempts: input.maxAttempts };
}
