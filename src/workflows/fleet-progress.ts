/**
 * What a fleet rollout shows: its progress Query's answer and the counts
 * and failure sample of its result, bounded whatever the number of sites.
 * Workflow code: deterministic.
 */
import { CARRIED_APPROVALS, FLEET_FAILURE_SAMPLE, SiteState, type FleetCounts, type FleetProgress, type SiteOutcome } from '../contracts/fleet-messages.ts';
import type { FleetState } from './fleet-control.ts';

/** Sites by state, with those running and those not started. */
export function fleetCounts(state: FleetState): FleetCounts {
  const counts: FleetCounts = { sites: state.sites, running: state.running.size, pending: 0, succeeded: 0, failed: 0, unreachable: 0, skipped: 0 };
  for (const ended of state.ended.values()) counts[ended]++;
  counts.pending = state.sites - state.ended.size - state.running.size;
  return counts;
}

/** Sites failed or unreachable so far, with those whose run is halted now. */
export function failedCount(state: FleetState): number {
  let failed = state.halted.size;
  for (const ended of state.ended.values()) if (ended === SiteState.failed || ended === SiteState.unreachable) failed++;
  return failed;
}

/** The failed and unreachable sites, at most {@link FLEET_FAILURE_SAMPLE}. */
export function failureSample(outcomes: Iterable<SiteOutcome>): SiteOutcome[] {
  const sample: SiteOutcome[] = [];
  for (const o of outcomes) {
    if (o.state !== SiteState.failed && o.state !== SiteState.unreachable) continue;
    sample.push(o);
    if (sample.length === FLEET_FAILURE_SAMPLE) break;
  }
  return sample;
}

/** Records how a site ended: its state, and its outcome while the failure sample has room. */
export function endSite(state: FleetState, outcome: SiteOutcome): void {
  state.halted.delete(outcome.site);
  state.ended.set(outcome.site, outcome.state);
  const failed = outcome.state === SiteState.failed || outcome.state === SiteState.unreachable;
  if (failed && state.failures.length < FLEET_FAILURE_SAMPLE) state.failures.push(outcome);
}

/** The running sites whose run is halted, with why, in name order. */
export function haltedSites(state: FleetState): { site: string; reason: string }[] {
  return [...state.halted].sort(([a], [b]) => (a < b ? -1 : 1)).map(([site, reason]) => ({ site, reason }));
}

/** The progress Query's answer. */
export function fleetProgress(state: FleetState): FleetProgress {
  const wave = state.waves[Math.min(state.wave, state.waves.length - 1)];
  return {
    name: state.name,
    rollout: state.rollout,
    wave: { index: state.wave, name: wave?.name ?? '', sites: wave?.sites.length ?? 0, count: state.waves.length },
    counts: fleetCounts(state),
    running: [...state.running].sort(),
    paused: state.paused,
    aborted: state.aborted,
    ...(state.waiting ? { waiting: state.waiting.gate, reason: state.waiting.reason } : {}),
    failures: state.failures,
    ...(state.halted.size > 0 ? { halted: haltedSites(state) } : {}),
    approvals: state.approvals.slice(-CARRIED_APPROVALS),
  };
}
