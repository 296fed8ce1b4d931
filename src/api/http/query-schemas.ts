/**
 * zod schemas of the HTTP API's query strings, validated at the edge with
 * `.strict()`: a parameter no client sends is refused (400, named), so a
 * typo never silently changes an answer. Every parameter Shipyard's,
 * Drydock's and Promenade's own clients send is accepted, and honoured where
 * it means something; those the real services accept and relabel has no use
 * for (Shipyard's `verbosity`, Drydock's `builddata`) are accepted and
 * ignored. Re-exported by `schemas.ts`; each type shares its schema's name.
 */
import { z } from 'zod';

/** A boolean query flag, spelled as Shipyard and Drydock (Falcon) read one: true, t, yes, y, 1, on / false, f, no, n, 0, off, in any case. */
const QueryFlag = z.stringbool({ truthy: ['true', 't', 'yes', 'y', '1', 'on'], falsy: ['false', 'f', 'no', 'n', '0', 'off'], case: 'insensitive' });

/**
 * Shipyard's `verbosity` (0 to 5, anything else a 400 as Shipyard's), which
 * its client adds to every request: accepted on every route; relabel's
 * answers do not depend on it.
 */
export const Verbosity = z
  .string()
  .regex(/^[0-5]$/, { error: 'verbosity is 0 to 5' })
  .meta({ description: "Shipyard's verbosity (0 to 5): accepted on every route, no effect" });

/** The parameters every route accepts. */
const common = { verbosity: Verbosity.optional() };

/** No query parameters but Shipyard's `verbosity`: the query of every route that declares none. */
export const NoQuery = z.object(common).strict();

/** Which documents: staged, committed, or those of the latest revision that took part in a site action (Shipyard's names). */
export const ConfigdocsVersion = z.enum(['buffer', 'committed', 'last_site_action', 'successful_site_action'], {
  error: 'version must be buffer, committed, last_site_action or successful_site_action',
});
/** Which documents. */
export type ConfigdocsVersion = z.infer<typeof ConfigdocsVersion>;

const cleartextSecrets = QueryFlag.optional().meta({
  description:
    "Shipyard's cleartext-secrets: accepted (its client sends it for --cleartext-secrets); relabel's documents hold no secrets, so the answer is the same",
});

/** Query of `GET configdocs/{bucket}` (default `buffer`, as Shipyard). */
export const ConfigdocsQuery = z.object({ ...common, version: ConfigdocsVersion.optional(), 'cleartext-secrets': cleartextSecrets }).strict();
/** Query of `GET configdocs/{bucket}`. */
export type ConfigdocsQuery = z.infer<typeof ConfigdocsQuery>;

/** Query of `GET renderedconfigdocs` (default `buffer`, as Shipyard: the committed site with the staged buckets laid over it). */
export const RenderedQuery = z.object({ ...common, version: ConfigdocsVersion.optional(), 'cleartext-secrets': cleartextSecrets }).strict();
/** Query of `GET renderedconfigdocs`. */
export type RenderedQuery = z.infer<typeof RenderedQuery>;

/** Most entries of a repeated or comma-separated query list. */
const MAX_QUERY_LIST = 10;

/**
 * Query of `GET configdocs` (collection status): `versions`, the two
 * versions compared, repeated (`versions=committed&versions=buffer`, as
 * Shipyard's client sends a list) or comma-separated; default committed
 * against buffer.
 */
export const ConfigdocsStatusQuery = z
  .object({
    ...common,
    versions: z
      .union([z.string().max(200), z.array(z.string().max(200)).max(MAX_QUERY_LIST)])
      .transform((v) => (typeof v === 'string' ? [v] : v).flatMap((item) => item.split(',')).map((item) => item.trim()))
      .pipe(z.array(ConfigdocsVersion).length(2, { error: 'versions names exactly two versions to compare' }))
      .refine(([a, b]) => a !== b, { error: 'versions must be two different versions' })
      .optional(),
  })
  .strict();
/** Query of `GET configdocs`. */
export type ConfigdocsStatusQuery = z.infer<typeof ConfigdocsStatusQuery>;

/** Shipyard's buffer modes, in any case as Shipyard reads them (its client documents `rejectOnContents`). */
export const BufferMode = z
  .string()
  .toLowerCase()
  .pipe(z.enum(['rejectoncontents', 'append', 'replace'], { error: 'buffermode must be rejectoncontents, append or replace' }));
/** A buffer mode. */
export type BufferMode = z.infer<typeof BufferMode>;

/** Query of `POST configdocs/{bucket}`: Shipyard's `buffermode` and `empty-collection`. */
export const StageQuery = z
  .object({
    ...common,
    buffermode: BufferMode.optional().meta({
      description:
        'rejectoncontents: refused (409) when the buffer holds any change; append: refused (409) when this bucket is already changed in the buffer; ' +
        "replace: the buffer is emptied first. Absent: relabel's own mode, this bucket's staged content replaced and the others kept (Shipyard's client always sends one)",
    }),
    'empty-collection': QueryFlag.optional().meta({
      description: 'true: stage the removal of the bucket (no body needed); the documents sent, if any, are ignored',
    }),
  })
  .strict();
/** Query of `POST configdocs/{bucket}`. */
export type StageQuery = z.infer<typeof StageQuery>;

