/**
 * zod schemas of the HTTP API: requests (path, query, body), validated at the
 * edge with `.strict()` so an unknown field is an error, and responses. The
 * OpenAPI document is generated from these same schemas; each type shares
 * its schema's name.
 */
import { z } from 'zod';
import { isKubeletLabelKey } from '../core/label-keys.ts';
import { dns1123SubdomainErrors, labelKeyErrors, labelValueErrors } from '../core/label-syntax.ts';
import { NodeFilterSet } from '../core/node-filter.ts';
import { BUCKET_NAME_PATTERN, MAX_NAME_LENGTH, TAG_NAME_PATTERN } from '../store/revision-store.ts';

// ---------------------------------------------------------------- path parameters

/** A revision id in a path: a positive integer. */
export const RevisionIdParam = z.string().regex(/^[1-9][0-9]{0,8}$/, { error: 'revision id must be a positive integer' });

/** `{id}` of a revision. */
export const RevisionPath = z.object({ id: RevisionIdParam }).strict();
/** `{id}` of a revision. */
export type RevisionPath = z.infer<typeof RevisionPath>;

/** A tag name, as the store accepts it. */
export const TagName = z
  .string()
  .max(MAX_NAME_LENGTH)
  .regex(TAG_NAME_PATTERN, { error: 'tag names are lower-case alphanumerics, "-" and ".", alphanumeric at both ends' });

/** `{id}` and `{tag}` of a revision tag. */
export const RevisionTagPath = z.object({ id: RevisionIdParam, tag: TagName }).strict();
/** `{id}` and `{tag}` of a revision tag. */
export type RevisionTagPath = z.infer<typeof RevisionTagPath>;

/** `{bucket}` of configdocs (Shipyard's collection). */
export const BucketPath = z
  .object({
    bucket: z
      .string()
      .max(MAX_NAME_LENGTH)
      .regex(BUCKET_NAME_PATTERN, { error: 'bucket names are lower-case alphanumerics, "-", "_" and ".", alphanumeric at both ends' }),
  })
  .strict();
/** `{bucket}` of configdocs. */
export type BucketPath = z.infer<typeof BucketPath>;

/** An action or task id (see `run-ids.ts`): base64url. */
export const RunIdParam = z.string().max(1024).regex(/^[A-Za-z0-9_-]+$/, { error: 'ids are base64url text' });

/** `{id}` of an action. */
export const ActionPath = z.object({ id: RunIdParam }).strict();
/** `{id}` of an action. */
export type ActionPath = z.infer<typeof ActionPath>;

/** `{id}` and `{verb}` of an action control; relabel supports `stop` only (no pause). */
export const ActionControlPath = z.object({ id: RunIdParam, verb: z.enum(['stop'], { error: 'the only control verb is "stop"' }) }).strict();
/** `{id}` and `{verb}` of an action control. */
export type ActionControlPath = z.infer<typeof ActionControlPath>;

/** `{id}` of a task. */
export const TaskPath = z.object({ id: RunIdParam }).strict();
/** `{id}` of a task. */
export type TaskPath = z.infer<typeof TaskPath>;

/** `{node}` of node-labels: a Kubernetes Node name (DNS-1123 subdomain). */
export const NodePath = z
  .object({
    node: z
      .string()
      .max(253)
      .superRefine((name, ctx) => {
        for (const message of dns1123SubdomainErrors(name)) ctx.addIssue({ code: 'custom', message: `node name ${message}` });
      }),
  })
  .strict();
/** `{node}` of node-labels. */
export type NodePath = z.infer<typeof NodePath>;

// ---------------------------------------------------------------- query strings

/** No query parameters at all. */
export const NoQuery = z.object({}).strict();

/** Which documents of a bucket: staged, committed, or those of the latest revision that took part in a site action. */
export const ConfigdocsVersion = z.enum(['buffer', 'committed', 'last_site_action', 'successful_site_action']);
/** Which documents of a bucket. */
export type ConfigdocsVersion = z.infer<typeof ConfigdocsVersion>;

