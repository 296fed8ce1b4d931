/**
 * The Shipyard parts of an action: its steps, notes (one per failed node,
 * bounded), validations and command audit, each step's detail and log, and
 * the action's run as a workflow of Shipyard's Airflow monitoring. Pure
 * mappings from what the runs facade and the store report of a run.
 */
import type { RunStatusReport } from '../../facade/runs/runs.ts';
import type { RunStepTimes } from '../../facade/runs/run-actions.ts';
import type { ActionCommand } from '../../store/runs/action-store.ts';
import type { RunNodeCounts, RunNodeRow, RunRecord, RunWave } from '../../store/runs/run-store.ts';
import { ACTION_STEPS, actionSteps, dagStatus, executionDate, type StepFacts } from './action-steps.ts';
import { waveNoteText, type WaveStepsInput } from './wave-steps.ts';
import type { NoteView, StepDetailView, StepSummaryView, ValidationView, WorkflowDetailView, WorkflowView } from './action-schemas.ts';
import { NoteKind, noteId } from './note-ids.ts';

/** Most failed nodes an action's notes name; the rest are counted in one more note. */
export const NOTE_LIMIT = 50;
/** Most characters of a message in a note's value (the whole message is its detail). */
const NOTE_TEXT = 300;

/** What the Shipyard view of one action is built from. */
export interface ActionFacts {
  /** The action's id: its ULID, or the old id of a run recorded without one. */
  id: string;
  name: string;
  report: RunStatusReport;
  /** Shipyard's lifecycle of the run. */
  lifecycle: string;
  failure: { type: string; message: string } | null;
  /** The run number in the store, when known. */
  run: number | null;
  record: RunRecord | null;
  commands: readonly ActionCommand[];
  times: RunStepTimes;
  /** The first failed rows (at most {@link NOTE_LIMIT}) and how many failed in all. */
  failed: { rows: readonly RunNodeRow[]; total: number };
  counts?: RunNodeCounts | null;
  /** The run's status when no result is at hand (a listing's, from its search attribute). */
  status?: string;
  /** A run in waves: its first waves (at most MAX_WAVE_STEPS + 1) from the store, counted by status. */
  waves?: readonly RunWave[];
}

/** A note with the detail `GET notedetails/{id}` answers (null: none). */
export type NoteWithDetail = { view: NoteView; detail: string | null };

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** When the action's run started: its first execution's start, which a run that continued as new keeps. */
export function firstStart(f: ActionFacts): string {
  return f.times.started ?? f.report.startTime;
}

/** A run's waves as its steps need them: the store's, and where the run stands (none: no waves). */
function wavesInput(f: ActionFacts): WaveStepsInput | undefined {
  if (!f.waves || f.waves.length === 0) return undefined;
  const { progress, result } = f.report;
  const wave = progress?.wave;
  const count = result?.waves ?? wave?.count;
  return {
    waves: f.waves,
    ...(count !== undefined ? { count } : {}),
    ...(wave && !result ? { current: { index: wave.current.index, ...(wave.waiting ? { waiting: wave.waiting } : {}) } } : {}),
    ...(result?.aborted ? { aborted: true } : {}),
  };
}

/** The state of the run that decides its steps. */
export function stepFacts(f: ActionFacts): StepFacts[] {
  const { report } = f;
  const planned = f.counts ? f.counts.total > f.counts.queued : undefined;
  const waves = wavesInput(f);
  return actionSteps({
    execution: report.execution,
    ...(report.progress?.phase !== undefined ? { phase: report.progress.phase } : {}),
    ...((f.status ?? report.result?.status) !== undefined ? { status: f.status ?? report.result?.status } : {}),
    dryRun: f.status === 'dry_run' || (report.result?.dryRun ?? report.progress?.dryRun ?? f.record?.dryRun ?? false),
    failure: f.failure,
    ...(planned !== undefined ? { planned } : {}),
    times: f.times,
    startTime: report.startTime,
    ...(report.closeTime !== undefined ? { closeTime: report.closeTime } : {}),
    ...(waves ? { waves } : {}),
  });
}

function note(f: ActionFacts, kind: NoteKind, seq: number, value: string, detail: string | null, step?: string): NoteWithDetail | null {
  if (f.run === null) return null;
  const id = noteId({ kind, run: f.run, seq });
  return {
    view: {
      assoc_id: step ? `step/${f.id}/${step}` : `action/${f.id}`,
      subject: step ?? f.id,
      sub_type: step ? 'step' : 'action',
      note_val: value,
      verbosity: 1,
      note_id: id,
      note_timestamp: f.report.closeTime ?? f.report.startTime,
      resolved_url_value: detail === null ? null : `Details at notedetails/${id}`,
    },
    detail,
  };
}

const reasonOf = (row: RunNodeRow) => (row.detail?.error ? `${row.detail.error.type}: ${row.detail.error.message}` : 'failed');

