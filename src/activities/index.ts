/**
 * relabel's activities: the only code that reads the revision store and talks
 * to the Kubernetes API. Built by {@link createActivities} from injected
 * clients; workflows import the resulting type only.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/failure-types.ts';
import { formatError } from '../core/site-error.ts';
import type { SitePolicy } from '../core/label-policy.ts';
import { runnableRevision } from '../store/revision-checks.ts';
import type { RevisionStore } from '../store/revision-store.ts';
import { createDesignCache, type DesignCache } from './design-cache.ts';
import { mapNodeError } from './kube-errors.ts';
import type { NodeApi, NodeState } from './kube-nodes.ts';

/** At most this many validation errors travel in a failure's details (all are counted). */
export const MAX_REPORTED_ERRORS = 200;

/** What an update run needs to know of its revision's design. */
export interface RunDesign {
  /** Site name (the design's region), or `default` when the site names none. */
  site: string;
  /** Targets present in the design, in the order given. */
  inDesign: string[];
  /** Targets absent from the design: per-node failures, never silent successes. */
  notInDesign: string[];
  /** The policy's default window of concurrent nodes. */
  defaultConcurrency: number;
}

/** One node's desired labels and the policy parts the planner needs. */
export interface NodeDesign {
  labels: Record<string, string>;
  policy: Pick<SitePolicy, 'reconcileOsArchAliases' | 'protectedKeys' | 'liftUninitializedTaint'>;
}

/** Injected clients. */
export interface ActivityDeps {
  nodes: NodeApi;
  store: RevisionStore;
  designs?: DesignCache;
}

/** Builds the activities over the given clients. */
export function createActivities(deps: ActivityDeps) {
  const { nodes, store } = deps;
  const designs = deps.designs ?? createDesignCache(store);

  async function validDesign(revision: number) {
    const result = await designs.get(revision);
    if (!result.ok) {
      const shown = result.errors.slice(0, MAX_REPORTED_ERRORS);
      throw ApplicationFailure.create({
        type: FailureType.DocumentValidationFailed,
        message: `revision ${revision} has ${result.errors.length} document error(s):\n${shown.map(formatError).join('\n')}`,
        nonRetryable: true,
        details: [{ revision, errorCount: result.errors.length, errors: shown }],
      });
    }
    return result.design;
  }

  return {
    /**
     * Resolves the revision a run applies: `revision` when given (it must
     * exist), else the latest committed one. Rejects with NoCommittedRevision,
     * RevisionNotFound or NoSiteActionRevision (no revision ever took part in
     * a site action). Reads only.
     */
    async resolveRevision(input: { revision?: number }): Promise<{ revision: number }> {
      const checked = await runnableRevision(store, input.revision);
      if (!checked.ok) throw ApplicationFailure.nonRetryable(checked.message, checked.type);
      return { revision: checked.revision };
    },

    /**
     * Validates the revision's documents (all-or-nothing; DocumentValidationFailed
     * lists every error) and splits `targets` into those in the design and not.
     */
    async loadRunDesign(input: { revision: number; targets: string[] }): Promise<RunDesign> {
      const design = await validDesign(input.revision);
      const inDesign: string[] = [];
      const notInDesign: string[] = [];
      for (const t of input.targets) (Object.hasOwn(design.nodes, t) ? inDesign : notInDesign).push(t);
      return { site: design.site ?? 'default', inDesign, notInDesign, defaultConcurrency: design.policy.defaultConcurrency };
    },

    /** The desired labels of one node at a revision; NodeNotInDesign when absent. */
    async nodeDesign(input: { revision: number; node: string }): Promise<NodeDesign> {
      const design = await validDesign(input.revision);
      const node = Object.hasOwn(design.nodes, input.node) ? design.nodes[input.node] : undefined;
      if (!node) {
        throw ApplicationFailure.nonRetryable(`node ${input.node} is not in the design of revision ${input.revision}`, FailureType.NodeNotInDesign);
      }
      const { reconcileOsArchAliases, protectedKeys, liftUninitializedTaint } = design.policy;
      return { labels: node.labels, policy: { reconcileOsArchAliases, protectedKeys, liftUninitializedTaint } };
    },

    /** Reads a Node's labels, annotations, taints and resourceVersion. */
    async readNode(input: { node: string }): Promise<NodeState> {
      try {
        return await nodes.readNode(input.node);
      } catch (err) {
        throw mapNodeError(err, input.node, 'read');
      }
    },

    /**
     * Sends one merge patch carrying label changes and the ownership record
     * together, guarded by the resourceVersion the plan was made from: a
     * concurrent writer makes it fail with Conflict (non-retryable here; the
     * workflow re-reads and re-plans), never overwrites. Returns the Node as
     * stored after the patch, for verification.
     */
    async applyLabelPlan(input: { node: string; patch: object }): Promise<NodeState> {
      try {
        return await nodes.patchNode(input.node, input.patch);
      } catch (err) {
        throw mapNodeError(err, input.node, 'patch');
      }
    },
  };
}

/** The activities' type, for `proxyActivities<Activities>()` in workflows. */
export type Activities = ReturnType<typeof createActivities>;
