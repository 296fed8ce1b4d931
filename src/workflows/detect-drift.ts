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
import { patched, proxyActivities, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { DriftAction, OrphanAction } from '../core/plan/drift.ts';
import { releaseAudit } from '../core/plan/release.ts';
import { auditFrom, healAudit, type RunAudit } from '../core/plan/run-audit.ts';
import type { Activities } from '../activities/index.ts';
import type { DetectDriftInput, DetectDriftResult, DriftDetection, HealOutcome, ReleaseOutcome } from '../contracts/drift-messages.ts';
import { rejectionOf } from './failure.ts';
import { scheduledAudit } from './run-record.ts';

const { detectDrift: detect } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '60s',
  retry: { maximumInterval: '10s' },
  summary: 'read every node in bulk and classify it against the revision it carries and the latest',
});
const { startHealRun, startReleaseRun, recordHeal } = proxyActivities<Activities>({
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
  const left = (c.orphaned ?? 0) > 0 || (c.moved ?? 0) > 0 ? `, ${c.moved ?? 0} moved, ${c.orphaned ?? 0} orphaned` : '';
  return `site ${d.site}, revision ${d.revision}, report ${d.report}: ${c.drifted} drifted, ${c.pending} pending, ${c.unmanaged} unmanaged, ${c.missing} missing${left}, ${c.in_sync} in sync of ${c.total}`;
}

/** Heals each group of drifted nodes with a run against its revision, one after the other (see {@link detectDrift}). */
async function healGroups(found: DriftDetection, audit: RunAudit): Promise<HealOutcome> {
  const heal: HealOutcome = { runs: [] };
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
  return heal;
}

/** Releases the orphaned nodes of the report with one run at the latest revision, and waits for it. */
async function releaseOrphans(found: DriftDetection, audit: RunAudit): Promise<ReleaseOutcome> {
  setCurrentDetails(`**releasing** ${found.counts.orphaned} orphaned node(s); ${countsLine(found)}`);
  const started = await startReleaseRun({ report: found.report, revision: found.revision, audit });
  if ('skipped' in started) return { skipped: `release of the orphaned nodes not started: ${started.skipped}` };
  const ended = await awaitRun({ workflowId: started.workflowId, runId: started.runId });
  return { run: { revision: found.revision, nodes: started.nodes, workflowId: started.workflowId, runId: started.runId, run: started.run, ...ended } };
}

/**
 * Detects drift on the store's site and, with the policy's `heal`, heals
 * it; with the policy's `orphans: release`, then releases the orphaned
 * nodes (one run over all of them, see `core/plan/release.ts`). Rejects
 * (non-retryable) with NoCommittedRevision, DocumentValidationFailed, or
 * InvalidArgument for a site that is not the store's. A heal or release
 * that meets a run of the site already going is skipped and says so in
 * `heal.skipped` or `release.skipped`; the next detection tries again.
 * Heal and release runs record who started them (via `heal` or
 * `release`, by the Schedule or the person that started the detection:
 * see `healAudit`, `releaseAudit`).
 */
export async function detectDrift(input: DetectDriftInput = {}): Promise<DetectDriftResult> {
  const info = workflowInfo();
  setCurrentDetails('Reading the nodes and classifying each');
  const found = await rejecting(
    detect({ ...(input.site !== undefined ? { site: input.site } : {}), key: `${info.workflowId}/${info.firstExecutionRunId}`, workflowId: info.workflowId }),
  );
  setCurrentDetails(`**detected** ${countsLine(found)}`);
  const healing = found.action === DriftAction.heal && found.groups.length > 0;
  // Detections before `release-orphans` never released: their histories replay without the marker.
  const releasing = found.orphans === OrphanAction.release && (found.counts.orphaned ?? 0) > 0 && patched('release-orphans');
  if (!healing && !releasing) return found;

  // Heal and release runs write nodes: each records what started this detection (only an activity input changed, no command).
  const by = auditFrom(input.audit) ?? scheduledAudit();
  const heal = healing ? await healGroups(found, healAudit(by, info.workflowId)) : { runs: [] };
  const release = releasing ? await releaseOrphans(found, releaseAudit(by, info.workflowId)) : undefined;
  const outcome: HealOutcome = release ? { ...heal, release } : heal;
  await recordHeal({ report: found.report, heal: outcome });
  const healed = heal.runs.map((r) => `run ${r.run} (revision ${r.revision}, ${r.nodes} node(s)): ${r.status}`).join('; ');
  const released = release
    ? `\n\n**released** ${release.run ? `run ${release.run.run} (${release.run.nodes} node(s)): ${release.run.status}` : release.skipped}`
    : '';
  setCurrentDetails(`**healed** ${healed || 'nothing'}${heal.skipped ? `\n\n${heal.skipped}` : ''}${released}\n\n${countsLine(found)}`);
  return { ...found, heal: outcome, ...(release ? { release } : {}) };
}
