/**
 * A fleet rollout's waves of sites: a canary (named sites, or the first few),
 * then the rest grouped by a site label's value if asked, each group in
 * waves of the given sizes (`3,4`: three sites, then four at a time) or of a
 * percentage of the fleet; and the gates between waves (approvals, how many
 * failed sites halt the fleet, how long a site whose worker is gone is
 * waited for). Pure: the options as the CLI writes them, their checks and
 * the assignment of sites to waves.
 */
import { ApprovalGate, type Parsed } from '../plan/waves.ts';
import { quote } from '../plan/text.ts';
import { MAX_FLEET_SITES, type FleetSite } from './sites.ts';

/** The first wave: these sites by name, or the first `count` sites in name order. */
export type FleetCanary = { count: number } | { sites: string[] };

/** The waves after the canary: sizes in turn (the last one repeating), or a percentage of the rollout's sites each. */
export type FleetWaveSizes = { sizes: number[] } | { percent: number };

/** How a fleet rollout goes, as asked. */
export interface FleetRollout {
  canary?: FleetCanary;
  waves?: FleetWaveSizes;
  /** Group the sites after the canary by this site label's value, each group in waves of its own (sorted by value; sites without it last). */
  by?: { label: string };
  /** Where the rollout waits for `approve` (default none). */
  approval?: ApprovalGate;
  /** Sites that may fail, over the whole rollout, before the fleet halts (default 0). */
  maxFailedSites?: number;
  /** Seconds a site whose worker is not polling is waited for before it is reported unreachable and counted failed (default {@link DEFAULT_SITE_WAIT_SECONDS}). */
  siteWaitSeconds?: number;
}

/** A fleet rollout with every default filled in. */
export interface EffectiveFleetRollout {
  canary?: FleetCanary;
  waves?: FleetWaveSizes;
  by?: { label: string };
  approval: ApprovalGate;
  maxFailedSites: number;
  siteWaitSeconds: number;
}

/** One wave: its name and its sites, in order. */
export interface FleetWave {
  name: string;
  sites: string[];
}

