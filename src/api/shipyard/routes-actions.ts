/**
 * Shipyard's actions: `update_labels` (and its alias `relabel_nodes`) start
 * an update run through the runs facade; an action is that run, named by
 * the id of `src/api/runs/run-ids.ts`.
 */
import { DEFAULT_NODE_PAGE } from '../runs/run-state.ts';
import { quote } from '../../core/plan/text.ts';
import type { ZodError } from 'zod';
import { normalizeTargets } from '../../core/plan/targets.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import { runAudit, StartedVia } from '../../core/plan/run-audit.ts';
import { appliedVerb, rolloutOfParameters } from './action-rollout.ts';
import { callerName } from '../http/auth.ts';
import type { ApiDeps } from '../http/deps.ts';
import type { StartOptions } from '../../facade/runs/runs.ts';
import { defineRoute, requestError, type RouteDef } from '../http/route.ts';
import { actionKeyOf, actionState } from '../runs/run-state.ts';
import { actionSummary, actionView } from '../runs/run-views.ts';
import { ActionControlPath, ActionCreateQuery, ActionListQuery, ActionName, ActionPath, ActionRequest, NodePageQuery } from '../http/schemas.ts';
import { ActionList, ActionView, StatusBody } from '../http/response-schemas.ts';
import { ApiError, statusBody } from '../http/status.ts';

/** Path of an action. */
export const actionUrl = (id: string) => `/api/v1.0/actions/${id}`;

/**
 * Orders the checks of a body the schema refused as Shipyard does: invalid
 * `target_nodes` first, then an unknown action name, then anything else.
 */
function invalidAction(raw: unknown, error: ZodError): ApiError {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return new ApiError(FailureType.InvalidRequest, 'the body must be a JSON object {name, parameters: {target_nodes}}');
  }
  const parameters = (raw as { parameters?: unknown }).parameters;
  const given = typeof parameters === 'object' && parameters !== null ? (parameters as { target_nodes?: unknown; node_sets?: unknown }) : {};
  // Node sets name the targets instead of target_nodes: their names are checked with the rest of the body.
  const targets = given.node_sets !== undefined && given.target_nodes === undefined ? { ok: true as const } : normalizeTargets(given.target_nodes);
  if (!targets.ok) return new ApiError(FailureType.InvalidTargets, `invalid target_nodes: ${targets.message}`);
  const name = (raw as { name?: unknown }).name;
  if (!ActionName.safeParse(name).success) {
    return new ApiError(FailureType.UnknownAction, `unknown action ${quote(name ?? null)}: relabel runs ${ActionName.options.join(' and ')}`);
  }
  return requestError(FailureType.InvalidRequest, error, 'body');
}

/** The targets of an action: exactly one of `target_nodes` (names) and `node_sets` (their members, found when the run is planned). */
function targetsOf(parameters: ActionRequest['parameters']): Pick<StartOptions, 'targets' | 'select'> {
  const { target_nodes: named, node_sets: sets } = parameters;
  if ((named === undefined) === (sets === undefined)) {
    throw new ApiError(
      FailureType.InvalidTargets,
      `name the targets with exactly one of parameters.target_nodes and parameters.node_sets${named !== undefined ? ' (both were given)' : ''}`,
    );
  }
  return sets ? { targets: undefined, select: { nodeSets: sets } } : { targets: named };
}