/** Query of `GET configdocs/{bucket}` (default `buffer`, as Shipyard). */
export const ConfigdocsQuery = z.object({ version: ConfigdocsVersion.optional() }).strict();
/** Query of `GET configdocs/{bucket}`. */
export type ConfigdocsQuery = z.infer<typeof ConfigdocsQuery>;

/** Query of `GET renderedconfigdocs` (default `committed`; the buffer is not rendered). */
export const RenderedQuery = z.object({ version: ConfigdocsVersion.exclude(['buffer']).optional() }).strict();
/** Query of `GET renderedconfigdocs`. */
export type RenderedQuery = z.infer<typeof RenderedQuery>;

/** Query of `POST configdocs/{bucket}`: Shipyard's `buffermode`; relabel always replaces a bucket's staged content. */
export const StageQuery = z.object({ buffermode: z.enum(['replace']).optional() }).strict();
/** Query of `POST configdocs/{bucket}`. */
export type StageQuery = z.infer<typeof StageQuery>;

/** Query of `POST commitconfigdocs`: Shipyard's flags; relabel never commits invalid documents nor dry-runs a commit. */
export const CommitQuery = z
  .object({
    force: z.enum(['false'], { error: 'force=true is not supported: invalid documents are never committed' }).optional(),
    dryrun: z.enum(['false'], { error: 'dryrun=true is not supported' }).optional(),
  })
  .strict();
/** Query of `POST commitconfigdocs`. */
export type CommitQuery = z.infer<typeof CommitQuery>;

/** Query of `GET actions`: how many of the most recent. */
export const ActionListQuery = z.object({ limit: z.string().regex(/^([1-9][0-9]?|100)$/, { error: 'limit is 1 to 100' }).optional() }).strict();
/** Query of `GET actions`. */
export type ActionListQuery = z.infer<typeof ActionListQuery>;

// ---------------------------------------------------------------- bodies

/** Body of `POST configdocs/{bucket}`: multi-document YAML text. */
export const ConfigdocsBody = z.string().min(1, { error: 'the body must hold YAML documents' });

/** Body of `POST revisions/{id}/tags/{tag}`: optional JSON object kept with the tag. */
export const TagDataBody = z.record(z.string(), z.unknown()).optional();
/** Body of a tag request. */
export type TagDataBody = z.infer<typeof TagDataBody>;

/** Shipyard action names relabel runs; both start an update run. */
export const ActionName = z.enum(['update_labels', 'relabel_nodes']);
/** A Shipyard action name. */
export type ActionName = z.infer<typeof ActionName>;

/** Body of `POST actions`. `target_nodes`: a list, or one comma-separated string. */
export const ActionRequest = z
  .object({
    name: ActionName,
    parameters: z.object({ target_nodes: z.union([z.array(z.string()), z.string()]) }).strict(),
  })
  .strict();
/** Body of `POST actions`. */
export type ActionRequest = z.infer<typeof ActionRequest>;

/**
 * Body of `POST tasks` (Drydock). `design_ref`:
 * `deckhand+http://HOST/api/v1.0/revisions/{N}/rendered-documents`, `revision:N` or `committed`.
 */
export const TaskRequest = z
  .object({
    action: z.enum(['relabel_nodes'], { error: (i) => (i.input === undefined ? 'action is required' : `unknown task action ${JSON.stringify(i.input)} (only "relabel_nodes")`) }),
    design_ref: z.string({ error: (i) => (i.input === undefined ? 'design_ref is required' : 'design_ref must be a string') }).min(1).max(2048),
    node_filter: NodeFilterSet,
  })
  .strict();
/** Body of `POST tasks`. */
export type TaskRequest = z.infer<typeof TaskRequest>;

/**
 * Body of `PUT node-labels/{node}`: the node's complete desired set of
 * relabel-managed labels. Keys and values are checked against Kubernetes
 * syntax; keys the kubelet owns are refused.
 */
