/**
 * Drydock's `relabel_nodes` tasks: a design reference and a node filter
 * (none: every node), evaluated by the design core against the validated
 * revision, start an update run for the matching nodes. A filter that
 * matches no node is a 400, never a silent success. Every update run is a
 * task; each of its nodes a subtask (see `task-views.ts`).
 */
import { z, type ZodError } from 'zod';
import { quote } from '../../core/plan/text.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import { NodeFilterSet, selectNodes } from '../../core/site/node-filter.ts';
import type { Documents } from '../../facade/documents/documents.ts';
import type { StartOptions, TaskRequestMemo } from '../../facade/runs/runs.ts';
import type { Design } from '../../core/site/validate-site.ts';
import { documentValidationError, RelabelError } from '../../facade/relabel-error.ts';
import { runAudit, StartedVia } from '../../core/plan/run-audit.ts';
import { callerName } from '../http/auth.ts';
import type { ApiDeps } from '../http/deps.ts';
import { defineRoute, requestError, type RouteDef } from '../http/route.ts';
import { encodeRunId } from '../runs/run-ids.ts';
import { actionKeyOf, DEFAULT_NODE_PAGE, runState } from '../runs/run-state.ts';
import { failureOf, type RunState } from '../runs/run-views.ts';
import { nodeTaskView, parseSubtaskId, subtaskErrors, subtaskViews, taskLayers, taskView, type TaskSource } from './task-views.ts';
import { TaskListQuery, TaskPath, TaskQuery, TaskRequest } from '../http/schemas.ts';
import { StatusBody } from '../http/response-schemas.ts';
import { TaskLayersView, TaskList, TaskView } from './task-schemas.ts';
import { ApiError } from '../http/status.ts';

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

/** Most tasks `GET tasks` lists by default, and subtasks it adds by default. */
const DEFAULT_TASK_LIST = 20;
const DEFAULT_LIST_SUBTASKS = 1000;

/** A task source from the facade's report of a run and a page of its nodes. */
function sourceOf(state: RunState, request: { designRef: string | null; nodeFilter: NodeFilterSet | null; notes: string[] }): TaskSource {
  const { report, nodes, page } = state;
  return {
    id: encodeRunId(report),
    execution: report.execution,
    hasProgress: report.progress !== undefined,
    ...(report.result?.status !== undefined ? { runStatus: report.result.status } : {}),
    failure: failureOf(report),
    startTime: report.startTime,
    ...(report.closeTime !== undefined ? { closeTime: report.closeTime } : {}),
    ...(report.startedBy !== undefined ? { startedBy: report.startedBy } : {}),
    revision: report.result?.revision ?? report.progress?.revision ?? null,
    uiLink: report.uiLink ?? null,
    ...(report.nodeSets ? { nodeSets: report.nodeSets } : {}),
    ...request,
    page,
    nodes,
  };
}

/** The design_ref and node_filter a run's memo kept (null for a run no task started), and a note when the filter was too large to keep. */
function requestOf(task: TaskRequestMemo | undefined): { designRef: string | null; nodeFilter: NodeFilterSet | null; notes: string[] } {
  const parsed = NodeFilterSet.safeParse(task?.node_filter);
  return {
    designRef: task?.design_ref ?? null,
    nodeFilter: parsed.success ? parsed.data : null,
    notes: task?.node_filter_omitted ? ['the node_filter this task was created with was too large to keep; its nodes are the subtasks'] : [],
  };
}

/**
 * The targets of a task: the members of `nodeSets` (with no filter), every
 * node of the design and every set's members (no filter), or the design's
 * nodes `filter` selects, as Drydock's orchestrator filters the
 * BaremetalNodes (the names it gives that the design lacks returned apart).
 * Throws InvalidTargets for a filter beside node sets, NoNodesMatched for a
 * filter matching nothing.
 */
