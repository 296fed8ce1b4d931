/**
 * The mass-removal brake: a run that would remove more than the policy's
 * `max_removal_fraction` of the labels relabel owns on its targets refuses
 * to start unless it is explicitly allowed to. A mistake in a base host
 * profile otherwise strips a label from every node inheriting it at once.
 *
 * Tallied node by node as the bulk planner plans them, in memory bounded by
 * the number of distinct label keys removed (at most
 * {@link MAX_TALLIED_KEYS}), never by the number of nodes.
 */
import { byText } from './label-plan.ts';

/** Removed keys an assessment names at most (the most removed first). */
export const MAX_LISTED_KEYS = 10;

/** Distinct removed keys tallied at most; further keys count only in the totals. */
export const MAX_TALLIED_KEYS = 10_000;

/** What a run would remove, against what the brake allows. Bounded whatever the number of nodes. */
export interface RemovalAssessment {
  /** Labels relabel owns (its record lists them and the node carries them) on the planned targets. */
  owned: number;
  /** Owned labels the run would remove. */
  removed: number;
  /** Nodes that would lose at least one label. */
  nodes: number;
  /** The most removed keys, with the number of nodes losing each: at most {@link MAX_LISTED_KEYS}. */
  keys: { key: string; nodes: number }[];
  /** Distinct removed keys beyond those listed. */
  moreKeys: number;
  /** The policy's `max_removal_fraction`. */
  maxFraction: number;
  /** Whether `removed` is more than `maxFraction` of `owned`: the brake refuses the run unless it is allowed. */
  exceeded: boolean;
}

/** Adds nodes' plans up into one {@link RemovalAssessment}. */
export function createRemovalTally(maxFraction: number) {
  let owned = 0;
  let removed = 0;
  let nodes = 0;
  let untallied = 0;
  const keys = new Map<string, number>();
  return {
    /** One planned node: how many labels it owns and the keys its plan removes. */
    add(ownedCount: number, removedKeys: readonly string[]): void {
      owned += ownedCount;
      removed += removedKeys.length;
      if (removedKeys.length > 0) nodes++;
      for (const key of removedKeys) {
        const n = keys.get(key);
        if (n !== undefined) keys.set(key, n + 1);
        else if (keys.size < MAX_TALLIED_KEYS) keys.set(key, 1);
        else untallied++;
      }
    },
    result(): RemovalAssessment {
      const ranked = [...keys].sort(([a, m], [b, n]) => n - m || byText(a, b));
      return {
        owned,
        removed,
        nodes,
        keys: ranked.slice(0, MAX_LISTED_KEYS).map(([key, count]) => ({ key, nodes: count })),
        moreKeys: Math.max(0, ranked.length - MAX_LISTED_KEYS) + (untallied > 0 ? 1 : 0),
        maxFraction,
        exceeded: removed > 0 && removed > maxFraction * owned,
      };
    },
  };
}

const percent = (part: number, whole: number) => (whole === 0 ? '0%' : `${Math.round((100 * part) / whole)}%`);

/**
 * The assessment in one bounded sentence: `would remove 40 of 48 owned
 * labels (83%) on 24 nodes, more than the policy's max_removal_fraction 0.5;
 * keys: a (24 nodes), b (16 nodes)`.
 */
export function describeRemoval(a: RemovalAssessment): string {
  const listed = a.keys.map((k) => `${k.key} (${k.nodes} node${k.nodes === 1 ? '' : 's'})`).join(', ');
  const more = a.moreKeys > 0 ? ` and ${a.moreKeys} more key${a.moreKeys === 1 ? '' : 's'}` : '';
  const verdict = a.exceeded ? 'more than' : 'within';
  return (
    `would remove ${a.removed} of ${a.owned} owned label${a.owned === 1 ? '' : 's'} (${percent(a.removed, a.owned)}) on ${a.nodes} node${a.nodes === 1 ? '' : 's'}, ` +
    `${verdict} the policy's max_removal_fraction ${a.maxFraction}${listed === '' ? '' : `; keys: ${listed}${more}`}`
  );
}

/** The refusal of a run the brake stops: what it would remove, that nothing was written, and how to go ahead. */
export function removalRefusal(a: RemovalAssessment, run: number): string {
  return (
    `mass-removal brake: run ${run} ${describeRemoval(a)}. Nothing was written. ` +
    'If this is intended, start the run again allowing it (relabel update-labels --allow-mass-removal; API: parameters.allow_mass_removal: true)'
  );
}
