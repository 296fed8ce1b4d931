/**
 * `detectDrift`: finds the nodes of a site that are no longer as relabel
 * left them, and, when the site's label policy says `drift: {action: heal}`,
 * starts a normal update run restoring them to the revision each carries
 * (one run per revision, one after the other). Started by the site's
 * Temporal Schedule or by `relabel drift`.
 *
 * Bounded by design: the per-node report lives in the store under its
 * report number; this workflow carries counts, a capped sample and at most
 * {@link MAX_HEAL_GROUPS} heal runs.
 */
import { proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { DriftAction } from '../core/plan/drift.ts';
import { auditFrom, healAudit } from '../core/plan/run-audit.ts';
import type { Activities } from '../activities/index.ts';
import type { DetectDriftInput, DetectDriftResult, DriftDetection, HealOutcome } from '../contracts/drift-messages.ts';
import { rejectionOf } from './failure.ts';
import { scheduledAudit } from './run-record.ts';

const { detectDrift: detect } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'read every node in bulk and classify it against the revision it carries and the latest',
});
const { startHealRun, recordHeal } = proxyActivities<Activities>({
  startToCloseTimeout: '5m',
  retry: { maximumInterval: '10s' },
});
const { awaitRun } = proxyActivities<Activities>({
  startToCloseTimeout: '24h',
  heartbeatTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'wait for the heal run to end',
});

/** A rejecting activity's non-retryable failure as the workflow's own, its type and details on top. */
async function rejecting<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw rejectionOf(err) ?? err;
  }
}

/** The counts in one line, for the Temporal UI. */
export function countsLine(d: Pick<DriftDetection, 'counts' | 'revision' | 'site' | 'report'>): string {
  const c = d.counts;
  return `site ${d.site}, revision ${d.revision}, report ${d.report}: ${c.drifted} drifted, ${c.pending} pending, ${c.unmanaged} unmanaged, ${c.missing} missing, ${c.in_sync} in sync of ${c.total}`;
}

/**
 * Detects drift on the store's site and, with the policy's `heal`, heals
 * it. Rejects (non-retryable) with NoCommittedRevision,
 * DocumentValidationFailed, or InvalidArgument for a site that is not the
 * store's. A heal that meets a run of the site already going is skipped
 * and says so in `heal.skipped`; the next detection tries again. Heal
 * runs record who started them (via `heal`, by the Schedule or the person
 * that started the detection: see `healAudit`).
 */
export async function detectDrift(input: DetectDriftInput = {}): Promise<DetectDriftResult> {
  const info = workflowInfo();
  setCurrentDetails('Reading the nodes and classifying each');
  const found = await rejecting(
    detect({ ...(input.site !== undefined ? { site: input.site } : {}), key: `${info.workflowId}/${info.firstExecutionRunId}`, workflowId: info.workflowId }),
  );
  setCurrentDetails(`**detected** ${countsLine(found)}`);
  if (found.action !== DriftAction.heal || found.groups.length === 0) return found;

  const heal: HealOutcome = { runs: [] };
  // Heal runs write nodes: each records what started this detection (only an activity input changed, no command).
  const audit = healAudit(auditFrom(input.audit) ?? scheduledAudit(), info.workflowId);
  for (const group of found.groups) {
    setCurrentDetails(`**healing** ${group.nodes} node(s) of revision ${group.revision}; ${countsLine(found)}`);
    const started = await startHealRun({ report: found.report, revision: group.revision, audit });
    if ('skipped' in started) {
      heal.skipped = `healing of revision ${group.revision} not started: ${started.skipped}`;
      break;
    }
    const ended = await awaitRun({ workflowId: started.workflowId, runId: started.runId });
    heal.runs.push({ revision: group.revision, nodes: started.nodes, workflowId: started.workflowId, runId: started.runId, run: started.run, ...ended });
  }
  if (!heal.skipped && found.ungrouped > 0) heal.skipped = `${found.ungrouped} drifted node(s) of further revisions wait for the next detection`;
  await recordHeal({ report: found.report, heal });
  const healed = heal.runs.map((r) => `run ${r.run} (revision ${r.revision}, ${r.nodes} node(s)): ${r.status}`).join('; ');
  setCurrentDetails(`**healed** ${healed || 'nothing'}${heal.skipped ? `\n\n${heal.skipped}` : ''}\n\n${countsLine(found)}`);
  return { ...found, heal };
}
