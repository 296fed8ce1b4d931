/**
 * Drift detection in bulk: one paginated LIST of the nodes, every node of
 * the latest committed design classified in the worker against the
 * revision it carries and the latest one, the nodes not in sync written to
 * the store as a numbered report in batches. Writes no node.
 */
import { readAppliedRun, type AppliedRun } from '../core/plan/applied-run.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import { membershipOf } from '../core/plan/node-sets.ts';
import { memberWants } from './plan-members.ts';
import {
  carriedRevision,
  classifyDrift,
  classifyOrphan,
  driftText,
  emptyDriftCounts,
  DriftState,
  OrphanAction,
  type DriftAction,
  type DriftVerdict,
} from '../core/plan/drift.ts';
import type { Design } from '../core/site/validate-site.ts';
import { mapNodeError } from '../kube/errors.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { DriftNodeRow } from '../store/drift/drift-store.ts';
import type { Store } from '../store/store.ts';
import { DRIFT_SAMPLE_LIMIT, MAX_HEAL_GROUPS, type DriftDetection, type DriftSampleNode } from '../contracts/drift-messages.ts';

/** Nodes per LIST page, and rows per store write. */
export const DRIFT_PAGE_SIZE = 500;

/** Longest sample detail kept. */
const MAX_DETAIL = 300;

/** What detection works with. */
export interface DriftDeps {
  nodes: NodeApi;
  store: Store;
  designs: DesignCache;
  /** Called after each page, so a long detection heartbeats. */
  progress?(classified: number): void;
}

/**
 * What the revision a node carries (`design`) wanted of it when its run
 * wrote it: where the record names the set it was written as a member of,
 * that set's wants (none when the design has no such set); where it says it
 * was written as a named node (a record with a site and no set), the named
 * node's; a record from before records named them is read by membership,
 * as {@link wantsIn}.
 */
function carriedWantsIn(design: Design, node: string, observed: NodeState | null, record: AppliedRun | null, plugins: readonly PluginEntry[]) {
  if (record?.set !== undefined) return Object.hasOwn(design.nodeSets ?? {}, record.set) ? memberWants(design, record.set, node, plugins) : undefined;
  if (record?.site !== undefined) return nodeWants(design, node, plugins);
  return wantsIn(design, node, observed, plugins)?.wants;
}

/** The words of an orphaned or moved node's sample entry: where its record says it was written. */
function lastPlace(verdict: DriftVerdict): string | undefined {
  const where = verdict.set !== undefined ? `as a member of node set ${verdict.set}` : 'as a named node';
  if (verdict.state === DriftState.orphaned)
    return `no BaremetalNode names it and no node set matches it; last written by run ${verdict.run} at revision ${verdict.revision} ${where}`;
  if (verdict.state === DriftState.moved)
    return `written ${where} at revision ${verdict.revision}; the latest design puts it elsewhere (${verdict.changes ?? 0} change(s) to apply)`;
  return undefined;
}

/**
 * This site's orphans among the nodes listed: a node the latest design
 * does not hold whose applied-run record names this site is orphaned at
 * once; one whose record names no site (written before records named it)
 * is held until the LIST ends, and is this site's only if no node in the
 * cluster carries another site's record (the cluster is single-site).
 * Holds one small verdict per such node.
 */
function orphanFinder(site: string) {
  let mixed = false;
  const held: DriftVerdict[] = [];
  return {
    /** Looks at one listed node (`inDesign`: the latest design names it or a set matches it); its verdict when it is this site's orphan now. */
    see(node: NodeState, inDesign: boolean): DriftVerdict | null {
      const record = readAppliedRun(node.annotations);
      if (record === null) return null;
      if (record.site !== undefined && record.site !== site) mixed = true;
      if (inDesign) return null;
      if (record.site !== undefined) return classifyOrphan({ node: node.name, observed: node, site, siteless: false });
      const verdict = classifyOrphan({ node: node.name, observed: node, site, siteless: true });
      if (verdict) held.push(verdict);
      return null;
    },
    /** The held site-less orphans, once every node was seen: none when another site's records are in the cluster. */
    siteless(): DriftVerdict[] {
      return mixed ? [] : held;
    },
  };
}

