/**
 * Shipyard's `GET notedetails/{note_id}`: the detail of a note an action or
 * step shows (a failed node's, or why the run failed), as plain text.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import { NotePath } from './action-schemas.ts';
import { actionNotes, nodeNoteDetail, stepFacts, stepNotes } from './action-views.ts';
import type { ApiDeps } from '../http/deps.ts';
import { NoteKind, parseNoteId } from './note-ids.ts';
import { StatusBody } from '../http/response-schemas.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { encodeRunId } from '../runs/run-ids.ts';
import { actionState } from '../runs/run-state.ts';
import { actionFacts } from '../runs/run-views.ts';
import { ApiError } from '../http/status.ts';

const error = { description: 'Airship Status error', schema: StatusBody };

/** The note details route. */
export function noteRoutes({ relabel }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/notedetails/:note_id',
      operationId: 'getNoteDetails',
      summary:
        "A note's detail, as plain text: a failed node's position, reason, whether it was written and in how many attempts; or the whole reason a run failed",
      description: 'A note id is 26 letters and digits (anything else is a 400, as Shipyard); a note without details, or no such note, is a 404.',
      tag: 'actions',
      access: 'read',
      params: NotePath,
      responses: { 200: { description: 'the detail', text: 'text/plain' }, 400: error, 404: error },
      async handle({ params }) {
        const id = params.note_id;
        if (!/^[A-Za-z0-9]{26}$/.test(id))
          throw new ApiError(FailureType.InvalidRequest, `invalid note_id ${JSON.stringify(id.slice(0, 64))}: note ids are 26 letters and digits`);
        const ref = parseNoteId(id);
        const none = () => new ApiError(FailureType.NotFound, `note ${id} is not found or has no further details`);
        if (!ref || ref.kind === NoteKind.validation) throw none();
        const runs = await relabel.runs();
        let detail: string | null = null;
        if (ref.kind === NoteKind.node) {
          const row = await runs.nodeAt(ref.run, ref.seq);
          if (row?.status === 'failure') detail = nodeNoteDetail(row);
        } else {
          const record = await runs.record(ref.run);
          // A run recorded before action ids were kept has no way back from its number to its execution.
          const action =
            record?.actionId ??
            (record?.workflowId && record.executionRunId ? encodeRunId({ workflowId: record.workflowId, runId: record.executionRunId }) : null);
          if (action) {
            const facts = actionFacts(await actionState(runs, action, { limit: '1' }));
            const notes = ref.kind === NoteKind.action ? actionNotes(facts) : stepFacts(facts).flatMap((s) => stepNotes(facts, s));
            detail = notes.find((n) => n.view.note_id === id)?.detail ?? null;
          }
        }
        if (detail === null) throw none();
        return { code: 200, text: { type: 'text/plain; charset=utf-8', body: detail } };
      },
    }),
  ];
}
