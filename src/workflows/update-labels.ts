/**
 * `updateLabels`: the Airship update_labels action as a durable workflow.
 * Resolve the revision and reject what must be rejected; plan every target
 * in bulk (one paginated read of the nodes, every plan computed in the
 * worker, unchanged nodes settled without a child); then one `relabelNode`
 * child per node with something to change, in a bounded sliding window.
 * Never rolls back; never tags the revision.
 *
 * Bounded by design: targets and per-node results live in the revision
 * store under the run number; this workflow keeps counts, a capped failure
 * sample and a cursor, and continues as new well before its history grows
 * large.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ParentClosePolicy,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { FailureType } from '../core/plan/failure-types.ts';
import { normalizeTargets } from '../core/plan/targets.ts';
import type { Activities } from '../activities/index.ts';
import type { RunPlan } from '../activities/plan-run.ts';
import {
  MAX_INLINE_TARGETS,
  RunPhase,
  progressQuery,
  type CarriedProgress,
  type NodeError,
  type NodeFailure,
  type Progress,
  type UpdateLabelsInput,
  type UpdateLabelsResult,
} from './messages.ts';
import { failureInfo } from './failure.ts';
import { relabelNode } from './relabel-node.ts';
import { runStatus, sampleFailure, summaryMarkdown } from './rollup.ts';
import { runTelemetry } from './run-telemetry.ts';
import { recordOutcome, rejectingRun, scheduledAudit } from './run-record.ts';
import { handleControl, settleCancelled, SETTLE_CANCELLED_PATCH } from './run-control.ts';
import { nodeSearchAttributes, RelabelRevision, RelabelSite, RelabelStatus, RelabelStatusValue } from './search-attributes.ts';

/** Children started in one workflow execution before it continues as new. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER = 2500;

/**
 * History an execution may reach before it continues as new: below the
 * server's warning (10,240 events) and far below its hard limit (51,200
 * events, 50 MB). The server's own suggestion comes at about 4,000 events,
 * which would cost a drained window every 1,000 children.
 */
export const MAX_HISTORY_EVENTS = 9000;
export const MAX_HISTORY_BYTES = 8 * 1024 * 1024;

/** Upper bound on the window, whatever is asked (Temporal allows 2,000 pending children). */
export const MAX_CONCURRENCY = 1000;

/** Pending nodes fetched from the store at a time. */
const PAGE_SIZE = 500;

/** Failures buffered before they are written to the store. */
const FLUSH_AT = 100;

/** Longest failure message kept (the store and payloads stay bounded). */
const MAX_MESSAGE = 1000;

const { resolveRevision, registerRun, pendingNodes, recordFailures } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
});
const { planRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'validate the documents, read the target nodes in bulk and plan each',
});

/** The reason a child failed: the innermost ApplicationFailure under the child and activity wrappers. */
function childFailure(err: unknown): NodeError {
  const { type, message } = failureInfo(err);
  return { type, message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message };
}

/** What continue-as-new carries: `state`, marked paused only while the run is paused. */
function carriedOn(state: CarriedProgress, paused: boolean): CarriedProgress {
  const { paused: _carried, ...rest } = state;
  return paused ? { ...rest, paused: true } : rest;
}

/**
 * The run's targets in the store: the facade's run, or one registered from
 * inline targets, with who started it (the input's audit, else the
 * Schedule that started it).
 */
async function runOf(input: UpdateLabelsInput, revision: number): Promise<number> {
  if (input.run !== undefined) return input.run;
  const parsed = normalizeTargets(input.targets);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, FailureType.InvalidTargets);
  if (parsed.targets.length > MAX_INLINE_TARGETS) {
    throw ApplicationFailure.nonRetryable(
      `${parsed.targets.length} targets given inline; at most ${MAX_INLINE_TARGETS} (start larger runs through relabel, which stores the targets)`,
      FailureType.InvalidTargets,
    );
  }
  const info = workflowInfo();
  const audit = input.audit ?? scheduledAudit();
  const { run } = await registerRun({
    key: `${info.workflowId}/${info.firstExecutionRunId}`,
    workflowId: info.workflowId,
    revision,
    dryRun: input.dryRun ?? false,
    targets: parsed.targets,
    ...(audit ? { startedBy: audit.by, startedVia: audit.via } : {}),
  });
  return run;
}