/**
 * What `design` wants of `node`: a named node's wants, or a member's of its
 * node set (membership read from the node's labels as `observed`, and the
 * set named).
 */
function wantsIn(design: Design, node: string, observed: NodeState | null, plugins: readonly PluginEntry[]) {
  const named = nodeWants(design, node, plugins);
  if (named || observed === null) return named && { wants: named };
  const membership = membershipOf(design, observed);
  return membership.kind === 'member' ? { wants: memberWants(design, membership.set, node, plugins), set: membership.set } : undefined;
}

/** A node's row of the report and its entry in the sample, naming its node set when it is a member. */
function reportRow(seq: number, node: string, verdict: DriftVerdict, set: string | undefined): { row: DriftNodeRow; entry: DriftSampleNode } {
  const detail = {
    ...(verdict.run !== null ? { run: verdict.run } : {}),
    ...(verdict.keys ? { keys: verdict.keys } : {}),
    ...(verdict.changes !== undefined ? { changes: verdict.changes } : {}),
    ...(verdict.note ? { note: verdict.note } : {}),
    ...(verdict.set !== undefined ? { lastSet: verdict.set } : {}),
  };
  const nodeSet = set !== undefined ? { nodeSet: set } : {};
  const text = verdict.keys ? driftText(verdict.keys, 5) : (verdict.note ?? lastPlace(verdict));
  return {
    row: { seq, node, state: verdict.state, revision: verdict.revision, ...nodeSet, detail },
    entry: {
      node,
      state: verdict.state,
      revision: verdict.revision,
      ...nodeSet,
      ...(verdict.set !== undefined ? { lastSet: verdict.set } : {}),
      ...(text ? { detail: text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text } : {}),
    },
  };
}

/**
 * Classifies every node of `design` (revision `revision`, the latest
 * committed), and every member of its node sets in the cluster, and
 * records the report (see the module). Other nodes are not looked at. Idempotent on `key`: a retry rewrites the same
 * report.
 */
