/**
 * `updateLabels`: the Airship update_labels action as a durable workflow.
 * Resolve the revision, reject what must be rejected, validate, then relabel
 * every target node as a `relabelNode` child in a bounded sliding window and
 * roll the outcomes up. Never rolls back; never tags the revision.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  condition,
  continueAsNew,
  executeChild,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { FailureType } from '../core/failure-types.ts';
import { normalizeTargets } from '../core/targets.ts';
import type { Activities } from '../activities/index.ts';
import {
  PROGRESS_FAILURE_LIMIT,
  RunPhase,
  nodeResultsQuery,
  progressQuery,
  type CarriedProgress,
  type NodeError,
  type NodeOutcome,
  type Progress,
  type UpdateLabelsInput,
  type UpdateLabelsResult,
} from './messages.ts';
import { relabelNode } from './relabel-node.ts';
import { rollUp, summaryMarkdown } from './rollup.ts';
import { RelabelRevision, RelabelSite, RelabelStatus } from './search-attributes.ts';

/** Nodes relabelled in one workflow run before it continues as new. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER = 500;

/** Upper bound on the window, whatever is asked. */
export const MAX_CONCURRENCY = 1000;

const { resolveRevision } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  summary: 'resolve the revision and check it may be applied',
});
const { loadRunDesign } = proxyActivities<Activities>({
  startToCloseTimeout: '120s',
  summary: 'validate the documents and match the targets against the design',
});

/** The reason a child failed: the innermost ApplicationFailure under the child and activity wrappers. */
function childFailure(err: unknown): NodeError {
  let cause: unknown = err;
  while ((cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) && cause.cause) cause = cause.cause;
  if (cause instanceof ApplicationFailure) return { type: cause.type ?? 'Error', message: cause.message };
  if (cause instanceof Error) return { type: cause.name, message: cause.message };
  return { type: 'Error', message: String(cause) };
}

/**
 * Runs a rejection-checking activity so that its non-retryable failure
 * becomes the run's own failure, with the public failure type on top
 * (not buried under an ActivityFailure).
 */
async function rejecting<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
      throw ApplicationFailure.create({ type: err.cause.type ?? undefined, message: err.cause.message, nonRetryable: true, details: err.cause.details as unknown[] });
    }
    throw err;
  }
}

/**
 * Applies a revision's labels to `targets`. Rejects (non-retryable
 * ApplicationFailure, nothing written) on invalid targets
 * (InvalidTargets), no committed revision (NoCommittedRevision), an
 * unknown revision (RevisionNotFound), no revision that took part in a site
 * action (NoSiteActionRevision) and invalid documents
 * (DocumentValidationFailed, every error listed). Otherwise completes with
 * `success`, `partial_success` or `failure` and a reason per failed node.
 */