/** The detail of a failed node's note: the node, its position, status, reason, whether it was written and in how many attempts. */
export function nodeNoteDetail(row: RunNodeRow): string {
  const reason = reasonOf(row);
  return [
    `node: ${row.node}`,
    `position: ${row.seq}`,
    `status: ${row.status}`,
    `error: ${reason}`,
    `written: ${row.written}`,
    ...(row.detail?.attempts !== undefined ? [`attempts: ${row.detail.attempts}`] : []),
  ].join('\n');
}

/** A failed node's note value and detail. */
function nodeNote(f: ActionFacts, row: RunNodeRow): NoteWithDetail | null {
  return note(f, NoteKind.node, row.seq, clip(`${row.node}: ${reasonOf(row)}`, NOTE_TEXT), nodeNoteDetail(row));
}

/**
 * The action's notes: its revision (as Shipyard notes the configdoc
 * revision), why it failed, then one note per failed node, the first
 * {@link NOTE_LIMIT}, and one counting the rest and saying where they are.
 */
export function actionNotes(f: ActionFacts): NoteWithDetail[] {
  const revision = f.report.result?.revision ?? f.report.progress?.revision ?? f.record?.revision ?? null;
  const notes = [
    revision !== null ? note(f, NoteKind.action, 0, `Configdoc revision ${revision}`, null) : null,
    f.failure ? note(f, NoteKind.action, 1, clip(`${f.failure.type}: ${f.failure.message}`, NOTE_TEXT), `${f.failure.type}: ${f.failure.message}`) : null,
    ...f.failed.rows.map((row) => nodeNote(f, row)),
  ];
  const hidden = f.failed.total - f.failed.rows.length;
  if (hidden > 0) {
    const where = `every node with its reason is in node_results of GET /api/v1.0/actions/${f.id} (paged with offset and limit) and in the log of step relabel_nodes`;
    notes.push(note(f, NoteKind.action, 2, `${hidden} more failed nodes are not listed here; ${where}`, null));
  }
  return notes.filter((n): n is NoteWithDetail => n !== null);
}

/** The notes of one step: why it failed, or that the run is paused. */
export function stepNotes(f: ActionFacts, step: StepFacts): NoteWithDetail[] {
  const n = (value: string, detail: string | null) => note(f, NoteKind.step, step.index, value, detail, step.id);
  let found: NoteWithDetail | null = null;
  if (step.wave) {
    const paused = f.report.progress?.paused === true && f.report.progress.wave?.current.index === step.wave.index;
    const failure = step.state === 'failed' && f.failure ? `; ${f.failure.type}: ${f.failure.message}` : '';
    found = n(clip(`${waveNoteText(step.wave, paused)}${failure}`, NOTE_TEXT), null);
  } else if (step.id === 'relabel_nodes' && f.report.progress?.paused === true) found = n('paused: no node starts until the action is unpaused', null);
  else if (step.state === 'failed' && f.failure)
    found = n(clip(`${f.failure.type}: ${f.failure.message}`, NOTE_TEXT), `${f.failure.type}: ${f.failure.message}`);
  else if (step.state === 'failed' && f.failed.total > 0) {
    const total = f.report.result?.counts.total ?? f.counts?.total;
    found = n(`${f.failed.total}${total !== undefined ? ` of ${total}` : ''} nodes failed; the action's notes name them and why`, null);
  }
  return found ? [found] : [];
}

/** The action's steps as its list of steps shows them. */
export function stepSummaries(f: ActionFacts, steps: readonly StepFacts[] = stepFacts(f)): StepSummaryView[] {
  return steps.map((s) => ({ id: s.id, url: `/actions/${f.id}/steps/${s.id}`, ...stepFields(f, s) }));
}

/** What every view of a step shows. */
function stepFields(f: ActionFacts, s: StepFacts) {
  return {
    task_id: s.id,
    index: s.index,
    state: s.state,
    start_date: s.start,
    end_date: s.end,
    duration: s.duration,
    try_number: s.tryNumber,
    operator: s.operator,
    notes: stepNotes(f, s).map((x) => x.view),
  };
}

/** One step as `GET actions/{id}/steps/{step_id}` answers it. */
export function stepDetail(f: ActionFacts, s: StepFacts): StepDetailView {
  return { dag_id: f.name, execution_date: executionDate(firstStart(f)), queued_dttm: s.queued, ...stepFields(f, s) };
}

/**
 * The action's validations: the site design check of its revision (passed,
 * failed with the reason, or not yet made). None without a run number.
 */
export function validations(f: ActionFacts, steps: readonly StepFacts[] = stepFacts(f)): ValidationView[] {
  if (f.run === null) return [];
  const revision = f.report.result?.revision ?? f.report.progress?.revision ?? f.record?.revision ?? null;
  const state = steps[0]?.state;
  const details =
    state === 'failed' && f.failure
      ? clip(`${f.failure.type}: ${f.failure.message}`, 4000)
      : state === 'failed'
        ? `failed: ${f.report.execution.toLowerCase()} before the check finished`
        : state === 'success'
          ? `revision ${revision ?? '?'} passed: committed, after a site action, its documents valid`
          : 'not checked yet';
  return [{ id: noteId({ kind: NoteKind.validation, run: f.run, seq: 0 }), action_id: f.id, validation_name: 'validate_site_design', details }];
}

