/**
 * Label plugin sets, kept beside the runs so that 50,000 nodes' plugin
 * labels never travel in a Temporal payload. A poll that finds good output
 * stores a numbered **set**: per plugin, its labels by node (a row per node
 * and plugin, looked up per node or paged). A plugin whose poll failed keeps
 * its last good labels: the new set copies them from the set before. Each
 * run pins the set it uses, so every attempt and retry of it sees the same
 * labels. The last poll of every plugin is kept as its **status**.
 */
import type { PluginEntry } from '../../core/plan/node-wants.ts';
import type { PluginLabels } from '../../core/site/plugin-output.ts';

/** Sets of a site kept besides those a run pinned: the newest ones. */
export const KEPT_PLUGIN_SETS = 3;

/** Most nodes one {@link PluginStore.labels} call looks up. */
export const MAX_PLUGIN_LOOKUP = 5000;

/** A plugin's fresh output in a new set. */
export interface FreshPluginPart {
  plugin: string;
  /** Digest of the plugin's labels (the activity's; compared, never interpreted). */
  digest: string;
  polledAt: Date;
  labels: PluginLabels;
}

/** A plugin whose poll failed: its labels are copied from set `carryFrom`, where it must be. */
export interface CarriedPluginPart {
  plugin: string;
  carryFrom: number;
}

/** What {@link PluginStore.saveSet} stores. */
export interface SavePluginSetInput {
  site: string;
  /** Digest of the whole set (every part's digest, by plugin). */
  digest: string;
  parts: readonly (FreshPluginPart | CarriedPluginPart)[];
}

/** One plugin's part of a set. */
export interface PluginSetPlugin {
  plugin: string;
  digest: string;
  /** When the output in this part was read. */
  polledAt: Date;
  nodes: number;
  labels: number;
}

/** A stored set, without its labels. */
export interface PluginSetRecord {
  /** 1, 2, 3 … across the store. */
  id: number;
  site: string;
  createdAt: Date;
  digest: string;
  /** Sorted by plugin name. */
  plugins: PluginSetPlugin[];
}

/** One row of a set: one plugin's labels for one node. */
export interface PluginSetRow {
  node: string;
  plugin: string;
  labels: Record<string, string>;
}

/** The outcome of one plugin's last poll. */
export interface PluginStatusUpdate {
  plugin: string;
  ok: boolean;
  /** Why the poll failed (bounded by the caller). */
  error?: string;
  /** The set holding this output (good polls). */
  set?: number;
  nodes?: number;
  labels?: number;
}

/** A plugin's status: its last poll and its last good one. */
export interface PluginStatusRow {
  site: string;
  plugin: string;
  polledAt: Date;
  ok: boolean;
  error: string | null;
  lastGoodAt: Date | null;
  /** The newest set holding its last good output, or null (never good). */
  lastGoodSet: number | null;
  nodes: number | null;
  labels: number | null;
}

/**
 * The plugin part of the store. Every method is atomic. InvalidArgument for
 * bad input (StoreError), the driver's error for I/O failures.
 */
export interface PluginStore {
  /**
   * Stores a new set for `site` (id: the next number), then forgets the
   * site's sets that are neither among the {@link KEPT_PLUGIN_SETS} newest
   * nor pinned by a run. InvalidArgument when a carried plugin is not in
   * its `carryFrom` set, or for a bad name.
   */
  saveSet(input: SavePluginSetInput): Promise<PluginSetRecord>;
  /** The newest set of `site`, or null. */
  latestSet(site: string): Promise<PluginSetRecord | null>;
  /** One set, or null when there is none with that id. */
  getSet(id: number): Promise<PluginSetRecord | null>;
  /**
   * The plugin labels of `nodes` (at most {@link MAX_PLUGIN_LOOKUP}) in set
   * `id`: for each node with any, its entries sorted by plugin.
   */
  labels(id: number, nodes: readonly string[]): Promise<Map<string, PluginEntry[]>>;
  /** A page of a set's rows in (node, plugin) order, after `after`; `limit` 1 to 5,000. */
  rows(id: number, query: { after?: { node: string; plugin: string }; limit: number }): Promise<PluginSetRow[]>;
  /**
   * Records the last poll of every plugin of `site` (the site's plugins not
   * listed are forgotten). A failed poll keeps the plugin's last good time
   * and set; a good one sets them.
   */
  setStatus(site: string, polledAt: Date, updates: readonly PluginStatusUpdate[]): Promise<void>;
  /** The plugins' status, of one site or all, sorted by site and plugin. */
  status(site?: string): Promise<PluginStatusRow[]>;
  /**
   * Pins the set run `run` uses (0: none, document labels only) unless one
   * is pinned already; returns the pinned one.
   */
  pinRun(run: number, set: number): Promise<number>;
  /** The set run `run` pinned (0: none), or null when it pinned none yet. */
  pinnedSet(run: number): Promise<number | null>;
}
