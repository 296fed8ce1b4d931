/**
 * zod schemas of the HTTP API's requests (path, query, body), validated at
 * the edge with `.strict()` so an unknown field is an error. The OpenAPI
 * document is generated from these same schemas (query strings: see
 * `query-schemas.ts`, re-exported here; answers: `response-schemas.ts`);
 * each type shares its schema's name.
 */
import { quote } from '../../core/plan/text.ts';
import { z } from 'zod';
import { isKubeletLabelKey } from '../../core/plan/label-keys.ts';
import { dns1123SubdomainErrors, labelKeyErrors, labelValueErrors } from '../../core/plan/label-syntax.ts';
import { NodeFilterSet } from '../../core/site/node-filter.ts';
import { ACTION_CONTROL_VERBS, RolloutParameters } from '../shipyard/action-rollout.ts';
import { BUCKET_NAME_PATTERN, MAX_NAME_LENGTH, TAG_NAME_PATTERN } from '../../store/revisions/revision-store.ts';

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

/** An action or task id (see `src/api/runs/run-ids.ts`): base64url. */
export const RunIdParam = z
  .string()
  .max(1024)
  .regex(/^[A-Za-z0-9_-]+$/, { error: 'ids are base64url text' });

/** `{id}` of an action. */
export const ActionPath = z.object({ id: RunIdParam }).strict();
/** `{id}` of an action. */
export type ActionPath = z.infer<typeof ActionPath>;

/** `{id}` and `{verb}` of an action control: Shipyard's `pause`, `unpause` and `stop`, and relabel's gate verbs `approve`, `resume` and `abort`. */
export const ActionControlPath = z
  .object({ id: RunIdParam, verb: z.enum(ACTION_CONTROL_VERBS, { error: `the control verbs are ${ACTION_CONTROL_VERBS.map((v) => `"${v}"`).join(', ')}` }) })
  .strict();
/** `{id}` and `{verb}` of an action control. */
export type ActionControlPath = z.infer<typeof ActionControlPath>;

/** `{id}` of a task: a run's id, or a subtask's (the run's id, a dot and the node's position in the run). */
export const TaskPath = z
  .object({
    id: z
      .string()
      .max(1024)
      .regex(/^[A-Za-z0-9_-]+(\.(0|[1-9][0-9]{0,8}))?$/, { error: "task ids are base64url text, a subtask's followed by .N" }),
  })
  .strict();
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

// ---------------------------------------------------------------- query strings: see query-schemas.ts

export * from './query-schemas.ts';

// ---------------------------------------------------------------- bodies

/** Body of `POST configdocs/{bucket}`: multi-document YAML text. */
export const ConfigdocsBody = z.string().min(1, { error: 'the body must hold YAML documents' });

/** Body of `POST revisions/{id}/tags/{tag}`: optional JSON object kept with the tag. */
export const TagDataBody = z.record(z.string(), z.unknown()).optional();
/** Body of a tag request. */
export type TagDataBody = z.infer<typeof TagDataBody>;

/**
 * A boolean parameter of an action: a JSON boolean, or the text Shipyard's
 * `create action --param name=value` sends, `true` or `false` in any case.
 */
export const BooleanParam = z
  .union([z.boolean(), z.string().regex(/^(true|false)$/i, { error: 'must be true or false' })])
  .transform((v) => (typeof v === 'string' ? v.toLowerCase() === 'true' : v));

/** Shipyard action names relabel runs; both start an update run. */
export const ActionName = z.enum(['update_labels', 'relabel_nodes']);
/** A Shipyard action name. */
export type ActionName = z.infer<typeof ActionName>;

/** Most node sets one request names. */
export const MAX_NODE_SET_NAMES = 100;

const nodeSetName = z.string().min(1, { error: 'a node set name is never empty' }).max(253);

/**
 * Node set names (`relabel/NodeSet/v1` documents): a list, or one
 * comma-separated string as `shipyard create action --param node_sets=a,b`
 * sends it; at least one, at most {@link MAX_NODE_SET_NAMES}.
 */
export const NodeSetNames = z
  .union([z.array(nodeSetName), z.string().transform((text) => (text.trim() === '' ? [] : text.split(',').map((name) => name.trim())))])
  .pipe(
    z
      .array(nodeSetName)
      .min(1, { error: 'name at least one node set' })
      .max(MAX_NODE_SET_NAMES, { error: `name at most ${MAX_NODE_SET_NAMES} node sets` }),
  );

