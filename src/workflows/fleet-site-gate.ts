/**
 * A site run's side of a fleet rollout's halted gate: a run started by a
 * fleet rollout (its input names it) tells the rollout when it halts at one of its gates
 * (too many failed nodes, a health gate timing out) and when it goes on,
 * so that the fleet halts its wave with the site's reason instead of
 * waiting on a run no one at the centre can see is stuck. The fleet's
 * `resume` and `abort` come back as `fleetDecisionSignal`.
 * Runs of no fleet, and runs recorded before the patch, send
 * nothing.
 * Workflow code: deterministic.
 */
import { getExternalWorkflowHandle, isCancellation, patched, workflowInfo } from '@temporalio/workflow';
import { clip } from '../core/plan/text.ts';
import { MAX_SITE_REASON, siteGateSignal } from '../contracts/fleet-messages.ts';

/** The patch under which a fleet's site run signals its parent at a halt. */
export const FLEET_SITE_HALT_PATCH = 'fleet-site-halt';

/** Tells `fleet`, the fleet rollout whose site run this is, that the run halted (with why) or goes on; nothing without one. */
export async function tellFleet(fleet: string | undefined, halted: boolean, reason?: string): Promise<void> {
  if (fleet === undefined || !patched(FLEET_SITE_HALT_PATCH)) return;
  try {
    await getExternalWorkflowHandle(fleet).signal(siteGateSignal, {
      workflowId: workflowInfo().workflowId,
      halted,
      ...(reason !== undefined ? { reason: clip(reason, MAX_SITE_REASON) } : {}),
    });
  } catch (err) {
    // A fleet that has ended has no gate to halt; the run's own gate still waits for the site's operator.
    if (isCancellation(err)) throw err;
  }
}