function taskTargets(
  design: Design,
  revision: number,
  filter: NodeFilterSet | null,
  nodeSets: string[] | undefined,
): { targets: Pick<StartOptions, 'targets' | 'select'>; unknownNodeNames: string[] } {
  if (nodeSets) {
    if (filter) throw new ApiError(FailureType.InvalidTargets, 'node_sets targets the members of the sets: send node_filter null or leave it out');
    return { targets: { targets: undefined, select: { nodeSets } }, unknownNodeNames: [] };
  }
  if (!filter) return { targets: { targets: undefined, select: { all: true } }, unknownNodeNames: [] };
  const { nodes, unknownNodeNames } = selectNodes(design, filter);
  if (nodes.length === 0) {
    const unknown = unknownNodeNames.length > 0 ? ` (not in the design: ${unknownNodeNames.join(', ')})` : '';
    throw new ApiError(FailureType.NoNodesMatched, `node_filter matches no node of revision ${revision}${unknown}`);
  }
  return { targets: { targets: [...nodes, ...unknownNodeNames] }, unknownNodeNames };
}

/** The task route that starts a run: a Drydock task over the node filter of a design, or over node sets' members. */
function createTaskRoutes({ relabel }: ApiDeps): RouteDef[] {
  const { documents } = relabel;
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1.0/tasks',
      operationId: 'createTask',
      summary:
        'Starts a relabel_nodes task: an update run for the nodes node_filter selects (every node when null) in the design design_ref names, or for the members of node_sets',
      description:
        'node_filter selects among the nodes the design names (BaremetalNodes), as Drydock does; names in node_filter.node_names that the design lacks ' +
        'become failed subtasks (NodeNotInDesign). node_filter null or absent selects every node of the design and the members of every node set. ' +
        "node_sets (relabel's own, with node_filter null or absent) selects only the members of those relabel/NodeSet/v1 sets, read from the cluster when " +
        'the run is planned; a set the revision lacks is a 400 (InvalidTargets, naming it; nothing started), and so is node_sets beside a node_filter. ' +
        "A filter matching no node of the design is a 400 (NoNodesMatched). A run removing more of the owned labels than the policy's " +
        'max_removal_fraction is rejected (the task completes with result failure, MassRemovalRefused, nothing written) unless allow_mass_removal is true.',
      tag: 'tasks',
      access: 'write',
      body: { media: 'json', schema: TaskRequest, required: true },
      invalidBody: invalidTask,
      responses: { 201: { description: 'the task, queued', schema: TaskView }, 400: error, 409: error },
      async handle({ body, request }) {
        const revision = await resolveDesignRef(documents, body.design_ref);
        const { validation } = await documents.rendered(revision);
        if (!validation.ok) {
          throw documentValidationError(`revision ${revision}`, validation.errors);
        }
        const filter = body.node_filter ?? null;
        const { targets, unknownNodeNames } = taskTargets(validation.design, revision, filter, body.node_sets);
        const runs = await relabel.runs();
        const started = await runs.start({
          ...targets,
          revision,
          action: 'relabel_nodes',
          audit: runAudit(callerName(request), StartedVia.api),
          task: { design_ref: body.design_ref, node_filter: filter },
          ...(body.allow_mass_removal === true ? { allowMassRemoval: true } : {}),
        });
        const shown = started.targets.slice(0, DEFAULT_NODE_PAGE);
        // The task names its node sets when it was created for them (a null filter's sets are every set: not named, as GET answers it).
        const { nodeSets, ...run } = started;
        const named = body.node_sets && nodeSets ? { nodeSets } : {};
        const report = { ...run, ...named, startedBy: callerName(request), execution: 'RUNNING', startTime: new Date().toISOString() };
        const state: RunState = {
          report,
          nodes: shown.map((node) => ({ node, status: 'queued', written: false })),
          page: { run: started.run, total: started.targets.length, offset: 0, limit: DEFAULT_NODE_PAGE },
        };
        const notes = unknownNodeNames.map((n) => `${n} is named by node_filter but not in the design of revision ${revision}: it will fail (NodeNotInDesign)`);
        const view = taskView({ ...sourceOf(state, { designRef: body.design_ref, nodeFilter: filter, notes }), revision: started.revision });
        return { code: 201, body: view, headers: { location: taskUrl(view.task_id) } };
      },
    }),
  ];
}

