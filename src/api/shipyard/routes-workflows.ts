/**
 * Shipyard's Airflow monitoring over relabel's runs: `GET workflows` lists
 * the runs as DAG runs (`<dag id>__<execution date>`), `GET
 * workflows/{workflow_id}` shows one with its steps.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { RunListing } from '../../facade/runs/runs.ts';
import { WorkflowDetailView, WorkflowList, WorkflowPath, WorkflowsQuery } from './action-schemas.ts';
import { workflowDetail, workflowView } from './action-views.ts';
import type { ApiDeps } from '../http/deps.ts';
import { StatusBody } from '../http/response-schemas.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { encodeRunId } from '../runs/run-ids.ts';
import { actionState } from '../runs/run-state.ts';
import { actionFacts, actionLifecycle } from '../runs/run-views.ts';
import { ActionName } from '../http/schemas.ts';
import { ApiError } from '../http/status.ts';

const error = { description: 'Airship Status error', schema: StatusBody };

/** Most workflows one `GET workflows` lists (the most recent). */
export const MAX_WORKFLOWS = 1000;
/** How far back `GET workflows` looks without `since`, as Shipyard: 30 days. */
const DEFAULT_SINCE_MS = 30 * 24 * 3600_000;

const EXECUTION_DATE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3})(\d{3})$/;

const nameOf = (action: string | undefined) => (ActionName.safeParse(action).success ? (action as ActionName) : 'update_labels');

/**
 * The executions of Temporal's listing as one workflow per run: a run that
 * continued as new is listed once, started when its first execution started,
 * in the state of its last.
 */
function byRun(listing: readonly RunListing[]): { first: RunListing; last: RunListing }[] {
  const runs = new Map<string, { first: RunListing; last: RunListing }>();
  for (const l of listing) {
    const key = l.actionId ?? (l.run !== undefined ? `run:${l.run}` : `${l.workflowId}|${l.runId}`);
    const seen = runs.get(key);
    if (!seen) runs.set(key, { first: l, last: l });
    else {
      if (l.startTime < seen.first.startTime) seen.first = l;
      if (seen.last.execution === 'CONTINUED_AS_NEW') seen.last = l;
    }
  }
  return [...runs.values()];
}

/** The workflow routes. */
export function workflowRoutes({ relabel }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/workflows',
      operationId: 'listWorkflows',
      summary: `The runs started since \`since\` (default: 30 days ago) as Shipyard lists Airflow DAG runs; the most recent ${MAX_WORKFLOWS}`,
      tag: 'workflows',
      access: 'read',
      query: WorkflowsQuery,
      responses: { 200: { description: 'the workflows', schema: WorkflowList }, 400: error },
      async handle({ query }) {
        const since = query.since !== undefined ? new Date(query.since) : new Date(Date.now() - DEFAULT_SINCE_MS);
        const listing = await (await relabel.runs()).list(MAX_WORKFLOWS, { startedFrom: since });
        const body = byRun(listing).map(({ first, last }) =>
          workflowView({
            id: last.actionId ?? encodeRunId(first),
            name: nameOf(last.action),
            lifecycle: actionLifecycle(last.execution, true, last.outcome),
            startTime: first.startTime,
            ...(last.closeTime ? { closeTime: last.closeTime } : {}),
            ...(last.startedVia ? { startedVia: last.startedVia } : {}),
          }),
        );
        return { code: 200, body };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/workflows/:workflow_id',
      operationId: 'getWorkflow',
      summary: 'One run as an Airflow DAG run, with its steps (relabel runs have no sub-DAGs)',
      description: 'workflow_id is `<dag id>__<execution date>` as GET workflows lists it, e.g. relabel_nodes__2026-01-02T03:04:05.678000.',
      tag: 'workflows',
      access: 'read',
      params: WorkflowPath,
      responses: { 200: { description: 'the workflow', schema: WorkflowDetailView }, 400: error, 404: error },
      async handle({ params }) {
        const id = params.workflow_id;
        const cut = id.lastIndexOf('__');
        const dag = id.slice(0, Math.max(0, cut));
        const date = EXECUTION_DATE.exec(id.slice(cut + 2));
        if (cut < 0 || !date) {
          throw new ApiError(
            FailureType.InvalidRequest,
            `invalid workflow id ${JSON.stringify(id.slice(0, 128))}: workflow ids are {dag id}__{execution date}, e.g. relabel_nodes__2026-01-02T03:04:05.678000`,
          );
        }
        const notFound = () => new ApiError(FailureType.NotFound, `no workflow ${id.slice(0, 256)}`);
        const at = Date.parse(`${date[1]}Z`);
        // relabel's start times have milliseconds: only ids whose last three digits are 0 name a run.
        if (!ActionName.safeParse(dag).success || date[2] !== '000' || Number.isNaN(at)) throw notFound();
        const runs = await relabel.runs();
        const listing = await runs.list(10, { startedFrom: new Date(at), startedBefore: new Date(at + 1) });
        const found = listing.find((l) => nameOf(l.action) === dag);
        if (!found) throw notFound();
        const state = await actionState(runs, found.actionId ?? encodeRunId(found), { limit: '1' });
        return { code: 200, body: workflowDetail(actionFacts(state)) };
      },
    }),
  ];
}