/** A site as a rollout sees it: its name and its labels. */
export interface WaveSite {
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** How long a site with no worker polling is waited for by default. */
export const DEFAULT_SITE_WAIT_SECONDS = 600;
/** Longest wait for a site's worker: a day. */
export const MAX_SITE_WAIT_SECONDS = 86_400;
/** Most sizes `--waves` lists. */
const MAX_SIZES = 100;

const isCount = (n: unknown, min: number, max: number) => typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;

/** Parses `--waves`: sizes in turn (`3,4`; the last repeats) or a percentage from 1 to 100 (`25%`). */
export function parseFleetWaveSizes(text: string): Parsed<FleetWaveSizes> {
  const s = text.trim();
  const percent = /^(\d{1,3})%$/.exec(s);
  if (percent && Number(percent[1]) >= 1 && Number(percent[1]) <= 100) return { ok: true, value: { percent: Number(percent[1]) } };
  const parts = s.split(',').map((p) => p.trim());
  if (parts.length <= MAX_SIZES && parts.every((p) => /^\d{1,6}$/.test(p) && Number(p) >= 1)) return { ok: true, value: { sizes: parts.map(Number) } };
  return {
    ok: false,
    message: `waves ${quote(s.slice(0, 80))}: expected site counts in turn (3,4: the last repeats; at most ${MAX_SIZES}) or a percentage from 1% to 100%`,
  };
}

/** Parses `--canary`: a count of sites (`1`) or site names (`edge-01,edge-02`). */
export function parseFleetCanary(text: string): Parsed<FleetCanary> {
  const s = text.trim();
  if (/^\d{1,6}$/.test(s) && Number(s) >= 1) return { ok: true, value: { count: Number(s) } };
  const sites = s.split(',').map((p) => p.trim());
  if (sites.length <= MAX_FLEET_SITES && sites.every((p) => p.length > 0)) return { ok: true, value: { sites } };
  return { ok: false, message: `canary ${quote(s.slice(0, 80))}: expected a number of sites or site names separated by commas` };
}

/** What is wrong with `rollout` (empty when it is valid). */
export function fleetRolloutErrors(rollout: FleetRollout): string[] {
  const errors: string[] = [];
  const { canary, waves, approval, maxFailedSites, siteWaitSeconds } = rollout;
  if (
    canary !== undefined &&
    !('count' in canary ? isCount(canary.count, 1, MAX_FLEET_SITES) : canary.sites.length > 0 && canary.sites.length <= MAX_FLEET_SITES)
  ) {
    errors.push('canary: expected a positive number of sites or site names');
  }
  if (waves !== undefined) {
    const ok =
      'percent' in waves
        ? isCount(waves.percent, 1, 100)
        : waves.sizes.length > 0 && waves.sizes.length <= MAX_SIZES && waves.sizes.every((n) => isCount(n, 1, MAX_FLEET_SITES));
    if (!ok) errors.push(`waves: expected 1 to ${MAX_SIZES} positive site counts, or a percentage from 1 to 100`);
  }
  if (approval !== undefined && !Object.values(ApprovalGate).includes(approval))
    errors.push(`approval: expected one of ${Object.values(ApprovalGate).join(', ')}`);
  if (maxFailedSites !== undefined && !isCount(maxFailedSites, 0, MAX_FLEET_SITES)) errors.push('max failed sites: expected a non-negative number');
  if (siteWaitSeconds !== undefined && !isCount(siteWaitSeconds, 0, MAX_SITE_WAIT_SECONDS))
    errors.push(`site wait: expected whole seconds from 0 to ${MAX_SITE_WAIT_SECONDS}`);
  return errors;
}

/** The rollout with its defaults. */
export function effectiveFleetRollout(rollout: FleetRollout): EffectiveFleetRollout {
  return {
    ...(rollout.canary !== undefined ? { canary: rollout.canary } : {}),
    ...(rollout.waves !== undefined ? { waves: rollout.waves } : {}),
    ...(rollout.by !== undefined ? { by: rollout.by } : {}),
    approval: rollout.approval ?? ApprovalGate.none,
    maxFailedSites: rollout.maxFailedSites ?? 0,
    siteWaitSeconds: rollout.siteWaitSeconds ?? DEFAULT_SITE_WAIT_SECONDS,
  };
}

/** Splits `sites` into chunks of the sizes in turn, the last size repeating; one chunk when no sizes are given. */
function chunks(sites: string[], waves: FleetWaveSizes | undefined, total: number): string[][] {
  if (waves === undefined) return sites.length > 0 ? [sites] : [];
  const sizes = 'percent' in waves ? [Math.max(1, Math.ceil((waves.percent * total) / 100))] : waves.sizes;
  const out: string[][] = [];
  for (let at = 0, k = 0; at < sites.length; k++) {
    const size = sizes[Math.min(k, sizes.length - 1)] ?? 1;
    out.push(sites.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * The waves of a rollout over `sites` (any order: they are taken in name
 * order): the canary first, then each group in chunks. Every site is in
 * exactly one wave; no wave is empty. A canary naming a site the rollout
 * does not cover is an error, as is one naming a site twice.
 */
export function assignFleetWaves(sites: readonly WaveSite[], rollout: EffectiveFleetRollout): Parsed<FleetWave[]> {
  const ordered = [...sites].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const known = new Set(ordered.map((s) => s.name));
  let canary: string[] = [];
  if (rollout.canary !== undefined && 'sites' in rollout.canary) {
    const unknown = rollout.canary.sites.filter((s) => !known.has(s));
    if (unknown.length > 0)
      return {
        ok: false,
        message: `canary: ${unknown.slice(0, 5).map(quote).join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}: not among the rollout's sites`,
      };
    canary = [...new Set(rollout.canary.sites)];
    if (canary.length < rollout.canary.sites.length) return { ok: false, message: 'canary: a site is named twice' };
  } else if (rollout.canary !== undefined) {
    canary = ordered.slice(0, rollout.canary.count).map((s) => s.name);
  }
  const inCanary = new Set(canary);
  const rest = ordered.filter((s) => !inCanary.has(s.name));
  const waves: FleetWave[] = canary.length > 0 ? [{ name: 'canary', sites: canary }] : [];
  const groups = groupSites(rest, rollout.by?.label);
  for (const group of groups) {
    const parts = chunks(group.sites, rollout.waves, ordered.length);
    parts.forEach((part, k) => waves.push({ name: parts.length > 1 ? `${group.name} (${k + 1}/${parts.length})` : group.name, sites: part }));
  }
  return { ok: true, value: waves };
}

/** Sites grouped by a label's value (sorted; those without it last), or one group `sites`. */
function groupSites(sites: readonly WaveSite[], label: string | undefined): FleetWave[] {
  if (label === undefined) return sites.length > 0 ? [{ name: 'sites', sites: sites.map((s) => s.name) }] : [];
  const groups = new Map<string, string[]>();
  const none: string[] = [];
  for (const site of sites) {
    const value = site.labels[label];
    if (value === undefined) none.push(site.name);
    else {
      const list = groups.get(value);
      if (list) list.push(site.name);
      else groups.set(value, [site.name]);
    }
  }
  const out = [...groups.keys()].sort().map((value) => ({ name: `${label}=${value}`, sites: groups.get(value) ?? [] }));
  if (none.length > 0) out.push({ name: `(no ${label})`, sites: none });
  return out;
}

/** Whether the gate after wave `index` (from 0) of `count` waits for an approval. */
export function fleetApprovalAfter(rollout: EffectiveFleetRollout, index: number, count: number): boolean {
  if (index >= count - 1) return false;
  return rollout.approval === ApprovalGate.each || (rollout.approval === ApprovalGate.first && index === 0);
}

/** Whether `failed` sites so far halt the fleet. */
export function fleetHalts(rollout: EffectiveFleetRollout, failed: number): boolean {
  return failed > rollout.maxFailedSites;
}

/**
 * The sites as a rollout's input carries them: each one's name, queue and
 * only the label the rollout groups by (none when it groups by none). A
 * site's labels are most of what its entry may hold (32 keys of up to 317
 * bytes), and a rollout reads one of them at most.
 */
export function rolloutSites(sites: readonly FleetSite[], rollout: FleetRollout): FleetSite[] {
  const by = rollout.by?.label;
  return sites.map((s) => ({
    name: s.name,
    taskQueue: s.taskQueue,
    labels: by !== undefined && Object.hasOwn(s.labels, by) ? { [by]: s.labels[by] as string } : {},
  }));
}