/** Body of `POST actions`. `target_nodes`: a list, or one comma-separated string; or `node_sets` instead. */
export const ActionRequest = z
  .object({
    name: ActionName,
    parameters: z
      .object({
        target_nodes: z.union([z.array(z.string()), z.string()]).optional(),
        node_sets: NodeSetNames.optional().meta({
          description:
            "relabel's own, instead of target_nodes: the members of these node sets (relabel/NodeSet/v1), found in the cluster when the run is planned (a list, or comma-separated text); an unknown set is a 400 InvalidTargets naming it, nothing started",
        }),
        allow_mass_removal: BooleanParam.optional().meta({
          description:
            "go ahead even when the run removes more of the labels relabel owns on its targets than the policy's max_removal_fraction (default 0.5); without it such a run fails MassRemovalRefused, nothing written",
        }),
        ...RolloutParameters,
      })
      .strict(),
  })
  .strict();
/** Body of `POST actions`. */
export type ActionRequest = z.infer<typeof ActionRequest>;

/** Body of `POST plans`: the targets (exactly one of target_nodes, all, node_filter, node_sets), the revision and the per-node detail wanted. */
export const PlanRequest = z
  .object({
    target_nodes: z
      .union([z.array(z.string()), z.string()])
      .optional()
      .meta({ description: 'node names: a list, or one comma-separated string' }),
    all: z.literal(true).optional().meta({ description: "every node of the revision's design" }),
    node_filter: NodeFilterSet.optional().meta({ description: 'the nodes a Drydock node filter selects in the design' }),
    node_sets: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .meta({ description: 'the members of these node sets (relabel/NodeSet/v1), read from the cluster when the plan is made' }),
    revision: z.int().min(1).optional().meta({ description: 'the revision to plan; the latest committed one when absent' }),
    nodes_detail: z.boolean().optional().meta({ description: "add a page of per-node plans with each desired label's source" }),
    offset: z.int().min(0).optional().meta({ description: 'first node of the per-node detail (target order); default 0' }),
    limit: z.int().min(1).max(1000).optional().meta({ description: 'most nodes in the per-node detail; default 100' }),
  })
  .strict();
/** Body of `POST plans`. */
export type PlanRequest = z.infer<typeof PlanRequest>;

/** `{id}` of a plan (the id of its dry run, as an action's). */
export const PlanPath = z.object({ id: RunIdParam }).strict();
/** `{id}` of a plan. */
export type PlanPath = z.infer<typeof PlanPath>;

/**
 * Body of `POST tasks` (Drydock), as Drydock's client sends it. `design_ref`:
 * `deckhand+http://HOST/api/v1.0/revisions/{N}/rendered-documents`, `revision:N` or `committed`.
 */
export const TaskRequest = z
  .object({
    action: z.enum(['relabel_nodes'], {
      error: (i) => (i.input === undefined ? 'action is required' : `unknown task action ${quote(i.input)} (only "relabel_nodes")`),
    }),
    design_ref: z
      .string({ error: (i) => (i.input === undefined ? 'design_ref is required' : 'design_ref must be a string') })
      .min(1)
      .max(2048),
    node_filter: NodeFilterSet.nullish().meta({
      description:
        "which nodes the design names (BaremetalNodes, as Drydock's orchestrator filters them); null or absent (Drydock's client sends null when no filter is given): every node of the design, the members of its node sets included, the mass-removal brake guarding",
    }),
    node_sets: NodeSetNames.optional().meta({
      description:
        "relabel's own, with node_filter null or absent: only the members of these node sets (relabel/NodeSet/v1), found in the cluster when the run is planned; an unknown set is a 400 InvalidTargets naming it, nothing started",
    }),
    allow_mass_removal: z.boolean().optional().meta({
      description:
        "relabel's own: go ahead even when the run removes more of the labels relabel owns on its targets than the policy's max_removal_fraction (default 0.5)",
    }),
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
    for (const message of labelKeyErrors(key)) ctx.addIssue({ code: 'custom', path: [key], message: `label key ${quote(key)}: ${message}` });
    for (const message of labelValueErrors(value)) ctx.addIssue({ code: 'custom', path: [key], message: `label value ${quote(value)}: ${message}` });
    if (isKubeletLabelKey(key))
      ctx.addIssue({ code: 'custom', path: [key], message: `label ${quote(key)} is owned by the kubelet; relabel never writes or removes it` });
  }
});
/** Body of `PUT node-labels/{node}`. */
export type NodeLabelsBody = z.infer<typeof NodeLabelsBody>;