/** The task routes that read: the task list and one task. */
function readTaskRoutes({ relabel }: ApiDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/tasks',
      operationId: 'listTasks',
      summary: 'The most recent tasks (every update run), newest first, each followed by its per-node subtasks',
      description:
        "As Drydock's list, subtasks are listed too (Shipyard's Drydock operator looks failed subtasks up in it), at most max_subtasks in one answer " +
        "(default 1000): a task's subtask_id_list names those listed. Page with offset and limit (default 20 tasks).",
      tag: 'tasks',
      access: 'read',
      query: TaskListQuery,
      responses: { 200: { description: 'the tasks', schema: TaskList } },
      async handle({ query }) {
        const runs = await relabel.runs();
        const offset = Number(query.offset ?? 0);
        const listed = (await runs.list(offset + Number(query.limit ?? DEFAULT_TASK_LIST))).slice(offset);
        let budget = Number(query.max_subtasks ?? DEFAULT_LIST_SUBTASKS);
        const answer: TaskView[] = [];
        for (const run of listed) {
          // One row at least, for the total; only those within the budget are listed.
          const page = run.run !== undefined ? await runs.nodes(run.run, { offset: 0, limit: Math.max(1, budget) }) : null;
          const nodes = page?.items.slice(0, budget) ?? [];
          budget -= nodes.length;
          const source: TaskSource = {
            id: encodeRunId(run),
            execution: run.execution,
            hasProgress: true,
            ...(run.outcome !== undefined ? { runStatus: run.outcome } : {}),
            failure: run.execution === 'FAILED' ? { type: 'Rejected', message: 'the run was rejected; GET tasks/{id} says why' } : null,
            startTime: run.startTime,
            ...(run.closeTime !== undefined ? { closeTime: run.closeTime } : {}),
            ...(run.startedBy !== undefined ? { startedBy: run.startedBy } : {}),
            revision: null,
            uiLink: null,
            ...(run.nodeSets ? { nodeSets: run.nodeSets } : {}),
            ...requestOf(run.task),
            page: { run: run.run ?? null, total: page?.total ?? 0, offset: 0, limit: Math.max(1, nodes.length) },
            nodes,
          };
          answer.push(taskView(source), ...subtaskViews(source));
        }
        return { code: 200, body: answer };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1.0/tasks/:id',
      operationId: 'getTask',
      summary: "A task (status queued, running, complete, terminated; result success, partial_success, failure, incomplete) or one node's subtask",
      description:
        'A task lists a page of its per-node subtasks in subtask_id_list (offset, limit: default 1000, at most 5000), each readable with ' +
        "GET tasks/{subtask id}. subtaskerrors=true adds subtask_errors (the page's failed subtasks' results by id); layers=N answers " +
        "Drydock's map of tasks by id (init_task_id, the task, and with N of 2 and more or -1 the page's subtasks).",
      tag: 'tasks',
      access: 'read',
      params: TaskPath,
      query: TaskQuery,
      responses: { 200: { description: 'the task, or with layers the map of tasks', schema: z.union([TaskView, TaskLayersView]) }, 404: error },
      async handle({ params, query }) {
        const runs = await relabel.runs();
        const sub = parseSubtaskId(params.id);
        const key = await actionKeyOf(runs, sub?.taskId ?? params.id, 'task');
        const page = sub ? { offset: String(sub.position), limit: '1' } : { offset: query.offset, limit: query.limit };
        const state = await runState(runs, key, page);
        const source = sourceOf(state, requestOf(state.report.task));
        const extra = query.builddata === true ? { build_data: [] } : {};
        if (sub) {
          const node = state.nodes[0];
          if (!node) throw new ApiError(FailureType.ActionNotFound, `no task ${params.id}: the run has no node at position ${sub.position}`);
          return { code: 200, body: { ...nodeTaskView(source, node, sub.position), ...extra } };
        }
        const task: TaskView = { ...taskView(source), ...extra };
        const subtasks = query.subtaskerrors === true || (query.layers !== undefined && query.layers !== '0') ? subtaskViews(source) : [];
        const errors = query.subtaskerrors === true ? { subtask_errors: subtaskErrors(subtasks) } : {};
        if (query.layers !== undefined && query.layers !== '0') {
          return { code: 200, body: { ...taskLayers(task, subtasks, Number(query.layers)), ...errors } };
        }
        return { code: 200, body: { ...task, ...errors } };
      },
    }),
  ];
}

/** The task routes. */
export function taskRoutes(deps: ApiDeps): RouteDef[] {
  return [...createTaskRoutes(deps), ...readTaskRoutes(deps)];
}
