/**
 * Names defined once for the whole project: the default label domain, the
 * ownership and applied-run annotations and the Temporal task queue.
 */

/** Default domain for generated labels when the policy document names none. */
export const DEFAULT_LABEL_DOMAIN = 'relabel.airshipit.org';

/**
 * Annotation on each Node listing, comma-separated and sorted, the label keys
 * relabel set there. Only keys listed here are ever removed by relabel.
 * Fixed (not derived from the policy domain) so a domain change never makes
 * relabel forget what it owns.
 */
export const OWNED_LABELS_ANNOTATION = 'relabel.airshipit.org/owned-labels';

/**
 * Annotation on each Node an update run wrote, naming the run and the
 * revision whose labels that write applied, as `revision=5,run=17`. Sent in
 * the same guarded patch as the labels, only when that patch is sent; the
 * synchronous node-labels API, which applies no revision, removes it when it
 * writes. It never enters a plan: a node whose labels are as desired is
 * unchanged whichever run the annotation names.
 */
export const APPLIED_ANNOTATION = 'relabel.airshipit.org/applied';

/**
 * Annotation on each Node listing, comma-separated and sorted, the
 * annotation keys relabel set there from the documents. Only keys listed
 * here are ever removed by relabel.
 */
export const OWNED_ANNOTATIONS_ANNOTATION = 'relabel.airshipit.org/owned-annotations';

/**
 * Annotation on each Node listing, comma-separated and sorted, the taints
 * relabel set there from the documents, each as `key:effect` (a taint's
 * identity). Only taints listed here are ever removed by relabel.
 */
export const OWNED_TAINTS_ANNOTATION = 'relabel.airshipit.org/owned-taints';

/** relabel's own bookkeeping annotations: documents may not set them. */
export const RECORD_ANNOTATIONS: readonly string[] = [OWNED_LABELS_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_TAINTS_ANNOTATION, APPLIED_ANNOTATION];

/** Default Temporal task queue shared by the worker and every client. */
export const DEFAULT_TASK_QUEUE = 'relabel';

/** Default task queue of the fleet's workflows (rollouts, surveys), polled by the centre worker only. */
export const DEFAULT_FLEET_TASK_QUEUE = 'relabel-fleet';

/** The site name of a design whose documents hold no `drydock/Region/v1`. */
export const DEFAULT_SITE = 'default';

/** Default Temporal namespace. */
export const DEFAULT_NAMESPACE = 'default';

/**
 * Custom search attributes relabel sets on its workflows, with their Temporal
 * types; the local stack registers them on the dev server at start.
 */
export const SEARCH_ATTRIBUTES = {
  RelabelRevision: 'Int',
  RelabelStatus: 'Keyword',
  RelabelSite: 'Keyword',
  RelabelNode: 'Keyword',
} as const;

/**
 * The default key of the join taint (effect NoSchedule) that keeps pods off
 * a new Node until relabel has applied its labels; removed by relabel when
 * the label policy sets `lift_uninitialized_taint`, as Cluster API holds new
 * nodes with its `uninitialized` taint. The policy's `join_taint_key` names
 * another (an autoscaler's startup-taint prefix); documents may set neither.
 */
export const UNINITIALIZED_TAINT_KEY = 'relabel.airshipit.org/uninitialized';

/** The effects a Kubernetes taint can have. */
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
/** One of {@link TAINT_EFFECTS}. */
export type TaintEffect = (typeof TAINT_EFFECTS)[number];