export async function updateLabels(input: UpdateLabelsInput): Promise<UpdateLabelsResult> {
  const info = workflowInfo();
  const dryRun = input.dryRun ?? false;
  const useSearchAttributes = input.searchAttributes !== false;
  let phase: RunPhase = input.carried ? RunPhase.applying : RunPhase.resolving;
  let carried: CarriedProgress | undefined = input.carried;
  const outcomes = new Map<string, NodeOutcome>((input.carried?.outcomes ?? []).map((o) => [o.node, o]));
  const running = new Set<string>();
  let result: UpdateLabelsResult | undefined;

  const failures = () => [...outcomes.values()].filter((o) => o.status === 'failure');
  const progress = (): Progress => {
    const total = carried?.targets.length ?? 0;
    const failed = failures();
    const success = outcomes.size - failed.length;
    return {
      phase,
      revision: carried?.revision,
      site: carried?.site,
      dryRun,
      total,
      counts: { pending: total - outcomes.size - running.size, running: running.size, success, failure: failed.length },
      failures: failed.slice(0, PROGRESS_FAILURE_LIMIT).map((o) => ({ node: o.node, error: o.error as NodeError })),
      status: result?.status,
      retryOf: input.retryOf,
    };
  };
  setHandler(progressQuery, progress);
  setHandler(nodeResultsQuery, (page) => {
    const ordered = (carried?.targets ?? []).flatMap((t) => outcomes.get(t) ?? []);
    const offset = Math.max(0, page?.offset ?? 0);
    const limit = Math.min(1000, Math.max(1, page?.limit ?? 100));
    return { total: ordered.length, items: ordered.slice(offset, offset + limit) };
  });
  const showProgress = () => {
    const p = progress();
    setCurrentDetails(
      `**${p.phase}** revision ${p.revision ?? '?'}${dryRun ? ' (dry run)' : ''}: ` +
        `${p.counts.success} ok, ${p.counts.failure} failed, ${p.counts.running} running, ${p.counts.pending} pending of ${p.total}`,
    );
  };

  if (!carried) {
    const parsed = normalizeTargets(input.targets);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, FailureType.InvalidTargets);
    setCurrentDetails('Resolving the revision');
    const { revision } = await rejecting(resolveRevision({ revision: input.revision }));
    phase = RunPhase.validating;
    setCurrentDetails(`Validating the documents of revision ${revision}`);
    const design = await rejecting(loadRunDesign({ revision, targets: parsed.targets }));
    const concurrency = Math.min(MAX_CONCURRENCY, Math.max(1, input.concurrency ?? design.defaultConcurrency));
    carried = { revision, site: design.site, concurrency, outcomes: [], targets: parsed.targets, startedAt: info.startTime.toISOString() };
    for (const node of design.notInDesign) {
      outcomes.set(node, {
        node,
        status: 'failure',
        error: { type: FailureType.NodeNotInDesign, message: `node ${node} is not in the design of revision ${revision}` },
      });
    }
    if (useSearchAttributes) {
      upsertSearchAttributes([
        { key: RelabelRevision, value: revision },
        { key: RelabelSite, value: design.site },
        { key: RelabelStatus, value: dryRun ? 'dry_run' : 'running' },
      ]);
    }
  }
  const run = carried;
  phase = RunPhase.applying;
  showProgress();

  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  const idPrefix = `${info.workflowId}/${info.firstExecutionRunId.slice(0, 8)}`;
  let launched = 0;
  for (const node of run.targets) {
    if (outcomes.has(node)) continue;
    if (launched >= limit || info.continueAsNewSuggested) break;
    await condition(() => running.size < run.concurrency);
    launched++;
    running.add(node);
    showProgress();
    void executeChild(relabelNode, {
      workflowId: `${idPrefix}/${node}`,
      args: [{ node, revision: run.revision, dryRun, searchAttributes: useSearchAttributes }],
      staticSummary: `${dryRun ? 'Plan' : 'Relabel'} ${node} at revision ${run.revision}`,
      staticDetails: `Child of ${info.workflowId}: brings the labels of node **${node}** to revision ${run.revision} of site ${run.site}.`,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    }).then(
      (r) =>
        outcomes.set(node, {
          node,
          status: 'success',
          set: r.set,
          removed: r.removed,
          adopted: r.adopted,
          unchanged: r.unchanged,
          written: r.written,
          ...(r.taintLifted ? { taintLifted: true } : {}),
        }),
      (err: unknown) => outcomes.set(node, { node, status: 'failure', error: childFailure(err) }),
    ).finally(() => {
      running.delete(node);
      showProgress();
    });
  }
  await condition(() => running.size === 0);

  if (run.targets.some((t) => !outcomes.has(t))) {
    await continueAsNew<typeof updateLabels>({ ...input, carried: { ...run, outcomes: [...outcomes.values()] } });
  }

  phase = RunPhase.done;
  result = rollUp({ run, outcomes, dryRun, retryOf: input.retryOf });
  if (useSearchAttributes) upsertSearchAttributes([{ key: RelabelStatus, value: dryRun ? 'dry_run' : result.status }]);
  setCurrentDetails(summaryMarkdown(result));
  return result;
}
