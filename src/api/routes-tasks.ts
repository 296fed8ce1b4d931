/**
 * Drydock's `relabel_nodes` tasks: a design reference and a node filter,
 * evaluated by the design core against the validated revision, start an
 * update run for the matching nodes. A filter that matches no node is a
 * 400, never a silent success.
 */
import { quote } from '../core/site-error.ts';
import type { ZodError } from 'zod';
import { FailureType } from '../core/failure-types.ts';
import { selectNodes } from '../core/node-filter.ts';
import type { Documents } from '../facade/documents.ts';
import { documentValidationError, RelabelError } from '../facade/relabel-error.ts';
import { runAudit, StartedVia } from '../core/run-audit.ts';
import { callerName } from './auth.ts';
import type { ApiDeps } from './deps.ts';
import { defineRoute, requestError, type RouteDef } from './route.ts';
import { runKeyOf, runState } from './run-state.ts';
import { taskView } from './run-views.ts';
import { TaskPath, NodePageQuery, TaskRequest } from './schemas.ts';
import { StatusBody, TaskView } from './response-schemas.ts';
import { ApiError } from './status.ts';

/** Path of a task. */
export const taskUrl = (id: string) => `/api/v1.0/tasks/${id}`;

const DECKHAND_REF = /^deckhand\+https?:\/\/[^/\s]+(?:\/\S*)?\/revisions\/([1-9][0-9]{0,8})\/rendered-documents\/?$/;
const REVISION_REF = /^revision:([1-9][0-9]{0,8})$/;

/**
 * The revision a `design_ref` names: Airship's
 * `deckhand+http://HOST/api/v1.0/revisions/{N}/rendered-documents` (only N is
 * used), `revision:N`, or `committed` (the latest revision). Throws
 * InvalidDesignRef for anything else or a revision that does not exist,
 * NoCommittedRevision for `committed` before any commit.
 */
export async function resolveDesignRef(documents: Documents, ref: string): Promise<number> {
  if (ref === 'committed') {
    const latest = await documents.latest();
    if (!latest) throw new RelabelError(FailureType.NoCommittedRevision, 'design_ref "committed": no revision has been committed');
    return latest.id;
  }
  const id = Number((DECKHAND_REF.exec(ref) ?? REVISION_REF.exec(ref))?.[1]);
  if (!Number.isInteger(id)) {
    throw new ApiError(
      FailureType.InvalidDesignRef,
      `design_ref ${quote(ref)} is not deckhand+http://HOST/api/v1.0/revisions/N/rendered-documents, revision:N or committed`,
    );
  }
  try {
    return (await documents.show(id)).id;
  } catch (err) {
    if (err instanceof RelabelError && err.type === FailureType.RevisionNotFound) {
      throw new ApiError(FailureType.InvalidDesignRef, `design_ref names revision ${id}, which does not exist`);
    }
    throw err;
  }
}

/** Reason of a refused task body: the first of action, design_ref, node_filter that is wrong; every problem listed. */
function invalidTask(raw: unknown, error: ZodError): ApiError {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return new ApiError(FailureType.InvalidRequest, 'the body must be a JSON object {action, design_ref, node_filter}');
  }
  const field = (['action', 'design_ref', 'node_filter'] as const).find((f) => error.issues.some((i) => i.path[0] === f));
  const reasons = {
    action: (raw as { action?: unknown }).action === undefined ? FailureType.InvalidRequest : FailureType.UnknownAction,
    design_ref: FailureType.InvalidDesignRef,
    node_filter: FailureType.InvalidNodeFilter,
  };
  return requestError(field ? reasons[field] : FailureType.InvalidRequest, error, 'body');
}

const error = { description: 'Airship Status error', schema: StatusBody };

/** The task routes. */
export function taskRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/tasks',
      operationId: 'createTask',
      summary: 'Starts a relabel_nodes task: an update run for the nodes node_filter selects in the design design_ref names',
      description:
        'Names in node_filter.node_names that the design lacks become failed subtasks (NodeNotInDesign). ' +
        'A filter matching no node of the design is a 400 (NoNodesMatched). A run removing more of the owned labels than the policy\'s ' +
        'max_removal_fraction is rejected (the task completes failed, MassRemovalRefused, nothing written) unless allow_mass_removal is true.',
      tag: 'tasks',
      access: 'write',
      body: { media: 'json', schema: TaskRequest, required: true },
      invalidBody: invalidTask,
      responses: { 201: { description: 'the task, Queued', schema: TaskView }, 400: error, 409: error },
      async handle({ body, request }) {
        const revision = await resolveDesignRef(documents, body.design_ref);
        const { validation } = await documents.rendered(revision);
        if (!validation.ok) {
          throw documentValidationError(`revision ${revision}`, validation.errors);
        }
        const { nodes, unknownNodeNames } = selectNodes(validation.design, body.node_filter);
        if (nodes.length === 0) {
          const unknown = unknownNodeNames.length > 0 ? ` (not in the design: ${unknownNodeNames.join(', ')})` : '';
          throw new ApiError(FailureType.NoNodesMatched, `node_filter matches no node of revision ${revision}${unknown}`);
        }
        const runs = await relabel.runs();
        const started = await runs.start({
          targets: [...nodes, ...unknownNodeNames],
          revision,
          audit: runAudit(callerName(request), StartedVia.api),
          ...(body.allow_mass_removal === true ? { allowMassRemoval: true } : {}),
        });
        const report = { ...started, execution: 'RUNNING', startTime: new Date().toISOString() };
        const view = taskView(
          { report, nodes: [], page: { run: started.run, total: started.targets.length, offset: 0, limit: started.targets.length } },
          {
            designRef: body.design_ref,
            nodeFilter: body.node_filter,
            queued: started.targets,
            revision: started.revision,
            notes: unknownNodeNames.map((n) => `${n} is named by node_filter but not in the design of revision ${revision}: it will fail (NodeNotInDesign)`),
          },
        );
        return { code: 201, body: view, headers: { location: taskUrl(view.task_id) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/tasks/:id',
      operationId: 'getTask',
      summary: "A task's status, result (success, partial_success, failure; incomplete while running) and one subtask per node",
      tag: 'tasks',
      access: 'read',
      params: TaskPath,
      query: NodePageQuery,
      responses: { 200: { description: 'the task', schema: TaskView }, 404: error },
      async handle({ params, query }) {
        const key = runKeyOf(params.id, 'task');
        return { code: 200, body: taskView(await runState(await relabel.runs(), key, query)) };
      },
    }),
  ];
}
