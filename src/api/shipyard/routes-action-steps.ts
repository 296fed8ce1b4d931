/**
 * Shipyard's drill-down into an action: a step's detail and log, and a
 * validation's detail, as `shipyard describe step`, `shipyard logs step`
 * and `shipyard describe validation` ask for them.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { Runs } from '../../facade/runs/runs.ts';
import { StepDetailView, StepLogsQuery, StepPath, ValidationPath, ValidationView } from './action-schemas.ts';
import { LOG_NODE_LIMIT, stepDetail, stepFacts, stepLog, validations } from './action-views.ts';
import type { ApiDeps } from '../http/deps.ts';
import { StatusBody } from '../http/response-schemas.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { actionState } from '../runs/run-state.ts';
import { actionFacts } from '../runs/run-views.ts';
import { ApiError } from '../http/status.ts';

const error = { description: 'Airship Status error', schema: StatusBody };

/** An action's facts and its step `stepId`; NotFound naming the steps there are when it has none such. */
async function stepOf(runs: Runs, id: string, stepId: string) {
  // One node row is enough: the step views read counts and failed rows, not the page.
  const facts = actionFacts(await actionState(runs, id, { limit: '1' }));
  const steps = stepFacts(facts);
  const step = steps.find((s) => s.id === stepId);
  if (!step) {
    const last = steps.at(-1)?.wave;
    const more = last?.more !== undefined ? ` (and ${last.more} more waves, not listed)` : '';
    throw new ApiError(FailureType.NotFound, `action ${id} has no step ${stepId.slice(0, 128)}; its steps are ${steps.map((s) => s.id).join(', ')}${more}`);
  }
  return { facts, step };
}

/** The step and validation routes. */
export function actionStepRoutes({ relabel }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/actions/:id/steps/:step_id',
      operationId: 'getActionStep',
      summary:
        'A step of an action (validate_site_design, plan_labels, relabel_nodes; a run in waves: relabel_wave_1, … instead of relabel_nodes): its state, times, attempt and notes',
      tag: 'actions',
      access: 'read',
      params: StepPath,
      responses: { 200: { description: 'the step', schema: StepDetailView }, 404: error },
      async handle({ params }) {
        const { facts, step } = await stepOf(await relabel.runs(), params.id, params.step_id);
        return { code: 200, body: stepDetail(facts, step) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/actions/:id/steps/:step_id/logs',
      operationId: 'getActionStepLogs',
      summary: "A step's log: what the run did in that step, from its record in the store (relabel_nodes, or a wave's step: one line per node, the first 1000)",
      description: 'Plain text. `try` is accepted as Shipyard sends it; relabel keeps one log per step.',
      tag: 'actions',
      access: 'read',
      params: StepPath,
      query: StepLogsQuery,
      responses: { 200: { description: 'the log', text: 'text/plain' }, 404: error },
      async handle({ params }) {
        const runs = await relabel.runs();
        const { facts, step } = await stepOf(runs, params.id, params.step_id);
        // Node lines only for the steps that write nodes (relabel_nodes, or a wave's: its nodes only), once started.
        const writes = step.id === 'relabel_nodes' || step.wave !== undefined;
        const rows =
          writes && step.state !== null && facts.run !== null
            ? await runs.nodeRows(facts.run, { limit: LOG_NODE_LIMIT, ...(step.wave ? { wave: step.wave.index } : {}) })
            : [];
        const text = stepLog(facts, step, rows, step.wave?.nodes ?? facts.counts?.total ?? rows.length);
        return { code: 200, text: { type: 'text/plain; charset=utf-8', body: text } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/actions/:id/validations/:validation_id',
      operationId: 'getActionValidation',
      summary: 'A validation of an action: the site design check of its revision, passed or failed with the reason',
      tag: 'actions',
      access: 'read',
      params: ValidationPath,
      responses: { 200: { description: 'the validation', schema: ValidationView }, 404: error },
      async handle({ params }) {
        const facts = actionFacts(await actionState(await relabel.runs(), params.id, { limit: '1' }));
        const found = validations(facts).find((v) => v.id === params.validation_id);
        if (!found) throw new ApiError(FailureType.NotFound, `action ${params.id} has no validation ${params.validation_id.slice(0, 128)}`);
        return { code: 200, body: found };
      },
    }),
  ];
}
