/**
 * The one reconcile loop for a node's labels, shared by the relabelNode
 * workflow and the synchronous node-labels API: read → plan (pure) → no
 * write for an empty plan → one patch guarded by resourceVersion → verify
 * from the stored result; a stale resourceVersion re-reads and re-plans.
 *
 * It does no I/O of its own: the caller passes the read and the write
 * (activities in a workflow, API calls elsewhere), so it stays deterministic
 * wherever the steps are.
 */
import { labelPatch, planLabels, type LabelPlan, type NodeLabelPatch, type PlanPolicy } from './label-plan.ts';

/** What the loop needs to know of a node. */
export type NodeLabelState = {
  resourceVersion: string;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
};

/** What `write` returns when the API server refused the patch as stale (409). */
export const STALE = Symbol('stale resourceVersion');

/** The I/O the loop is given. */
export type ReconcileSteps = {
  /** Reads the node. */
  read(): Promise<NodeLabelState>;
  /** Sends one patch; the node as stored after it, or {@link STALE}. */
  write(patch: NodeLabelPatch): Promise<NodeLabelState | typeof STALE>;
  /** Told each plan before anything is written (progress reporting). */
  onPlan?(plan: LabelPlan, attempt: number): void;
};

/** How a reconcile ended. */
export type ReconcileOutcome =
  /** The node carries the desired labels (or, in a dry run, `plan` says what it would take). */
  | { status: 'done'; plan: LabelPlan; written: boolean; attempts: number }
  /** The patch landed but the stored node still differs: `remaining` is what is left. */
  | { status: 'unverified'; plan: LabelPlan; remaining: LabelPlan; attempts: number }
  /** Every attempt met a concurrent change. */
  | { status: 'conflicts'; attempts: number };

/**
 * Brings one node's labels to `desired`, within what relabel owns (see
 * `planLabels`), making at most `maxAttempts` reads. Writes nothing when
 * the plan is empty or `dryRun` is set, and at most one patch per read.
 * Errors from the steps propagate unchanged.
 */
export async function reconcileNodeLabels(
  input: { desired: Readonly<Record<string, string>>; policy: PlanPolicy; maxAttempts: number; dryRun?: boolean },
  steps: ReconcileSteps,
): Promise<ReconcileOutcome> {
  const { desired, policy } = input;
  for (let attempt = 1; attempt <= input.maxAttempts; attempt++) {
    const state = await steps.read();
    const plan = planLabels({ labels: state.labels, annotations: state.annotations, desired, policy });
    steps.onPlan?.(plan, attempt);
    const patch = labelPatch(plan, state.resourceVersion);
    if (patch === null || input.dryRun) return { status: 'done', plan, written: false, attempts: attempt };
    const after = await steps.write(patch);
    if (after === STALE) continue;
    const remaining = planLabels({ labels: after.labels, annotations: after.annotations, desired, policy });
    if (!remaining.empty) return { status: 'unverified', plan, remaining, attempts: attempt };
    return { status: 'done', plan, written: true, attempts: attempt };
  }
  return { status: 'conflicts', attempts: input.maxAttempts };
}
