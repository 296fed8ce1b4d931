/**
 * Fleet sites as large as the registry takes them: the longest site name
 * (63), task queue (200) and 32 labels of the longest key (a 253-character
 * prefix and a 63-character name) and value (63). What a fleet rollout's
 * payloads are sized against.
 */
import { MAX_SITE_LABELS, type FleetSite } from '../../../src/core/fleet/sites.ts';

/** A DNS subdomain of 253 characters: three labels of 63 and one of 61. */
const PREFIX = ['a', 'b', 'c'].map((c) => c.repeat(63)).join('.') + '.' + 'd'.repeat(61);

/** The `j`-th (from 0) label key of a maximal site: 317 characters. */
export const maximalLabelKey = (j: number): string => `${PREFIX}/k${String(j).padStart(2, '0')}${'n'.repeat(60)}`;

/** Site `i` (from 0) with the longest name, queue and labels; `queue` gives a short queue of a served site instead. */
export function maximalSite(i: number, queue?: string): FleetSite {
  const n = String(i).padStart(5, '0');
  return {
    name: `${'s'.repeat(58)}${n}`,
    taskQueue: queue ?? `q${n}${'x'.repeat(194)}`,
    labels: Object.fromEntries(Array.from({ length: MAX_SITE_LABELS }, (_, j) => [maximalLabelKey(j), `${'v'.repeat(61)}${String(i % 4).padStart(2, '0')}`])),
  };
}

/** `count` maximal sites. */
export const maximalSites = (count: number): FleetSite[] => Array.from({ length: count }, (_, i) => maximalSite(i));