const error = { description: 'Airship Status error', schema: StatusBody };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The action routes. */
export function actionRoutes({ relabel }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/actions',
      operationId: 'createAction',
      summary: 'Starts an update_labels run for target_nodes (a list, or a comma-separated string), or for the members of node_sets',
      description:
        'Checked in this order, each a 400 with its own reason: invalid target_nodes (InvalidTargets), unknown action name (UnknownAction), ' +
        'both or neither of target_nodes and node_sets (InvalidTargets), ' +
        'no committed configdocs (NoCommittedRevision), no revision that took part in a site action (NoSiteActionRevision), ' +
        'invalid documents (DocumentValidationFailed, every error listed), a node set the revision lacks (InvalidTargets, naming it; nothing started). ' +
        "node_sets (relabel's own) targets the members of those relabel/NodeSet/v1 sets, read from the cluster when the run is planned. " +
        'A run already in progress for the site is a 409 (RunInProgress). ' +
        'allow-intermediate-commits is accepted and, as Shipyard does for its targeted actions (relabel_nodes), not checked. ' +
        "A run that would remove more of the labels relabel owns on its targets than the policy's max_removal_fraction fails " +
        '(the action ends Failed with MassRemovalRefused, its message naming the counts and keys; nothing written) unless parameters.allow_mass_removal is true ' +
        '(a JSON boolean, or the text "true" as `shipyard create action --param allow_mass_removal=true` sends it). ' +
        'parameters.waves (rack, label:<key>, none), wave_size (25 or 10%), canary, approval (none, first, each), health_timeout_seconds and ' +
        "max_failed_nodes roll the run out in waves over the label policy's rollout: (each a JSON value or its text; a bad one is a 400 " +
        'InvalidRequest naming the parameter, nothing started). The action then has one step per wave (relabel_wave_1, …) instead of relabel_nodes.',
      tag: 'actions',
      access: 'write',
      query: ActionCreateQuery,
      body: { media: 'json', schema: ActionRequest, required: true },
      invalidBody: invalidAction,
      responses: { 201: { description: 'the action, Pending', schema: ActionView }, 400: error, 409: error },
      async handle({ body, request }) {
        const runs = await relabel.runs();
        const allow = body.parameters.allow_mass_removal === true ? { allowMassRemoval: true } : {};
        const audit = runAudit(callerName(request), StartedVia.api);
        // Shipyard keeps the client's X-Context-Marker as the action's context marker.
        const marker = request.headers['x-context-marker'];
        const contextMarker = typeof marker === 'string' && UUID.test(marker) ? { contextMarker: marker.toLowerCase() } : {};
        const rollout = rolloutOfParameters(body.parameters);
        const started = await runs.start({
          ...targetsOf(body.parameters),
          action: body.name,
          audit,
          ...allow,
          ...(rollout ? { rollout } : {}),
          ...contextMarker,
        });
        const report = { ...started, startedBy: audit.by, startedVia: audit.via, execution: 'RUNNING', startTime: new Date().toISOString() };
        // The answer names the first page of targets, as GET actions/{id} pages them; a large run's answer stays small.
        const shown = started.targets.slice(0, DEFAULT_NODE_PAGE);
        const view = actionView(
          { report, nodes: [], page: { run: started.run, total: started.targets.length, offset: 0, limit: DEFAULT_NODE_PAGE } },
          { name: body.name, ...(started.nodeSets ? {} : { targets: shown }), revision: started.revision },
        );
        return { code: 201, body: view, headers: { location: actionUrl(view.id) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/actions',
      operationId: 'listActions',
      summary: 'The most recent update runs (limit, default 50), most recent first',
      tag: 'actions',
      access: 'read',
      query: ActionListQuery,
      responses: { 200: { description: 'the actions', schema: ActionList } },
      async handle({ query }) {
        const runs = await (await relabel.runs()).list(Number(query.limit ?? 50));
        return { code: 200, body: runs.map(actionSummary) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/actions/:id',
      operationId: 'getAction',
      summary:
        "An action's lifecycle (Pending, Processing, Paused, Complete, Failed), revision, per-node results with reasons, and Shipyard's steps, notes, validations and command audit",
      description:
        'The id is the 26-character ULID the action was created with (older runs: their base64url id). Notes name the first 50 failed nodes ' +
        'and why (each detail at GET notedetails/{note_id}); node_results pages every node.',
      tag: 'actions',
      access: 'read',
      params: ActionPath,
      query: NodePageQuery,
      responses: { 200: { description: 'the action', schema: ActionView }, 404: error },
      async handle({ params, query }) {
        return { code: 200, body: actionView(await actionState(await relabel.runs(), params.id, query)) };
      },
    }),
    controlRoute(relabel),
  ];
}

/** `POST actions/{id}/control/{verb}`: Shipyard's pause, unpause and stop, and relabel's gate verbs. */
function controlRoute(relabel: ApiDeps['relabel']): RouteDef {
  return defineRoute({
    method: 'POST',
    path: '/api/v1.0/actions/:id/control/:verb',
    operationId: 'controlAction',
    summary: "Pauses, unpauses or stops a running action, or moves a run in waves on at a gate; each accepted control is in the action's command_audit",
    description:
      'pause: no new node starts, the nodes being relabelled finish (the action shows Paused); unpause: nodes start again; ' +
      'stop: the run is cancelled, the nodes being relabelled finish and stay relabelled, every node not started is settled as cancelled (NotStarted). ' +
      "A run in waves waiting at an approval gate, or halted, shows Paused: Shipyard's unpause approves the gate it waits at, or resumes the halted run " +
      "(a run also paused is unpaused first); the command audit records what was applied (approve, resume). relabel's own verbs: approve (only at an approval gate), " +
      'resume (only a halted run), abort (at either gate: no more nodes start, the rest are settled as not started, the run ends partial). stop stays a cancellation. ' +
      'A run that has ended is a 409 (NotRunning); so is pausing a dry run or a run that has started all its nodes.',
    tag: 'actions',
    access: 'write',
    params: ActionControlPath,
    responses: { 202: { description: 'the control was accepted', schema: StatusBody }, 400: error, 404: error, 409: error },
    async handle({ params, request }) {
      const runs = await relabel.runs();
      const key = await actionKeyOf(runs, params.id);
      // Shipyard's unpause moves a run in waves past the gate it waits at: read where it stands first.
      const verb = params.verb === 'unpause' ? appliedVerb(params.verb, (await runs.status(key.workflowId, key.runId)).progress) : params.verb;
      // The facade refuses a run that has ended (NotRunning, 409) and records the command with who gave it.
      const done = await runs.control(key.workflowId, key.runId, verb, callerName(request));
      const state = done.answer
        ? ` (${done.answer.paused ? 'paused' : 'running'}: ${done.answer.running} node(s) running, ${done.answer.pending} not started)`
        : '';
      const applied = verb !== params.verb ? ` as ${verb}` : '';
      return {
        code: 202,
        body: statusBody({ status: 'Success', code: 202, reason: 'Accepted', message: `${params.verb} accepted for action ${params.id}${applied}${state}` }),
      };
    },
  });
}
