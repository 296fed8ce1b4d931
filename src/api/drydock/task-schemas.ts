/**
 * zod schemas of the Drydock task answers (`GET`/`POST tasks`), shaped as
 * Drydock's `Task.to_dict`; the OpenAPI document describes them and the
 * tests parse answers with them. Each type shares its schema's name.
 */
import { z } from 'zod';
import { NodeFilterSet } from '../../core/site/node-filter.ts';
import { NodePageView } from '../http/response-schemas.ts';

/** One message of a Drydock task result: what happened to which node, when. */
export const TaskMessageView = z
  .object({
    message: z.string(),
    error: z.boolean(),
    context_type: z.string().meta({ description: 'what `context` names: `node`, or `task` for the task as a whole' }),
    context: z.string(),
    ts: z.string(),
    extra: z.record(z.string(), z.unknown()),
  })
  .strict();

/** Drydock's task result (a Status): the roll-up and the nodes it names. */
export const TaskResultView = z
  .object({
    kind: z.literal('Status'),
    apiVersion: z.literal('v1.0'),
    metadata: z.object({}).strict(),
    message: z.string().nullable(),
    reason: z.string().nullable(),
    status: z.enum(['success', 'partial_success', 'failure', 'incomplete']).meta({ description: 'incomplete until the task ends' }),
    successes: z.array(z.string()).meta({ description: 'nodes that succeeded (of this page of subtasks)' }),
    failures: z.array(z.string()).meta({ description: 'nodes that failed (of this page of subtasks)' }),
    links: z.array(z.object({ rel: z.string(), href: z.string() }).strict()),
    details: z.object({ errorCount: z.int(), messageList: z.array(TaskMessageView) }).strict(),
  })
  .strict();
/** Drydock's task result. */
export type TaskResultView = z.infer<typeof TaskResultView>;

/** Drydock's task status (lower case, as Drydock's fields). */
export const TaskStatus = z.enum(['requested', 'queued', 'running', 'terminating', 'terminated', 'complete']);
/** Drydock's task status. */
export type TaskStatus = z.infer<typeof TaskStatus>;

/** A Drydock task, as Drydock's `Task.to_dict`: the run, or one node of it (a subtask, `parent_task_id` set). */
export const TaskView = z
  .object({
    kind: z.literal('Task'),
    apiVersion: z.literal('v1'),
    task_id: z.string().meta({ description: "the run's id; a subtask's is the run's id, a dot and the node's position in the run (stable)" }),
    action: z.literal('relabel_nodes'),
    parent_task_id: z.string().nullable(),
    design_ref: z.string().nullable(),
    status: TaskStatus,
    result: TaskResultView,
    node_filter: NodeFilterSet.nullable(),
    node_sets: z
      .array(z.string())
      .optional()
      .meta({ description: "relabel's: the node sets whose members the task targets, when it was created with node_sets" }),
    subtask_id_list: z.array(z.string()).meta({ description: "the per-node subtasks' ids (this page of them; subtasks_page says which)" }),
    created: z.string(),
    created_by: z.string().nullable(),
    updated: z.string().nullable(),
    terminated: z.string().nullable(),
    terminated_by: z.string().nullable(),
    terminate: z.boolean(),
    retry: z.int(),
    revision: z.int().nullable().meta({ description: "relabel's: the revision the run applies" }),
    ui_link: z.string().nullable().meta({ description: "relabel's: the run in the Temporal UI" }),
    subtasks_page: NodePageView.optional().meta({ description: "relabel's: which of the run's nodes subtask_id_list, successes and failures cover" }),
    subtask_errors: z
      .record(z.string(), TaskResultView.extend({ task_id: z.string() }).strict())
      .optional()
      .meta({ description: 'with subtaskerrors=true: the failed subtasks of the page, by id' }),
    build_data: z.array(z.never()).optional().meta({ description: 'with builddata=true: always empty (relabel keeps no build data)' }),
  })
  .strict();
/** A Drydock task. */
export type TaskView = z.infer<typeof TaskView>;

/** Answer of `GET tasks/{id}?layers=N`: Drydock's map of tasks by id, with `init_task_id` (and `subtask_errors` on request). */
export const TaskLayersView = z
  .record(z.string(), z.unknown())
  .meta({ description: 'init_task_id: the task asked for; every other key a task id with its task; subtask_errors with subtaskerrors=true' });

/** Answer of `GET tasks`: tasks newest first, each followed by its subtasks (bounded). */
export const TaskList = z.array(TaskView);
