/**
 * Input and result of the `pollPlugins` workflow and its activity: bounded
 * by the number of plugins a site declares, whatever the number of nodes
 * (the labels themselves are in the store, under the set's id).
 */

/** Prefix of the plugin poll schedule's ID (and of the workflows it starts): `relabel-plugins/<site>`. */
export const PLUGIN_SCHEDULE_PREFIX = 'relabel-plugins';

/** How often a site's plugins are polled unless told otherwise. */
export const DEFAULT_PLUGIN_POLL_EVERY = '10m';

/** Input of the `pollPlugins` workflow. */
export interface PollPluginsInput {
  /** The site whose plugins to poll (the `drydock/Region/v1` name, or `default`). */
  site: string;
  /** Whether an update run this poll starts sets relabel's search attributes (default true). */
  searchAttributes?: boolean;
}

/** How one plugin's poll went. */
export interface PluginPollOutcome {
  plugin: string;
  ok: boolean;
  /** Nodes and labels of its good output. */
  nodes?: number;
  labels?: number;
  /** Why it failed. */
  error?: string;
  /** A failed plugin whose last good labels stay in use. */
  keptLastGood?: boolean;
}

/** How a poll ended: every plugin good, some failed, every one failed, or the site has no plugin. */
export const PollStatus = { ok: 'ok', partial: 'partial', failed: 'failed', none: 'none' } as const;
/** One of the {@link PollStatus} strings. */
export type PollStatus = (typeof PollStatus)[keyof typeof PollStatus];

/** What a poll did: bounded by the number of plugins, whatever the number of nodes. */
export interface PollResult {
  site: string;
  revision: number;
  status: PollStatus;
  /** The site's plugin set now in use (new or unchanged), or null when there is none yet. */
  set: { id: number; created: boolean; nodes: number; labels: number; previous: number | null } | null;
  plugins: PluginPollOutcome[];
  /** Whether the site's policy asks for an update run when a new set changes labels. */
  updateOnChange: boolean;
}

/** What a poll did, and the update run it started (when the policy asks for one). */
export interface PollPluginsResult extends PollResult {
  /** The update run started for the nodes whose plugin labels changed, or why none was. */
  updateRun?: { workflowId: string; run: number; targets: number } | { skipped: string };
}
