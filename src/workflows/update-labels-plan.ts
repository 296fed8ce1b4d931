/**
 * The first step of `updateLabels`: resolve the revision, register the
 * run's targets (when given inline) and plan every target in bulk, each
 * rejection a non-retryable ApplicationFailure that writes no node.
 * Workflow code: deterministic; the order of its activities is part of
 * every recorded history.
 */
import { ApplicationFailure, proxyActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { FailureType } from '../core/plan/failure-types.ts';
import { normalizeTargets } from '../core/plan/targets.ts';
import type { Activities } from '../activities/index.ts';
import type { RunPlan } from '../activities/plan-run.ts';
import type { PlannedWaves } from '../activities/wave-activities.ts';
import { MAX_INLINE_TARGETS, RunPhase, type CarriedProgress, type UpdateLabelsInput } from '../contracts/messages.ts';
import { bookkeeping, rejectingRun, scheduledAudit } from './run-record.ts';
import { RelabelRevision, RelabelSite, RelabelStatus, RelabelStatusValue } from '../contracts/search-attributes.ts';
import type { UpdateRun } from './update-labels-run.ts';

/** Upper bound on the window, whatever is asked (Temporal allows 2,000 pending children). */
export const MAX_CONCURRENCY = 1000;

const { registerRun } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
});

const { planRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'validate the documents, read the target nodes in bulk and plan each',
});

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

/** What {@link resolveAndPlan} gives the window: the bulk plan and the state the run goes on from. */
export interface PlannedRun {
  /** The bulk plan's outcome (counts, failure sample, removal assessment, waves). */
  plan: RunPlan & { waves?: PlannedWaves };
  /** The run's carried state, also set as `run.carried`. */
  state: CarriedProgress;
}

/**
 * Resolves the revision, registers the run and plans it: on return
 * `run.carried` holds the plan's counts and failure sample, the window and
 * a cursor before the first node, and the run's search attributes name its
 * revision and site. Rejects (non-retryable, nothing written) on invalid
 * targets, before anything else as Shipyard checks target_nodes first,
 * then on whatever `resolveRevision` and `planRun` reject (the run's
 * outcome recorded `rejected` once its number is known).
 */
export async function resolveAndPlan(run: UpdateRun): Promise<PlannedRun> {
  const { input, dryRun } = run;
  setCurrentDetails('Resolving the revision');
  if (input.run === undefined) {
    const parsed = normalizeTargets(input.targets);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.message, FailureType.InvalidTargets);
  }
  const { revision } = await rejectingRun(input.run, bookkeeping().resolveRevision({ revision: input.revision }));
  const number = await runOf(input, revision);
  // Known from here on: a stop during planning settles this run's nodes.
  run.runNumber = number;
  run.phase = RunPhase.planning;
  setCurrentDetails(`Planning run ${number}: validating revision ${revision} and reading the target nodes`);
  const plan = await rejectingRun(
    number,
    planRun({
      run: number,
      revision,
      dryRun,
      ...(input.allowMassRemoval ? { allowMassRemoval: true } : {}),
      ...(input.rollout ? { rollout: input.rollout } : {}),
      ...(input.nodeSets ? { nodeSets: input.nodeSets } : {}),
      ...(input.release ? { release: true } : {}),
    }),
  );
  const concurrency = Math.min(MAX_CONCURRENCY, Math.max(1, input.concurrency ?? plan.defaultConcurrency));
  const state: CarriedProgress = {
    run: number,
    revision,
    site: plan.site,
    concurrency,
    counts: plan.counts,
    failures: plan.failures,
    cursor: -1,
    startedAt: workflowInfo().startTime.toISOString(),
    ...(plan.removal ? { removal: plan.removal } : {}),
    ...(plan.impact ? { impact: plan.impact } : {}),
    ...(plan.waves ? { waves: { count: plan.waves.count, index: 0, rollout: plan.waves.rollout, failedBefore: plan.counts.failure } } : {}),
  };
  run.carried = state;
  if (run.useSearchAttributes) {
    upsertSearchAttributes([
      { key: RelabelRevision, value: revision },
      { key: RelabelSite, value: plan.site },
      { key: RelabelStatus, value: dryRun ? RelabelStatusValue.dryRun : RelabelStatusValue.running },
    ]);
  }
  return { plan, state };
}
