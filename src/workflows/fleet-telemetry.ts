/**
 * What a fleet rollout tells operators by site, from the centre: each
 * site's end counted once, by rollout, site and state, through the SDK's
 * workflow meter (replay-safe: nothing is counted while a workflow
 * replays, so a restarted centre worker counts no site twice). Each site's
 * own worker counts its run's nodes under the same `site` label
 * (`relabel_runs_total`, `relabel_nodes_written_total`...), so one
 * Prometheus over the centre and the sites shows the fleet by site.
 */
import { metricMeter } from '@temporalio/workflow';
import type { SiteOutcome } from '../contracts/fleet-messages.ts';

/** Names of the metrics counted here, as Prometheus shows them. */
export const FleetMetric = {
  sites: 'relabel_fleet_sites_total',
} as const;

/** Counts `outcome`'s site as ended in rollout `rollout`. Made inside the workflow: the meter exists only there. */
export function countSiteEnd(rollout: string, outcome: SiteOutcome): void {
  metricMeter
    .createCounter(FleetMetric.sites, undefined, 'Sites a fleet rollout ended, by rollout, site and state')
    .add(1, { rollout, site: outcome.site, state: outcome.state });
}
