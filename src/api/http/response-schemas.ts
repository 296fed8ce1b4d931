/**
 * zod schemas of the HTTP API's answers: the OpenAPI document describes them,
 * the routes build their bodies as their types, and the tests parse answers
 * with them. Each type shares its schema's name.
 */
import { StartedVia } from '../../core/plan/run-audit.ts';
import { z } from 'zod';
import { ActionName } from './schemas.ts';
import { CommandView, NoteView, StepSummaryView, ValidationView } from '../shipyard/action-schemas.ts';
import { WaveStateView } from '../shipyard/action-rollout.ts';
import { WorkloadImpactView } from '../plans/impact-schema.ts';

/** Severity of a message (Airship's ValidationMessage `level`). */
export const MessageLevel = z.enum(['Error', 'Warning', 'Info']);
/** Severity of a message. */
export type MessageLevel = z.infer<typeof MessageLevel>;

/** One entry of a Status body's `details.messageList`; validation results also carry their `level`. */
export const StatusMessage = z.object({ message: z.string(), error: z.boolean(), level: MessageLevel.optional() }).strict();
/** One entry of `messageList`. */
export type StatusMessage = z.infer<typeof StatusMessage>;

const statusFields = {
  kind: z.literal('Status'),
  apiVersion: z.literal('v1.0'),
  status: z.enum(['Success', 'Failure']),
  message: z.string(),
  reason: z.string(),
  code: z.int(),
  retry: z.boolean(),
};

/** Airship's Status body: every error, and plain successes. `reason` is the failure type. */
export const StatusBody = z.object({ ...statusFields, details: z.object({ errorCount: z.int(), messageList: z.array(StatusMessage) }).strict() }).strict();
/** Airship's Status body. */
export type StatusBody = z.infer<typeof StatusBody>;

/** Answer of `PUT node-labels/{node}` (Promenade). */
export const NodeLabelsStatus = z
  .object({
    ...statusFields,
    details: z
      .object({
        set: z.record(z.string(), z.string()).meta({ description: 'labels created or changed, with their new values' }),
        removed: z.array(z.string()).meta({ description: 'labels relabel owned and that are no longer desired' }),
        unchanged: z.array(z.string()).meta({ description: 'desired labels already right (now recorded as owned)' }),
      })
      .strict(),
  })
  .strict();
/** Answer of `PUT node-labels/{node}`. */
export type NodeLabelsStatus = z.infer<typeof NodeLabelsStatus>;

/** A tag of a revision. */
export const TagView = z.object({ tag: z.string(), data: z.record(z.string(), z.unknown()), createdAt: z.string() }).strict();
/** A tag of a revision. */
export type TagView = z.infer<typeof TagView>;

/** A revision (Deckhand). */
export const RevisionView = z
  .object({
    id: z.int(),
    url: z.string(),
    createdAt: z.string(),
    message: z.string().nullable(),
    buckets: z.array(z.string()),
    tags: z.array(TagView),
  })
  .strict();
/** A revision. */
export type RevisionView = z.infer<typeof RevisionView>;

/** Answer of `GET revisions` (Deckhand's list envelope; no paging). */
export const RevisionList = z.object({ count: z.int(), next: z.null(), prev: z.null(), results: z.array(RevisionView) }).strict();
/** Answer of `GET revisions`. */
export type RevisionList = z.infer<typeof RevisionList>;

/**
 * Answer of `POST commitconfigdocs`: a Status with the new revision. A
 * forced commit of an invalid site lists its errors as Warning messages.
 */
export const CommitStatus = StatusBody.extend({ revision: RevisionView }).strict();
/** Answer of `POST commitconfigdocs`. */
export type CommitStatus = z.infer<typeof CommitStatus>;

/**
 * A `200` of `POST commitconfigdocs`: the commit (CommitStatus), or with
 * `dryrun=true` the validation alone (a Status without revision; `Failure`
 * listing every error when the site is invalid).
 */
export const CommitAnswer = z.union([CommitStatus, StatusBody]);

/** One collection's status between two versions (Shipyard's `GET configdocs`). */
export const CollectionStatusView = z
  .object({
    collection_name: z.string(),
    base_version: z.string(),
    base_revision: z.int().meta({ description: 'the base revision; 0 when nothing was committed' }),
    new_version: z.string(),
    new_revision: z.int().nullable().meta({ description: 'null for a buffer holding changes (it has no revision until committed)' }),
    base_status: z.enum(['present', 'not present']),
    new_status: z.enum(['created', 'modified', 'deleted', 'unmodified']),
  })
  .strict();

/** Answer of `GET configdocs`: every bucket of either version, sorted. */
export const CollectionStatusList = z.array(CollectionStatusView);

/** Shipyard's action lifecycle. */
export const ActionLifecycle = z.enum(['Pending', 'Processing', 'Paused', 'Complete', 'Failed']);
/** Shipyard's action lifecycle. */
export type ActionLifecycle = z.infer<typeof ActionLifecycle>;

