/**
 * The label plugin set an update run applies, and one node's labels in it.
 * A run pins its set once (the facade at its start, else its first plan);
 * every later read sees the same set, so each attempt and retry of the run
 * joins the same plugin labels with the documents'.
 */
import type { PluginEntry } from '../core/plan/node-wants.ts';
import type { Store } from '../store/store.ts';

/** Runs whose pinned set a worker remembers. */
const REMEMBERED_RUNS = 100;

/** Builds the lookups over `store`. */
export function createRunPluginLabels(store: Store) {
  // A run's pinned set never changes once pinned: each worker asks the store once per run.
  const pinnedSets = new Map<number, number>();

  return {
    /**
     * The set run `run` uses: the one it pinned, else (its first plan) the
     * site's newest, pinned now; 0 when the site has none (document labels
     * only).
     */
    async pinnedPluginSet(run: number, site: string): Promise<number> {
      const pinned = await store.plugins.pinnedSet(run);
      if (pinned !== null) return pinned;
      const latest = await store.plugins.latestSet(site);
      return store.plugins.pinRun(run, latest?.id ?? 0);
    },

    /** One node's labels from the run's plugin set (none before the set is pinned, or with set 0). */
    async nodePluginLabels(run: number, node: string): Promise<PluginEntry[]> {
      let set = pinnedSets.get(run) ?? null;
      if (set === null) {
        set = await store.plugins.pinnedSet(run);
        if (set !== null) {
          if (pinnedSets.size >= REMEMBERED_RUNS) pinnedSets.delete(pinnedSets.keys().next().value as number);
          pinnedSets.set(run, set);
        }
      }
      if (set === null || set === 0) return [];
      return (await store.plugins.labels(set, [node])).get(node) ?? [];
    },
  };
}