export const NodeLabelsBody = z.record(z.string(), z.string()).superRefine((labels, ctx) => {
  for (const [key, value] of Object.entries(labels)) {
    for (const message of labelKeyErrors(key)) ctx.addIssue({ code: 'custom', path: [key], message: `label key ${JSON.stringify(key)}: ${message}` });
    for (const message of labelValueErrors(value)) ctx.addIssue({ code: 'custom', path: [key], message: `label value ${JSON.stringify(value)}: ${message}` });
    if (isKubeletLabelKey(key)) ctx.addIssue({ code: 'custom', path: [key], message: `label ${JSON.stringify(key)} is owned by the kubelet; relabel never writes or removes it` });
  }
});
/** Body of `PUT node-labels/{node}`. */
export type NodeLabelsBody = z.infer<typeof NodeLabelsBody>;

// ---------------------------------------------------------------- responses

/** One entry of a Status body's `details.messageList`. */
export const StatusMessage = z.object({ message: z.string(), error: z.boolean() }).strict();
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
export const StatusBody = z
  .object({ ...statusFields, details: z.object({ errorCount: z.int(), messageList: z.array(StatusMessage) }).strict() })
  .strict();
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

/** Answer of `POST commitconfigdocs`: a Status with the new revision. */
export const CommitStatus = StatusBody.extend({ revision: RevisionView }).strict();
/** Answer of `POST commitconfigdocs`. */
export type CommitStatus = z.infer<typeof CommitStatus>;

/** Shipyard's action lifecycle. */
export const ActionLifecycle = z.enum(['Pending', 'Processing', 'Complete', 'Failed']);
/** Shipyard's action lifecycle. */
export type ActionLifecycle = z.infer<typeof ActionLifecycle>;

/** A failure reason: a public failure type and a message. */
export const FailureView = z.object({ type: z.string(), message: z.string() }).strict();

/** One node's outcome in a run. */
export const NodeResultView = z
  .object({
    node: z.string(),
    status: z.enum(['success', 'failure']),
    set: z.record(z.string(), z.string()).optional(),
    removed: z.array(z.string()).optional(),
    adopted: z.array(z.string()).optional(),
    unchanged: z.int().optional(),
    written: z.boolean().optional(),
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
  })
  .strict();
/** An action in a list. */
export type ActionSummary = z.infer<typeof ActionSummary>;

/** Answer of `GET actions`: most recent first. */
export const ActionList = z.array(ActionSummary);

/** An action (Shipyard), with its revision and per-node results. */
export const ActionView = ActionSummary.extend({
  parameters: z.object({ target_nodes: z.array(z.string()).optional() }).strict(),
  revision: z.int().nullable(),
  committed_rev_id: z.int().nullable().meta({ description: "Shipyard's name of `revision`" }),
  ui_link: z.string().nullable(),
  result: RunResultView.nullable(),
  node_results: z.array(NodeResultView),
  failure: FailureView.nullable().meta({ description: 'why the run was rejected or ended early' }),
}).strict();
/** An action. */
export type ActionView = z.infer<typeof ActionView>;

/** Drydock's result block. */
export const TaskResultView = z
  .object({
    status: z.enum(['success', 'partial_success', 'failure', 'incomplete']),
    successes: z.array(z.string()),
    failures: z.array(z.string()),
    details: z.object({ errorCount: z.int(), messageList: z.array(StatusMessage) }).strict(),
  })
  .strict();
/** Drydock's result block. */
export type TaskResultView = z.infer<typeof TaskResultView>;

/** Drydock's task status. */
export const TaskStatus = z.enum(['Queued', 'Running', 'Complete', 'Terminated']);
/** Drydock's task status. */
export type TaskStatus = z.infer<typeof TaskStatus>;

/** A Drydock task: one subtask per node. */
export const TaskView = z
  .object({
    task_id: z.string(),
    action: z.literal('relabel_nodes'),
    status: TaskStatus,
    design_ref: z.string().nullable(),
    node_filter: NodeFilterSet.nullable(),
    revision: z.int().nullable(),
    created: z.string(),
    completed: z.string().nullable(),
    ui_link: z.string().nullable(),
    result: TaskResultView,
    subtasks: z.array(z.object({ node_name: z.string(), status: TaskStatus, result: TaskResultView.omit({ successes: true, failures: true }) }).strict()),
  })
  .strict();
/** A Drydock task. */
export type TaskView = z.infer<typeof TaskView>;