/**
 * Applies a revision's labels to the run's targets. Rejects (non-retryable
 * ApplicationFailure, nothing written) on invalid targets
 * (InvalidTargets), no committed revision (NoCommittedRevision), an
 * unknown revision (RevisionNotFound), no revision that took part in a site
 * action (NoSiteActionRevision) and invalid documents
 * (DocumentValidationFailed, every error listed) and a run the mass-removal
 * brake stops (MassRemovalRefused: it removes more of the owned labels than
 * the policy allows, and `allowMassRemoval` is not set; see `planRun`).
 * Otherwise completes with
 * `success`, `partial_success` or `failure`; every node's outcome is in the
 * store under the run number.
 *
 * The `control` Update pauses it (no new node starts; running ones finish)
 * and unpauses it; a paused run stays paused across continue-as-new.
 * Cancelled (stopped), it lets the running nodes finish and settles every
 * other node as `cancelled` (NotStarted) before it ends cancelled: nodes
 * already relabelled stay relabelled.
 */
export async function updateLabels(input: UpdateLabelsInput): Promise<UpdateLabelsResult> {
  const settles = patched(SETTLE_CANCELLED_PATCH);
  const dryRun = input.dryRun ?? false;
  const useSearchAttributes = input.searchAttributes !== false;
  let phase: RunPhase = input.carried ? RunPhase.applying : RunPhase.resolving;
  let carried: CarriedProgress | undefined = input.carried;
  const running = new Set<string>();
  const unrecorded: NodeFailure[] = [];
  const outcome: { result?: UpdateLabelsResult } = {};
  let plan: RunPlan | undefined;
  const control = { paused: input.carried?.paused === true };
  let runNumber = input.carried?.run ?? input.run;

  const progress = (): Progress => {
    const c = carried?.counts;
    const total = c?.total ?? 0;
    const success = c?.success ?? 0;
    const failure = c?.failure ?? 0;
    return {
      phase,
      run: carried?.run ?? input.run,
      revision: carried?.revision,
      site: carried?.site,
      dryRun,
      total,
      counts: { pending: total - success - failure - running.size, running: running.size, success, failure, written: c?.written ?? 0 },
      failures: carried?.failures ?? [],
      status: outcome.result?.status,
      retryOf: input.retryOf,
      ...(control.paused ? { paused: true } : {}),
    };
  };
  setHandler(progressQuery, progress);
  const showProgress = () => {
    const p = progress();
    setCurrentDetails(
      `**${p.phase}**${control.paused ? ' (**paused**: no new node starts)' : ''} run ${p.run ?? '?'}, revision ${p.revision ?? '?'}${dryRun ? ' (dry run)' : ''}: ` +
        `${p.counts.success} ok, ${p.counts.failure} failed, ${p.counts.running} running, ${p.counts.pending} pending of ${p.total} (${p.counts.written} written)`,
    );
  };

  const flush = async () => {
    while (unrecorded.length > 0 && runNumber !== undefined) await recordFailures({ run: runNumber, failures: unrecorded.splice(0, FLUSH_AT) });
  };
  /** Waits for `ready`, writing buffered failures to the store whenever enough pile up. */
  const waitFor = async (ready: () => boolean) => {
    for (;;) {
      await condition(() => ready() || unrecorded.length >= FLUSH_AT);
      if (unrecorded.length >= FLUSH_AT) await flush();
      if (ready()) return;
    }
  };

  // Every node has been started: nothing is left to pause.
  let started = false;
  handleControl(control, {
    dryRun,
    started: () => started || phase === RunPhase.done,
    running: () => running.size,
    pending: () => progress().counts.pending,
    changed: () => showProgress(),
  });

  try {
    return await apply();
  } catch (err) {
    if (settles && isCancellation(err) && runNumber !== undefined) {
      setCurrentDetails(`**cancelled**: run ${runNumber} lets its ${running.size} running node(s) finish and settles the nodes it did not start`);
      await settleCancelled(runNumber, () => running.size === 0, flush);
    }
    throw err;
  }

  async function apply(): Promise<UpdateLabelsResult> {
    if (!carried) {
      setCurrentDetails('Resolving the revision');
      if (input.run === undefined) {
        // Checked before anything else, as Shipyard checks target_nodes first.
        const parsed = normalizeTargets(input.targets);
        if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, FailureType.InvalidTargets);
      }
      const { revision } = await rejectingRun(input.run, resolveRevision({ revision: input.revision }));
      const run = await runOf(input, revision);
      runNumber = run;
      phase = RunPhase.planning;
      setCurrentDetails(`Planning run ${run}: validating revision ${revision} and reading the target nodes`);
      plan = await rejectingRun(run, planRun({ run, revision, dryRun, ...(input.allowMassRemoval ? { allowMassRemoval: true } : {}) }));
      const concurrency = Math.min(MAX_CONCURRENCY, Math.max(1, input.concurrency ?? plan.defaultConcurrency));
      carried = {
        run,
        revision,
        site: plan.site,
        concurrency,
        counts: plan.counts,
        failures: plan.failures,
        cursor: -1,
        startedAt: workflowInfo().startTime.toISOString(),
        ...(plan.removal ? { removal: plan.removal } : {}),
        ...(plan.impact ? { impact: plan.impact } : {}),
      };
      if (useSearchAttributes) {
        upsertSearchAttributes([
          { key: RelabelRevision, value: revision },
          { key: RelabelSite, value: plan.site },
          { key: RelabelStatus, value: dryRun ? RelabelStatusValue.dryRun : RelabelStatusValue.running },
        ]);
      }
    }
    const state = carried;
    const telemetry = runTelemetry({ run: state.run, revision: state.revision, site: state.site, dryRun });
    if (plan) telemetry.planned(plan);
    phase = RunPhase.applying;
    showProgress();

    const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
    // A fresh workflowInfo() each time: the copy taken at start never changes.
    const historyFull = () => {
      const info = workflowInfo();
      return info.historyLength >= MAX_HISTORY_EVENTS || info.historySize >= MAX_HISTORY_BYTES;
    };
    const { workflowId } = workflowInfo();
    let launched = 0;
    let more = !dryRun;
    while (more) {
      const page = await pendingNodes({ run: state.run, afterSeq: state.cursor, limit: PAGE_SIZE });
      more = page.length === PAGE_SIZE;
      for (const { seq, node } of page) {
        if (launched >= limit || historyFull()) {
          more = true;
          break;
        }
        await waitFor(() => !control.paused && running.size < state.concurrency);
        launched++;
        state.cursor = seq;
        running.add(node);
        showProgress();
        const child = () =>
          executeChild(relabelNode, {
            workflowId: `${workflowId}/${state.run}/${node}`,
            args: [{ run: state.run, node, revision: state.revision, searchAttributes: useSearchAttributes }],
            staticSummary: `Relabel ${node} at revision ${state.revision}`,
            staticDetails: `Run ${state.run} of ${workflowId}: brings node **${node}** to revision ${state.revision} of site ${state.site}.`,
            parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
            ...(useSearchAttributes ? { typedSearchAttributes: nodeSearchAttributes(node, state.revision) } : {}),
          });
        // Out of reach of a stop, a started node finishes: its row then says what was written.
        void (settles ? CancellationScope.nonCancellable(child) : child())
          .then(
            (r) => {
              state.counts.success++;
              if (r.written) state.counts.written++;
              telemetry.settled(node, r.written);
            },
            (err: unknown) => {
              const failure = { node, error: childFailure(err) };
              state.counts.failure++;
              sampleFailure(state.failures, failure);
              unrecorded.push(failure);
              telemetry.failed(failure);
            },
          )
          .finally(() => {
            running.delete(node);
            showProgress();
          });
      }
      if (launched >= limit || historyFull()) break;
    }
    started = !more;
    await waitFor(() => running.size === 0);
    await flush();

    if (more) await continueAsNew<typeof updateLabels>({ ...input, carried: carriedOn(state, control.paused) });

    phase = RunPhase.done;
    const c = state.counts;
    const result: UpdateLabelsResult = {
      status: runStatus(c.success, c.failure),
      run: state.run,
      revision: state.revision,
      site: state.site,
      dryRun,
      counts: c,
      failures: state.failures,
      ...(input.retryOf ? { retryOf: input.retryOf } : {}),
      ...(state.removal ? { removal: state.removal } : {}),
      ...(state.impact ? { impact: state.impact } : {}),
    };
    outcome.result = result;
    telemetry.finished(result);
    if (useSearchAttributes) upsertSearchAttributes([{ key: RelabelStatus, value: dryRun ? RelabelStatusValue.dryRun : result.status }]);
    await recordOutcome(state.run, result.status);
    setCurrentDetails(summaryMarkdown(result));
    return result;
  }
}