export async function detectDrift(deps: DriftDeps, input: { key: string; workflowId: string; revision: number; design: Design }): Promise<DriftDetection> {
  const { store, designs } = deps;
  const { revision, design } = input;
  const site = design.site;
  const action: DriftAction = design.policy.drift.action;
  const report = await store.drift.createReport({ key: input.key, site, revision, workflowId: input.workflowId, action });
  const counts = emptyDriftCounts();
  const drifted: DriftSampleNode[] = [];
  const others: DriftSampleNode[] = [];
  const byRevision = new Map<number, number>();
  // Designs of the revisions nodes carry, for this detection (a few at most in practice).
  const carried = new Map<number, Design | null>([[revision, design]]);
  const designOf = async (r: number): Promise<Design | null> => {
    if (!carried.has(r)) {
      const result = await designs.get(r).catch(() => null);
      carried.set(r, result?.ok ? result.design : null);
    }
    return carried.get(r) ?? null;
  };

  let rows: DriftNodeRow[] = [];
  let seq = 0;
  const flush = async (force: boolean) => {
    if (rows.length === 0 || (!force && rows.length < DRIFT_PAGE_SIZE)) return;
    await store.drift.addNodes(report.id, rows);
    rows = [];
  };
  // Plugin labels are wanted as runs applied them: the set the node's run pinned for the revision it
  // carries, and the site's newest set for the latest revision (the set a run started now would pin).
  const latestSet = (await store.plugins.latestSet(site))?.id ?? 0;
  const pinned = new Map<number, number>();
  const setOf = async (observed: NodeState | null): Promise<number> => {
    const run = observed ? readAppliedRun(observed.annotations)?.run : undefined;
    if (run === undefined) return 0;
    if (!pinned.has(run)) pinned.set(run, (await store.plugins.pinnedSet(run)) ?? 0);
    return pinned.get(run) ?? 0;
  };
  /** Each set's plugin labels of `nodes`, one store lookup per set. */
  const pluginLabels = async (sets: Iterable<number>, nodes: readonly string[]) => {
    const found = new Map<number, Map<string, PluginEntry[]>>();
    for (const set of sets) if (set !== 0 && !found.has(set) && nodes.length > 0) found.set(set, await store.plugins.labels(set, nodes));
    return (set: number, node: string) => found.get(set)?.get(node) ?? [];
  };

  const add = async (verdict: DriftVerdict, set: string | undefined) => {
    counts.total++;
    counts[verdict.state]++;
    if (verdict.state === DriftState.inSync) return;
    const { row, entry } = reportRow(seq++, verdict.node, verdict, set);
    rows.push(row);
    if (verdict.state === DriftState.drifted) {
      if (verdict.revision !== null) byRevision.set(verdict.revision, (byRevision.get(verdict.revision) ?? 0) + 1);
      if (drifted.length < DRIFT_SAMPLE_LIMIT) drifted.push(entry);
    } else if (others.length < DRIFT_SAMPLE_LIMIT) others.push(entry);
    await flush(false);
  };
  const record = async (node: string, observed: NodeState | null, plugins: (set: number, node: string) => PluginEntry[] = () => []) => {
    const latestIn = wantsIn(design, node, observed, plugins(latestSet, node));
    if (!latestIn) return;
    const latest = latestIn.wants;
    const r = carriedRevision(observed);
    const carriedDesign = r === null ? null : await designOf(r);
    const applied = observed ? readAppliedRun(observed.annotations) : null;
    const carried = carriedDesign ? carriedWantsIn(carriedDesign, node, observed, applied, plugins(await setOf(observed), node)) : undefined;
    await add(classifyDrift({ node, observed, latest, carried, ...(latestIn.set !== undefined ? { latestSet: latestIn.set } : {}) }), latestIn.set);
  };

  const unseen = new Set(Object.keys(design.nodes));
  const orphans = orphanFinder(site);
  try {
    for await (const page of deps.nodes.listNodes({ pageSize: DRIFT_PAGE_SIZE })) {
      // The design's named nodes, and the members of its node sets; the rest may be this site's orphans.
      const mine = page.filter((node) => unseen.delete(node.name) || membershipOf(design, node).kind !== 'none');
      const held = new Set(mine.map((node) => node.name));
      for (const node of page) {
        const orphan = orphans.see(node, held.has(node.name));
        if (orphan) await add(orphan, undefined);
      }
      const sets = [latestSet];
      for (const node of mine) sets.push(await setOf(node)); // one by one: each run's set is read once
      const plugins = await pluginLabels(
        sets,
        mine.map((node) => node.name),
      );
      for (const node of mine) await record(node.name, node, plugins);
      deps.progress?.(counts.total);
    }
  } catch (err) {
    throw mapNodeError(err, '(all)', 'list');
  }
  for (const orphan of orphans.siteless()) await add(orphan, undefined);
  for (const node of [...unseen].sort()) await record(node, null);
  await flush(true);
  await store.drift.finishReport(report.id, counts);

  const groups = [...byRevision.entries()].sort(([a], [b]) => a - b).map(([r, nodes]) => ({ revision: r, nodes }));
  const kept = groups.slice(0, MAX_HEAL_GROUPS);
  return {
    report: report.id,
    site,
    revision,
    action,
    counts,
    sample: [...drifted, ...others].slice(0, DRIFT_SAMPLE_LIMIT),
    groups: kept,
    ungrouped: groups.slice(MAX_HEAL_GROUPS).reduce((n, g) => n + g.nodes, 0),
    orphans: design.policy.drift.orphans ?? OrphanAction.keep,
  };
}

/** Every drifted node of `report` carrying `revision` (every node in `state`, without a revision), read a page at a time. */
export async function driftedNodes(store: Store, report: number, revision: number | undefined, state: DriftState = DriftState.drifted): Promise<string[]> {
  const names: string[] = [];
  for (let afterSeq = -1; ;) {
    const page = await store.drift.nodes(report, { states: [state], ...(revision !== undefined ? { revision } : {}), afterSeq, limit: 5000 });
    names.push(...page.map((r) => r.node));
    if (page.length < 5000) return names;
    afterSeq = page.at(-1)?.seq ?? afterSeq;
  }
}
