/**
 * Releasing a node: taking back everything relabel's records say it wrote
 * there, and the records, so the node is as if relabel had never managed
 * it. A release is an update run whose plan for each target wants nothing
 * (see {@link releaseWants}): every label in the owned-labels record the
 * node carries, every annotation in owned-annotations and every taint in
 * owned-taints is removed, the three records with them (each is written
 * empty, that is removed), and the applied-run record is removed in the
 * same guarded patch. Nothing else is touched; keys the policy protects
 * stay, as in every run.
 *
 * Only a node carrying this site's applied-run record, that the latest
 * design neither names nor puts in a node set, is released: a node the
 * design holds would get everything back from the next run.
 */
import { isSiteRecord, readAppliedRun } from './applied-run.ts';
import { readOwnedLabels } from './owned-labels.ts';
import { runAudit, StartedVia, type RunAudit } from './run-audit.ts';
import type { PlanPolicy } from './label-plan.ts';
import type { JoinedWants } from './node-wants.ts';
import type { ObservedNode } from './drift.ts';

/** The action name release runs carry in their memo and audit. */
export const RELEASE_ACTION = 'release_nodes';

/** What a released node wants: nothing, so the plan removes all it owns. */
export function releaseWants<P extends PlanPolicy>(policy: P): JoinedWants<P> {
  return { labels: {}, annotations: {}, taints: [], policy, conflicts: [], plugins: {} };
}

/** How the latest design holds a node: named by a BaremetalNode, a member of a set, or not at all. */
export type DesignHold = { kind: 'named' } | { kind: 'member'; set: string } | { kind: 'conflict'; sets: string[] } | { kind: 'none' };

/**
 * Why `node` may not be released, in words naming it, or null when it may:
 * it must be in the cluster (`observed`), carry an applied-run record of
 * `site` (a record without a site counts when `siteless`; see
 * `isSiteRecord`), and the latest design (revision `revision`) must not
 * hold it. Pure.
 */
export function releaseRefusal(input: {
  node: string;
  observed: ObservedNode | null;
  site: string;
  siteless: boolean;
  hold: DesignHold;
  revision: number;
}): string | null {
  const { node, observed, site, hold, revision } = input;
  if (observed === null) return `node ${node} is not in the cluster`;
  const record = readAppliedRun(observed.annotations);
  if (record === null) return `node ${node} carries no applied-run record of relabel: nothing on it is relabel's to release`;
  if (!isSiteRecord(record, site, input.siteless)) {
    const whose = record.site === undefined ? 'a record that names no site, in a cluster holding other sites’ records' : `the record of site ${record.site}`;
    return `node ${node} carries ${whose}, not site ${site}'s: it is not this site's to release`;
  }
  if (hold.kind === 'named')
    return `node ${node} is named by a BaremetalNode of revision ${revision}: take it out of the documents first (the next run would write it again)`;
  if (hold.kind === 'member')
    return `node ${node} is a member of node set ${hold.set} in revision ${revision}: change its labels or the selector first (the next run would write it again)`;
  if (hold.kind === 'conflict') return `node ${node} is matched by node sets ${hold.sets.join(', ')} in revision ${revision}: it is not orphaned`;
  return null;
}

/** The owned labels a node carries (entries of its owned-labels record that name one of its labels): what the removal brake weighs. */
export function ownedLabelsPresent(observed: Pick<ObservedNode, 'labels' | 'annotations'>): number {
  return readOwnedLabels(observed.annotations).owned.filter((key) => Object.hasOwn(observed.labels, key)).length;
}

/**
 * Whether a node carries a record of `site` at all (the denominator of a
 * release's removal brake counts the owned labels of every such node).
 */
export function isSiteNode(observed: Pick<ObservedNode, 'annotations'>, site: string, siteless: boolean): boolean {
  const record = readAppliedRun(observed.annotations);
  return record !== null && isSiteRecord(record, site, siteless);
}

/**
 * Who a release run started by a drift detection records, as a heal run
 * does (see `healAudit`), via `release`: `schedule:<id>` for the site's
 * Schedule, the person for anyone else, `workflow:<workflowId>` when the
 * detection says nothing of who started it.
 */
export function releaseAudit(detection: RunAudit | undefined, workflowId: string): RunAudit {
  if (detection === undefined) return runAudit(`workflow:${workflowId}`, StartedVia.release);
  return runAudit(detection.via === StartedVia.schedule ? `schedule:${detection.by}` : detection.by, StartedVia.release);
}
