/**
 * Schemas of the Shipyard parts of actions (steps, notes, validations,
 * command audit) and of Shipyard's Airflow monitoring (`workflows`): the
 * requests of the routes that answer them and the answers' shapes, as the
 * Shipyard client reads them.
 */
import { z } from 'zod';
import { ACTION_STEPS } from './action-steps.ts';
import { WAVE_STEP_ID } from './wave-steps.ts';
import { RunIdParam, Verbosity } from '../http/schemas.ts';

const common = { verbosity: Verbosity.optional() };

/** `{id}` and `{step_id}` of an action's step. */
export const StepPath = z.object({ id: RunIdParam, step_id: z.string().max(128) }).strict();
/** `{id}` and `{step_id}` of an action's step. */
export type StepPath = z.infer<typeof StepPath>;

/** Query of a step's logs: Shipyard's `try` (which attempt; relabel keeps one log per step, any attempt answers it). */
export const StepLogsQuery = z
  .object({
    ...common,
    try: z
      .string()
      .regex(/^[1-9][0-9]{0,3}$/, { error: 'try is a whole number from 1' })
      .optional(),
  })
  .strict();

/** `{id}` and `{validation_id}` of an action's validation. */
export const ValidationPath = z.object({ id: RunIdParam, validation_id: z.string().max(128) }).strict();

/** `{note_id}` of a note. */
export const NotePath = z.object({ note_id: z.string().max(128) }).strict();

/** `{workflow_id}`: `<dag id>__<execution date>`. */
export const WorkflowPath = z.object({ workflow_id: z.string().max(256) }).strict();

/** Query of `GET workflows`: `since`, an ISO 8601 time (default: 30 days ago). */
export const WorkflowsQuery = z
  .object({
    ...common,
    since: z
      .string()
      .max(64)
      .refine((v) => !Number.isNaN(Date.parse(v)), { error: 'since must be an ISO 8601 date or time, e.g. 2026-01-02T03:04:05Z' })
      .optional(),
  })
  .strict();

/** An Airflow task state as Shipyard passes it on; null: not reached. up_for_reschedule: a wave whose gate waits (Shipyard counts it as running). */
export const StepState = z.enum(['queued', 'running', 'success', 'failed', 'upstream_failed', 'skipped', 'up_for_reschedule']).nullable();

/** A note, as Shipyard's notes are viewed. */
export const NoteView = z
  .object({
    assoc_id: z.string().meta({ description: 'action/<action id>, or step/<action id>/<step id>' }),
    subject: z.string(),
    sub_type: z.enum(['action', 'step']),
    note_val: z.string(),
    verbosity: z.int(),
    note_id: z.string().meta({ description: '26 letters and digits; GET notedetails/{note_id} answers the detail when resolved_url_value is set' }),
    note_timestamp: z.string(),
    resolved_url_value: z.string().nullable(),
  })
  .strict();
/** A note. */
export type NoteView = z.infer<typeof NoteView>;

/** What every view of a step has: its task, position, state, times, attempt, operator and notes. */
const stepFields = {
  task_id: z.string(),
  index: z.int(),
  state: StepState,
  start_date: z.string().nullable(),
  end_date: z.string().nullable(),
  duration: z.number().nullable(),
  try_number: z.int().nullable(),
  operator: z.string(),
  notes: z.array(NoteView),
};

/** A step in an action's list of steps. */
export const StepSummaryView = z
  .object({
    id: z
      .union([z.enum(ACTION_STEPS.map((s) => s.id)), z.string().regex(WAVE_STEP_ID)])
      .meta({ description: 'validate_site_design, plan_labels, relabel_nodes; a run in waves has relabel_wave_1, relabel_wave_2, … instead of relabel_nodes' }),
    url: z.string(),
    ...stepFields,
  })
  .strict();
/** A step in an action's list. */
export type StepSummaryView = z.infer<typeof StepSummaryView>;

/** A step as `GET actions/{id}/steps/{step_id}` answers it (an Airflow task instance). */
export const StepDetailView = z.object({ dag_id: z.string(), execution_date: z.string(), queued_dttm: z.string().nullable(), ...stepFields }).strict();
/** A step's detail. */
export type StepDetailView = z.infer<typeof StepDetailView>;

/** A validation of an action. */
export const ValidationView = z.object({ id: z.string(), action_id: z.string(), validation_name: z.string(), details: z.string() }).strict();
/** A validation. */
export type ValidationView = z.infer<typeof ValidationView>;

/** A command issued against an action. */
export const CommandView = z.object({ id: z.string(), action_id: z.string(), command: z.string(), user: z.string().nullable(), datetime: z.string() }).strict();

/** A workflow: an action's run as Shipyard lists Airflow DAG runs. */
export const WorkflowView = z
  .object({
    workflow_id: z.string().meta({ description: '<dag id>__<execution date>, for GET workflows/{workflow_id}' }),
    dag_id: z.string(),
    execution_date: z.string(),
    state: z.enum(['queued', 'running', 'success', 'failed', 'paused']),
    run_id: z.string().meta({ description: "the action's id" }),
    external_trigger: z.boolean().meta({ description: 'false for runs a schedule started' }),
    start_date: z.string(),
    end_date: z.string().nullable(),
  })
  .strict();
/** A workflow. */
export type WorkflowView = z.infer<typeof WorkflowView>;

/** A workflow's step (an Airflow task instance). */
export const WorkflowStepView = StepDetailView.omit({ index: true, notes: true }).strict();

/** A workflow with its steps (relabel's runs have no sub-DAGs). */
export const WorkflowDetailView = WorkflowView.extend({ steps: z.array(WorkflowStepView), sub_dags: z.array(WorkflowView) }).strict();
/** A workflow with its steps. */
export type WorkflowDetailView = z.infer<typeof WorkflowDetailView>;

/** Answer of `GET workflows`. */
export const WorkflowList = z.array(WorkflowView);