/** The command audit, as Shipyard lists it. */
export function commandAudit(f: ActionFacts): { id: string; action_id: string; command: string; user: string | null; datetime: string }[] {
  return f.commands.map((c) => ({ id: c.id, action_id: f.id, command: c.command, user: c.user, datetime: c.at.toISOString() }));
}

/** What a listed run's workflow is made of. */
export type WorkflowFacts = { id: string; name: string; lifecycle: string; startTime: string; closeTime?: string; startedVia?: string };

/** A run as Shipyard lists Airflow DAG runs: `workflow_id` is `<dag id>__<execution date>`. */
export function workflowView(w: WorkflowFacts): WorkflowView {
  const date = executionDate(w.startTime);
  return {
    workflow_id: `${w.name}__${date}`,
    dag_id: w.name,
    execution_date: date,
    state: dagStatus(w.lifecycle),
    run_id: w.id,
    external_trigger: w.startedVia !== 'schedule',
    start_date: w.startTime,
    end_date: w.closeTime ?? null,
  };
}

/** A workflow with its steps, as `GET workflows/{id}` answers. */
export function workflowDetail(f: ActionFacts): WorkflowDetailView {
  const base = workflowView({
    id: f.id,
    name: f.name,
    lifecycle: f.lifecycle,
    startTime: firstStart(f),
    ...(f.report.closeTime ? { closeTime: f.report.closeTime } : {}),
    ...(f.report.startedVia ? { startedVia: f.report.startedVia } : {}),
  });
  const steps = stepFacts(f).map((s) => {
    const { index: _index, notes: _notes, ...step } = stepDetail(f, s);
    return step;
  });
  return { ...base, steps, sub_dags: [] };
}

/** Most node lines in one step log. */
export const LOG_NODE_LIMIT = 1000;

/**
 * A step's log: what the run did in that step, one line each, built from
 * the run's report and (for relabel_nodes) the first {@link LOG_NODE_LIMIT}
 * node rows given, then a line counting the rest. Bounded whatever the run's size.
 */
export function stepLog(f: ActionFacts, s: StepFacts, rows: readonly RunNodeRow[], total: number): string {
  const at = (t: string | null) => t ?? '-';
  const does = s.wave
    ? `apply wave ${s.wave.index + 1} of ${s.wave.count}, ${s.wave.name}: write each of its nodes, verify it, and record its outcome`
    : ACTION_STEPS[s.index - 1]?.does;
  const lines = [`[${at(s.start)}] ${s.id} (${does ?? s.operator}): ${s.state ?? 'not reached'}`];
  const revision = f.report.result?.revision ?? f.report.progress?.revision ?? f.record?.revision;
  if (s.id === 'validate_site_design') {
    if (revision !== undefined && revision !== null) lines.push(`revision ${revision}`);
  } else if (s.id === 'plan_labels') {
    const c = f.counts;
    if (c) lines.push(`targets ${c.total}: ${c.total - c.queued} planned`);
    const removal = f.report.result?.removal;
    if (removal)
      lines.push(`owned labels removed: ${removal.removed} of ${removal.owned} on ${removal.nodes} nodes (max_removal_fraction ${removal.maxFraction})`);
  } else {
    if (s.wave) lines.push(waveNoteText(s.wave, false));
    for (const row of rows) {
      const d = row.detail;
      const setKeys = Object.keys(d?.set ?? {});
      const parts = [
        `${row.node}: ${row.status}`,
        row.written ? 'written' : 'not written',
        ...(setKeys.length > 0 ? [`set ${setKeys.join(',')}`] : []),
        ...(d?.removed?.length ? [`removed ${d.removed.join(',')}`] : []),
        ...(row.status === 'success' && setKeys.length === 0 && !d?.removed?.length ? ['no change'] : []),
        ...(d?.error ? [`${d.error.type}: ${d.error.message}`] : []),
      ];
      lines.push(parts.join('; '));
    }
    if (total > rows.length && s.wave)
      lines.push(`… ${total - rows.length} more nodes of this wave: node_results of GET /api/v1.0/actions/${f.id} pages every node of the run`);
    else if (total > rows.length)
      lines.push(`… ${total - rows.length} more nodes: GET /api/v1.0/actions/${f.id}?offset=${rows.length}&limit=${LOG_NODE_LIMIT} pages them`);
  }
  if (s.state === 'failed' && f.failure) lines.push(`${f.failure.type}: ${f.failure.message}`);
  lines.push(`[${at(s.end)}] ${s.id}: ${s.state ?? 'not reached'}`);
  return `${lines.join('\n')}\n`;
}
