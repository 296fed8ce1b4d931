/**
 * The sites of a fleet, as the fleet registry holds them: a name, the task
 * queue that site's worker polls (the only way work reaches the site: the
 * centre holds no kubeconfig), and labels (region, type…) that rollouts
 * group and select sites by. Pure: the entries' rules and their checks.
 */
import { labelKeyErrors, labelValueErrors } from '../plan/label-syntax.ts';
import { quote } from '../plan/text.ts';

/** One site of the fleet. */
export interface FleetSite {
  /** The site's name: its documents' `drydock/Region/v1` name. */
  name: string;
  /** The Temporal task queue the site's worker polls. */
  taskQueue: string;
  /** What rollouts group and select sites by (`region`, `type`…), as Kubernetes labels are written. */
  labels: Record<string, string>;
}

/**
 * Most sites one fleet holds: a rollout's waves and a fleet plan's sums stay
 * bounded by it. A rollout's input carries every site it covers (name,
 * queue, the label it groups by: at most about 690 bytes of JSON each), so
 * 1,000 sites of the longest names are about 0.7 MB, well inside Temporal's
 * 2 MB payload limit; 5,000 would be past it.
 */
export const MAX_FLEET_SITES = 1000;
/** Most labels one site carries. */
export const MAX_SITE_LABELS = 32;
/** Longest site name: a DNS label, as a Drydock region names a Kubernetes cluster. */
const MAX_SITE_NAME = 63;
/** Longest task queue name: Temporal's own limit is larger; this keeps a fleet's records small. */
const MAX_TASK_QUEUE = 200;

const SITE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TASK_QUEUE = /^[\x21-\x7e]+$/;

/** The task queue of a site whose registration names none: one queue per site, named after it. */
export function defaultTaskQueue(site: string): string {
  return `relabel-${site}`;
}

/** What is wrong with a site name (empty when it is valid). */
export function siteNameErrors(name: unknown): string[] {
  if (typeof name !== 'string' || name.length === 0) return ['site name: expected a non-empty string'];
  if (name.length > MAX_SITE_NAME || !SITE_NAME.test(name)) {
    return [`site name ${quote(name)}: expected at most ${MAX_SITE_NAME} lower-case letters, digits and '-', starting and ending with a letter or digit`];
  }
  return [];
}

/** What is wrong with a site entry (empty when it is valid), each message naming the site and the field. */
export function fleetSiteErrors(site: FleetSite): string[] {
  const errors = siteNameErrors(site.name);
  const who = errors.length === 0 ? `site ${site.name}` : 'site';
  if (typeof site.taskQueue !== 'string' || site.taskQueue.length === 0 || site.taskQueue.length > MAX_TASK_QUEUE || !TASK_QUEUE.test(site.taskQueue)) {
    errors.push(`${who}: task queue ${quote(site.taskQueue)}: expected 1 to ${MAX_TASK_QUEUE} printable characters, no spaces`);
  }
  const entries = Object.entries(site.labels);
  if (entries.length > MAX_SITE_LABELS) errors.push(`${who}: ${entries.length} labels: at most ${MAX_SITE_LABELS}`);
  for (const [key, value] of entries.slice(0, MAX_SITE_LABELS)) {
    for (const e of labelKeyErrors(key)) errors.push(`${who}: label key ${quote(key)}: ${e}`);
    for (const e of labelValueErrors(value)) errors.push(`${who}: label ${key}: value ${quote(value)}: ${e}`);
  }
  return errors;
}

/**
 * What is wrong with a whole fleet: each site's own errors, a name or a
 * task queue used twice (two sites on one queue would let one site's
 * worker take the other's work), and more sites than {@link MAX_FLEET_SITES}.
 */
export function fleetErrors(sites: readonly FleetSite[]): string[] {
  if (sites.length > MAX_FLEET_SITES) return [`${sites.length} sites: a fleet holds at most ${MAX_FLEET_SITES}`];
  const errors = sites.flatMap(fleetSiteErrors);
  const names = new Map<string, number>();
  const queues = new Map<string, string>();
  for (const site of sites) {
    names.set(site.name, (names.get(site.name) ?? 0) + 1);
    const other = queues.get(site.taskQueue);
    if (other !== undefined && other !== site.name) errors.push(`site ${site.name}: task queue ${site.taskQueue} is already site ${other}'s`);
    else queues.set(site.taskQueue, site.name);
  }
  for (const [name, count] of names) if (count > 1) errors.push(`site ${name}: registered ${count} times`);
  return errors;
}
