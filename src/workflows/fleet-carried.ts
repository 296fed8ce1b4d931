/**
 * What a fleet rollout carries across continue-as-new, and the state an
 * execution starts from: one letter per site and the failure sample, so the
 * carried input grows by a byte a site whatever each site's run reported.
 * Executions continued before that carried every ended site's outcome; they
 * are read as well. Workflow code: deterministic.
 */
import { CARRIED_APPROVALS, SITE_STATE_LETTER, type CarriedFleet, type FleetRolloutInput, type SiteState } from '../contracts/fleet-messages.ts';
import { effectiveFleetRollout, type FleetWave } from '../core/fleet/fleet-waves.ts';
import type { FleetState } from './fleet-control.ts';
import { failureSample } from './fleet-progress.ts';

/** The ended sites `carried` names, by site. */
function endedOf(input: FleetRolloutInput, carried: CarriedFleet): Map<string, SiteState> {
  const ended = new Map<string, SiteState>();
  if (carried.ended === undefined) {
    for (const o of carried.outcomes ?? []) ended.set(o.site, o.state);
    return ended;
  }
  const letters = carried.ended;
  const stateOfLetter = new Map(Object.entries(SITE_STATE_LETTER).map(([state, letter]) => [letter, state as SiteState | 'pending']));
  input.sites.forEach((site, i) => {
    const state = stateOfLetter.get(letters[i] ?? '-');
    if (state !== undefined && state !== 'pending') ended.set(site.name, state);
  });
  return ended;
}

/** A fresh state, or the one continue-as-new carried. */
export function stateOf(input: FleetRolloutInput, waves: FleetWave[]): FleetState {
  const carried: CarriedFleet = input.carried ?? { wave: 0, paused: false, approvals: [] };
  return {
    name: input.name,
    rollout: effectiveFleetRollout(input.rollout),
    waves,
    wave: carried.wave,
    ended: endedOf(input, carried),
    failures: carried.failures ?? failureSample(carried.outcomes ?? []),
    running: new Set(),
    children: new Map(),
    halted: new Map(),
    paused: carried.paused,
    aborted: false,
    approvals: carried.approvals,
    ...(carried.resumedAt !== undefined ? { resumedAt: carried.resumedAt } : {}),
    sites: input.sites.length,
  };
}

/** What the next execution goes on from. */
export function carry(state: FleetState, input: FleetRolloutInput): CarriedFleet {
  return {
    wave: state.wave,
    ended: input.sites.map((s) => SITE_STATE_LETTER[state.ended.get(s.name) ?? 'pending']).join(''),
    failures: state.failures,
    paused: state.paused,
    approvals: state.approvals.slice(-CARRIED_APPROVALS),
    ...(state.resumedAt !== undefined ? { resumedAt: state.resumedAt } : {}),
  };
}