/** A failure reason: a public failure type and a message. */
export const FailureView = z.object({ type: z.string(), message: z.string() }).strict();

/** One node's outcome in a run. */
export const NodeResultView = z
  .object({
    node: z.string(),
    status: z.enum(['queued', 'pending', 'success', 'failure', 'cancelled']).meta({
      description: 'queued (not yet planned), pending (a change to apply), success, failure, or cancelled (the run was stopped before the node was started)',
    }),
    set: z.record(z.string(), z.string()).optional(),
    removed: z.array(z.string()).optional(),
    adopted: z.array(z.string()).optional(),
    unchanged: z.int().optional(),
    written: z.boolean().optional(),
    taint_lifted: z.boolean().optional(),
    annotations: z
      .object({ set: z.array(z.string()), removed: z.array(z.string()) })
      .strict()
      .optional()
      .meta({ description: 'annotation keys set and removed (values are not repeated)' }),
    taints: z
      .object({ added: z.array(z.string()), removed: z.array(z.string()) })
      .strict()
      .optional()
      .meta({ description: 'taints added (or changed) and removed, as key=value:effect' }),
    error: FailureView.optional(),
  })
  .strict();
/** One node's outcome in a run. */
export type NodeResultView = z.infer<typeof NodeResultView>;

/** How a finished run went. */
export const RunResultView = z
  .object({
    status: z.enum(['success', 'partial_success', 'failure']),
    counts: z.object({ total: z.int(), success: z.int(), failure: z.int(), written: z.int() }).strict(),
    failures: z
      .array(z.object({ node: z.string(), error: FailureView }).strict())
      .meta({ description: 'a sample of at most 50 failures; every node is in node_results' }),
  })
  .strict();

/** An action in a list (no per-node results). */
export const ActionSummary = z
  .object({
    id: z.string(),
    name: ActionName,
    action_lifecycle: ActionLifecycle,
    execution: z.string().meta({ description: "Temporal's status of the run (RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, …)" }),
    datetime: z.string().meta({ description: 'when the run started' }),
    completed_at: z.string().nullable(),
    workflow_id: z.string(),
    run_id: z.string(),
    user: z.string().nullable().meta({
      description:
        "who started the run, as Shipyard's action names its user: the API token's name, or the OS user of the CLI (null for runs started without it)",
    }),
    started_via: z.enum(StartedVia).nullable().meta({ description: 'how the run was started' }),
    dag_id: ActionName.meta({ description: "the workflow (Shipyard's DAG) the action runs: its name" }),
    dag_status: z.enum(['queued', 'running', 'paused', 'success', 'failed']).meta({ description: "the run's state as Airflow names a DAG run's" }),
    dag_execution_date: z.string().meta({ description: 'when the run started, as the date part of its workflow id (YYYY-MM-DDTHH:mm:ss.SSSSSS)' }),
    steps: z
      .array(StepSummaryView)
      .meta({ description: 'validate_site_design, plan_labels, relabel_nodes (a run in waves: relabel_wave_1, relabel_wave_2, … instead, at most 100)' }),
    notes: z.array(NoteView),
  })
  .strict();
/** An action in a list. */
export type ActionSummary = z.infer<typeof ActionSummary>;

/** Answer of `GET actions`: most recent first. */
export const ActionList = z.array(ActionSummary);

/** Which part of a run's nodes an answer holds: `offset` and `limit` page through `total`. */
export const NodePageView = z
  .object({
    run: z.int().nullable().meta({ description: 'run number in the revision store' }),
    total: z.int(),
    offset: z.int(),
    limit: z.int(),
  })
  .strict();

/** An action (Shipyard), with its revision and a page of per-node results. */
export const ActionView = ActionSummary.extend({
  parameters: z
    .object({
      target_nodes: z
        .array(z.string())
        .optional()
        .meta({ description: 'the targets of this page of node_results (all of them when node_results_page.total ≤ limit)' }),
      node_sets: z.array(z.string()).optional().meta({ description: 'the node sets whose members the action targets, when it was started for node_sets' }),
    })
    .strict(),
  revision: z.int().nullable(),
  committed_rev_id: z.int().nullable().meta({ description: "Shipyard's name of `revision`" }),
  ui_link: z.string().nullable(),
  result: RunResultView.nullable(),
  node_results: z.array(NodeResultView),
  node_results_page: NodePageView,
  failure: FailureView.nullable().meta({ description: 'why the run was rejected or ended early' }),
  context_marker: z.string().nullable().meta({ description: 'a UUID correlating the action (null for runs recorded before it was kept)' }),
  timestamp: z.string().nullable().meta({ description: 'when the action was recorded' }),
  validations: z.array(ValidationView),
  command_audit: z.array(CommandView).meta({ description: 'invoke, then stop, pause, unpause, approve, resume and abort as issued (the newest 100)' }),
  waves: WaveStateView.nullable().meta({
    description: 'a run in waves: the current wave and what its gate waits for, or once ended how many waves and whether it was aborted; null: no waves',
  }),
}).strict();
/** An action. */
export type ActionView = z.infer<typeof ActionView>;

