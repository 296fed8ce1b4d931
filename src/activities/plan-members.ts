/**
 * Node-set members in the bulk planner: while the planner reads the
 * cluster's nodes (one LIST, or its GETs), each node no BaremetalNode of the
 * design names is classified with the pure membership rules
 * (`core/plan/node-sets.ts`). A node the run targets (named, or a member of
 * a set the run targets, or matched by two sets one of which it targets)
 * gets a row in the run; memberships of every set are counted from the
 * LIST, for the report and the policy's bound.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { hasNodeSets, memberEntry, membershipOf } from '../core/plan/node-sets.ts';
import { nodeWants, type JoinedWants, type PluginEntry } from '../core/plan/node-wants.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeState } from '../kube/nodes.ts';

/** What the planner does with a node of the cluster no BaremetalNode names. */
export type MemberDecision = { kind: 'member'; set: string } | { kind: 'conflict'; sets: string[] } | { kind: 'undesigned' };

/** The member side of one run's plan (see {@link createMemberPlanner}). */
export interface MemberPlanner {
  /** Whether the run targets a set, so it must LIST the cluster to find the members. */
  readonly lists: boolean;
  /** Whether a target the design does not name may be a member (the design has sets): it is decided once the node is read. */
  readonly maybeMembers: boolean;
  /** Members of each set of the design among the nodes read, by set name (0: it matched none). */
  readonly members: Record<string, number>;
  /** The sets whose members the run targets. */
  readonly targeted: ReadonlySet<string>;
  /**
   * Decides the nodes of one page the design does not name: those the run
   * targets, by name; `fresh` lists those not yet rows of the run (to add
   * before their results are written). `named`: targets of the run the
   * design does not name (taken from it as they are decided).
   */
  page(items: readonly NodeState[], named: Set<string>): { decisions: Map<string, MemberDecision>; fresh: string[] };
}

/**
 * The member planner of a run of `design` targeting the sets `nodeSets`
 * (besides its named targets). InvalidTargets (non-retryable) for a set
 * the design does not have.
 */
export function createMemberPlanner(design: Design, nodeSets: readonly string[] = []): MemberPlanner {
  const sets = new Set(nodeSets);
  for (const set of sets) {
    if (!Object.hasOwn(design.nodeSets ?? {}, set)) {
      throw ApplicationFailure.create({ type: FailureType.InvalidTargets, message: `the design has no node set ${set}`, nonRetryable: true });
    }
  }
  const members: Record<string, number> = Object.fromEntries(Object.keys(design.nodeSets ?? {}).map((name) => [name, 0]));
  const maybeMembers = hasNodeSets(design);
  return {
    lists: sets.size > 0,
    maybeMembers,
    members,
    targeted: sets,
    page(items, named) {
      const decisions = new Map<string, MemberDecision>();
      const fresh: string[] = [];
      if (!maybeMembers) return { decisions, fresh };
      for (const item of items) {
        if (Object.hasOwn(design.nodes, item.name)) continue;
        const membership = membershipOf(design, item);
        if (membership.kind === 'member') members[membership.set] = (members[membership.set] ?? 0) + 1;
        const byName = named.delete(item.name);
        const bySet =
          (membership.kind === 'member' && sets.has(membership.set)) || (membership.kind === 'conflict' && membership.sets.some((s) => sets.has(s)));
        if (!byName && !bySet) continue;
        if (!byName) fresh.push(item.name);
        decisions.set(item.name, membership.kind === 'member' || membership.kind === 'conflict' ? membership : { kind: 'undesigned' });
      }
      return { decisions, fresh };
    },
  };
}

/** What member `node` of `set` wants, as a node named by a BaremetalNode would (its plugin labels joined in). */
export function memberWants(design: Design, set: string, node: string, plugins: readonly PluginEntry[]): JoinedWants {
  const wants = nodeWants({ site: design.site, policy: design.policy, nodes: { [node]: memberEntry(design, set, node) } }, node, plugins);
  if (wants === undefined) throw new Error(`member ${node} of node set ${set} has no wants`);
  return wants;
}

/**
 * The sets of `targeted` with more members than the policy's bound
 * (`maxNodeSetMembers`; none without one), as words for the refusal:
 * `md-0 (120 nodes)`.
 */
export function setsOverBound(design: Design, members: Readonly<Record<string, number>>, targeted: ReadonlySet<string>): string[] {
  const bound = design.policy.maxNodeSetMembers;
  if (bound === undefined) return [];
  return Object.entries(members).flatMap(([set, n]) => (targeted.has(set) && n > bound ? [`${set} (${n} nodes)`] : []));
}
