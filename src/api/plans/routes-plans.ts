/**
 * Fleet-wide plans: `POST plans` computes what an update run of a revision
 * over a set of targets would do (a dry run, summed per label key, with
 * each key's sources, the mass-removal brake's verdict and the workload
 * impact) and answers it;
 * `GET plans/{id}` reads a plan again, with another page of per-node plans.
 */
import { describeRemoval, type RemovalAssessment } from '../../core/plan/removal-brake.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import { createPlans, type FleetPlan } from '../../facade/plan.ts';
import type { TargetSelection } from '../../facade/runs/runs.ts';
import type { ApiDeps } from '../http/deps.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { encodeRunId } from '../runs/run-ids.ts';
import { runKeyOf } from '../runs/run-state.ts';
import { nodeResult } from '../runs/run-views.ts';
import { PlanPath, PlanQuery, PlanRequest } from '../http/schemas.ts';
import { PlanView, StatusBody, type MassRemovalView } from '../http/response-schemas.ts';
import { impactView } from './impact-schema.ts';
import { ApiError, statusBody } from '../http/status.ts';
import type { z } from 'zod';

/** How long `POST plans` waits for its dry run before answering 202 with where to read it later. */
export const PLAN_WAIT_MS = 30_000;

/** Path of a plan. */
export const planUrl = (id: string) => `/api/v1.0/plans/${id}`;

function massRemoval(r: RemovalAssessment | null): z.infer<typeof MassRemovalView> | null {
  if (r === null) return null;
  return {
    owned: r.owned,
    removed: r.removed,
    nodes: r.nodes,
    keys: r.keys,
    more_keys: r.moreKeys,
    max_fraction: r.maxFraction,
    exceeded: r.exceeded,
    message: describeRemoval(r),
  };
}

/** A plan as the API answers it. */
export function planView(p: FleetPlan): PlanView {
  const id = encodeRunId({ workflowId: p.workflowId, runId: p.runId });
  return {
    id,
    workflow_id: p.workflowId,
    run_id: p.runId,
    run: p.run,
    revision: p.revision,
    site: p.site,
    ui_link: p.uiLink ?? null,
    targets: p.targets,
    statuses: p.statuses,
    changing: p.changing,
    failure_types: p.failureTypes,
    node_sets: p.nodeSets,
    labels: Object.fromEntries(
      Object.entries(p.labels).map(([key, e]) => [
        key,
        { desired: e.desired, gain: e.gain, change: e.change, lose: e.lose, adopt: e.adopt, sources: e.sources, more_sources: e.moreSources },
      ]),
    ),
    more_label_keys: p.moreLabelKeys,
    warnings: p.warnings,
    mass_removal: massRemoval(p.removal),
    workload_impact: impactView(p.impact),
    ...(p.nodes
      ? {
          nodes: {
            total: p.nodes.total,
            offset: p.nodes.offset,
            items: p.nodes.items.map((n) => ({ ...nodeResult(n), ...(n.was ? { was: n.was } : {}), ...(n.labels ? { labels: n.labels } : {}) })),
          },
        }
      : {}),
  };
}

/** The targets of a plan request: exactly one of target_nodes, all, node_filter, node_sets. */
function targetsOf(body: PlanRequest): { targets: unknown } | { select: TargetSelection } {
  const given = [body.target_nodes !== undefined, body.all === true, body.node_filter !== undefined, body.node_sets !== undefined].filter(Boolean).length;
  if (given !== 1)
    throw new ApiError(
      FailureType.InvalidTargets,
      `name the targets with exactly one of target_nodes, all, node_filter, node_sets${given > 1 ? ' (several were given)' : ''}`,
    );
  if (body.target_nodes !== undefined) return { targets: body.target_nodes };
  if (body.all) return { select: { all: true } };
  if (body.node_sets) return { select: { nodeSets: body.node_sets } };
  return { select: { filter: body.node_filter as NonNullable<PlanRequest['node_filter']> } };
}

const error = { description: 'Airship Status error', schema: StatusBody };

/** The plan routes. */
export function planRoutes({ relabel, planWaitMs = PLAN_WAIT_MS }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/plans',
      operationId: 'createPlan',
      summary:
        'Plans an update run fleet-wide without writing: per label key the nodes that gain, change, lose or adopt it, its sources, and the mass-removal brake',
      description:
        'Runs a dry run of the revision (default the latest committed) over the targets (exactly one of target_nodes, all, node_filter, node_sets), waits for it ' +
        '(one bulk read of the nodes, nothing written), and answers the plan summed from the store. The same checks as POST actions, each a 400 ' +
        '(InvalidTargets, NoNodesMatched, NoCommittedRevision, NoSiteActionRevision, DocumentValidationFailed); an unknown revision is a 404. ' +
        'A plan not done within 30 s (no worker polling, a very large site) is answered 202 with its Location.',
      tag: 'plans',
      access: 'write',
      body: { media: 'json', schema: PlanRequest, required: true },
      responses: {
        201: { description: 'the plan', schema: PlanView },
        202: { description: `the plan is still being computed after ${PLAN_WAIT_MS / 1000} s: GET the Location later`, schema: StatusBody },
        400: error,
        404: error,
      },
      async handle({ body }) {
        const runs = await relabel.runs();
        const plans = createPlans(runs);
        const started = await plans.start({ ...targetsOf(body), ...(body.revision !== undefined ? { revision: body.revision } : {}) });
        const id = encodeRunId(started);
        const ended = await runs.wait(started, undefined, 100, undefined, Date.now() + planWaitMs);
        if (ended.execution === 'RUNNING') {
          const why = ended.warnings?.[0] ?? 'the worker is still planning';
          const message = `plan ${id} is not done after ${planWaitMs / 1000} s (${why}); GET ${planUrl(id)} reads it once it is`;
          return { code: 202, body: statusBody({ status: 'Success', code: 202, reason: 'Accepted', message }), headers: { location: planUrl(id) } };
        }
        const nodes = body.nodes_detail
          ? { nodes: { ...(body.offset !== undefined ? { offset: body.offset } : {}), ...(body.limit !== undefined ? { limit: body.limit } : {}) } }
          : {};
        return { code: 201, body: planView(await plans.report(started, nodes)), headers: { location: planUrl(id) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/plans/:id',
      operationId: 'getPlan',
      summary: "A plan again (with nodes_detail, a page of per-node plans with each desired label's source)",
      tag: 'plans',
      access: 'read',
      params: PlanPath,
      query: PlanQuery,
      responses: { 200: { description: 'the plan', schema: PlanView }, 404: error, 409: error },
      async handle({ params, query }) {
        const key = runKeyOf(params.id, 'plan');
        const plans = createPlans(await relabel.runs());
        const nodes = query.nodes_detail
          ? { nodes: { offset: Number(query.offset ?? 0), ...(query.limit !== undefined ? { limit: Number(query.limit) } : {}) } }
          : {};
        return { code: 200, body: planView(await plans.report(key, nodes)) };
      },
    }),
  ];
}