/** Where a desired label comes from (a closed union on `kind`). */
const LayeredParentView = z
  .object({ name: z.string(), layer: z.string() })
  .strict()
  .meta({ description: 'the Deckhand parent (parentSelector) the value was layered from, when the document did not write it itself' });

export const LabelSourceView = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('node'), from: LayeredParentView.optional() })
    .strict()
    .meta({ description: "the node's own owner_data" }),
  z
    .object({ kind: z.literal('host_profile'), profile: z.string(), depth: z.int(), from: LayeredParentView.optional() })
    .strict()
    .meta({ description: "a host profile's owner_data; depth 1 is the node's own profile, 2 its parent, …" }),
  z
    .object({ kind: z.literal('rack'), rack: z.string() })
    .strict()
    .meta({ description: "the labels of the node's rack document" }),
  z
    .object({ kind: z.literal('generated'), generator: z.enum(['rack', 'site', 'host_profile', 'tag']) })
    .strict()
    .meta({ description: 'generated by the label policy' }),
  z
    .object({ kind: z.literal('plugin'), plugin: z.string() })
    .strict()
    .meta({ description: 'given by a label plugin' }),
  z
    .object({ kind: z.literal('node_set'), set: z.string() })
    .strict()
    .meta({ description: 'the owner_data of the node set (relabel/NodeSet/v1) the node is a member of' }),
]);

/** What the mass-removal brake says of a plan or a run. */
export const MassRemovalView = z
  .object({
    owned: z.int().meta({ description: 'labels relabel owns on the planned targets' }),
    removed: z.int().meta({ description: 'owned labels the run would remove' }),
    nodes: z.int().meta({ description: 'nodes that would lose at least one label' }),
    keys: z
      .array(z.object({ key: z.string(), nodes: z.int() }).strict())
      .meta({ description: 'the most removed keys (at most 10), with the nodes losing each' }),
    more_keys: z.int(),
    max_fraction: z.number().meta({ description: "the policy's max_removal_fraction" }),
    exceeded: z.boolean().meta({ description: 'whether a run would be refused (MassRemovalRefused) unless allow_mass_removal' }),
    message: z.string(),
  })
  .strict();

/** A fleet-wide plan: per label key what a run would do and where the key comes from; a page of per-node plans on request. */
export const PlanView = z
  .object({
    id: z.string().meta({ description: 'the plan (its dry run): GET plans/{id} reads it again' }),
    workflow_id: z.string(),
    run_id: z.string(),
    run: z.int().meta({ description: 'run number of the dry run in the revision store' }),
    revision: z.int(),
    site: z.string(),
    ui_link: z.string().nullable(),
    targets: z.int(),
    statuses: z.record(z.string(), z.int()).meta({ description: 'targets by outcome: success (planned) or failure (not in the design or the cluster)' }),
    changing: z.int().meta({ description: 'planned nodes a run would write (a label, annotation, taint or their records changes); the rest are as desired' }),
    failure_types: z.record(z.string(), z.int()),
    node_sets: z
      .record(z.string(), z.int())
      .meta({ description: 'planned members of each node set (relabel/NodeSet/v1) the plan targets; 0: the set matches no node' }),
    labels: z
      .record(
        z.string(),
        z
          .object({
            desired: z.int().meta({ description: 'planned nodes whose desired labels hold the key' }),
            gain: z.int(),
            change: z.int(),
            lose: z.int(),
            adopt: z.int(),
            sources: z
              .array(z.object({ source: LabelSourceView, nodes: z.int() }).strict())
              .meta({ description: 'where the key comes from, most nodes first (at most 20)' }),
            more_sources: z.int(),
          })
          .strict(),
      )
      .meta({ description: 'per label key, sorted (at most 1000)' }),
    more_label_keys: z.int(),
    warnings: z
      .array(z.string())
      .meta({ description: 'what the plan warns of, refusing nothing: node sets matching no node, selectors on labels Cluster API keeps on Machines only' }),
    mass_removal: MassRemovalView.nullable(),
    workload_impact: WorkloadImpactView.nullable().meta({
      description: 'what the plan does to DaemonSets, pods and their PodDisruptionBudgets; null when not weighed',
    }),
    nodes: z
      .object({
        total: z.int(),
        offset: z.int(),
        items: z.array(
          NodeResultView.extend({
            was: z.record(z.string(), z.string()).optional().meta({ description: 'the values the keys of set had' }),
            labels: z
              .record(z.string(), z.object({ value: z.string(), source: LabelSourceView }).strict())
              .optional()
              .meta({ description: 'desired labels with their sources' }),
          }).strict(),
        ),
      })
      .strict()
      .optional(),
  })
  .strict();
/** A fleet-wide plan. */
export type PlanView = z.infer<typeof PlanView>;