/** Query of `POST commitconfigdocs`: Shipyard's `force` and `dryrun`. */
export const CommitQuery = z
  .object({
    ...common,
    force: QueryFlag.optional().meta({
      description:
        'commit even when the site is invalid; its errors come back as Warning messages (Shipyard: FORCED SUCCESS). Default false. Booleans: true or false (also t, yes, y, 1, on / f, no, n, 0, off, any case).',
    }),
    dryrun: QueryFlag.optional().meta({
      description:
        'validate the site as a commit would and commit nothing; answers 200 whether it is valid or not (Shipyard: DRYRUN), and takes precedence over force. Default false; spelled as force.',
    }),
  })
  .strict();
/** Query of `POST commitconfigdocs`. */
export type CommitQuery = z.infer<typeof CommitQuery>;

/** Query of `POST actions`: Shipyard's `allow-intermediate-commits`, which its client always sends. */
export const ActionCreateQuery = z
  .object({
    ...common,
    'allow-intermediate-commits': QueryFlag.optional().meta({
      description:
        "Shipyard's allow-intermediate-commits: accepted and not checked, as Shipyard checks intermediate commits only for its site actions (deploy_site, update_site, update_software), never for the targeted relabel_nodes",
    }),
  })
  .strict();
/** Query of `POST actions`. */
export type ActionCreateQuery = z.infer<typeof ActionCreateQuery>;

/** Query of `GET actions`: how many of the most recent. */
export const ActionListQuery = z
  .object({
    ...common,
    limit: z
      .string()
      .regex(/^([1-9][0-9]?|100)$/, { error: 'limit is 1 to 100' })
      .optional(),
  })
  .strict();
/** Query of `GET actions`. */
export type ActionListQuery = z.infer<typeof ActionListQuery>;

/** Paging of a run's per-node results: `offset` (from 0) and `limit` (1 to 5000, default 1000). */
export const NodePageQuery = z
  .object({
    ...common,
    offset: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,8})$/, { error: 'offset is a whole number from 0' })
      .optional(),
    limit: z
      .string()
      .regex(/^([1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$/, { error: 'limit is 1 to 5000' })
      .optional(),
  })
  .strict();
/** Paging of a run's per-node results. */
export type NodePageQuery = z.infer<typeof NodePageQuery>;

/** An offset into a list: a whole number from 0. */
const Offset = z.string().regex(/^(0|[1-9][0-9]{0,8})$/, { error: 'offset is a whole number from 0' });

/**
 * Query of `GET tasks/{id}` (Drydock): `subtaskerrors=true` adds
 * `subtask_errors`, the failed subtasks' results by subtask id; `layers=N`
 * answers Drydock's map of tasks by id down N layers (-1: all; a relabel task
 * has two: the task, then one subtask per node); `builddata` is accepted
 * (relabel keeps none: `build_data` is empty). Subtasks and their errors are
 * paged by `offset` and `limit` (1 to 5000, default 1000), in target order.
 */
export const TaskQuery = z
  .object({
    ...common,
    subtaskerrors: QueryFlag.optional().meta({ description: "add subtask_errors: each failed subtask's result by subtask id (this page of subtasks)" }),
    layers: z
      .string()
      .regex(/^(-1|[0-9]{1,4})$/, { error: 'layers is -1 (all) or a whole number' })
      .optional()
      .meta({
        description: "Drydock's layers: answer a map of tasks by id, this task and N-1 layers of subtasks (-1 or 2 and more: every subtask of this page)",
      }),
    builddata: QueryFlag.optional().meta({ description: "Drydock's builddata: accepted; relabel keeps no build data, build_data is an empty list" }),
    offset: Offset.optional(),
    limit: z
      .string()
      .regex(/^([1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$/, { error: 'limit is 1 to 5000' })
      .optional(),
  })
  .strict();
/** Query of `GET tasks/{id}`. */
export type TaskQuery = z.infer<typeof TaskQuery>;

/**
 * Query of `GET tasks` (Drydock's list, newest first): `limit` tasks (1 to
 * 100, default 20) after skipping `offset`, each followed by its per-node
 * subtasks while the answer holds at most `max_subtasks` of them (0 to
 * 5000, default 1000).
 */
export const TaskListQuery = z
  .object({
    ...common,
    offset: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,2})$/, { error: 'offset is 0 to 999' })
      .optional(),
    limit: z
      .string()
      .regex(/^([1-9][0-9]?|100)$/, { error: 'limit is 1 to 100' })
      .optional(),
    max_subtasks: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,2}|[1-4][0-9]{3}|5000)$/, { error: 'max_subtasks is 0 to 5000' })
      .optional(),
  })
  .strict();
/** Query of `GET tasks`. */
export type TaskListQuery = z.infer<typeof TaskListQuery>;

/** Query of `GET plans/{id}`: the per-node detail wanted. */
export const PlanQuery = z
  .object({
    ...common,
    nodes_detail: QueryFlag.optional().meta({ description: "add a page of per-node plans with each desired label's source; default false" }),
    offset: z
      .string()
      .regex(/^(0|[1-9][0-9]{0,8})$/, { error: 'offset is a whole number from 0' })
      .optional(),
    limit: z
      .string()
      .regex(/^([1-9][0-9]{0,2}|1000)$/, { error: 'limit is 1 to 1000' })
      .optional(),
  })
  .strict();
/** Query of `GET plans/{id}`. */
export type PlanQuery = z.infer<typeof PlanQuery>;
