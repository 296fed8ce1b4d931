/**
 * The activities of `pollPlugins`: poll the site's label plugins into a new
 * plugin set, and record (or discard) the update run a change of plugin
 * labels calls for.
 */
import { log } from '@temporalio/activity';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import type { PluginPollOutcome, PollResult } from '../contracts/plugin-messages.ts';
import { pollSite, preparePluginChangeRun, type PluginChangeRun } from './plugins.ts';

/** What the plugin activities need. */
export interface PluginActivityDeps {
  store: Store;
  designs: DesignCache;
  telemetry?: PluginTelemetry;
}

/** Where the worker's metrics learn how each plugin's poll went. */
export interface PluginTelemetry {
  /** A poll of `site` ended with these outcomes, one per plugin. */
  polled(site: string, outcomes: readonly PluginPollOutcome[]): void;
}

/** Builds the plugin activities over `deps`. */
export function createPluginActivities(deps: PluginActivityDeps) {
  const { store, designs } = deps;
  return {
    /**
     * Polls the site's label plugins (see `pollSite`): every plugin of the
     * latest revision read and checked whole, good output stored as a new
     * plugin set, each plugin's status recorded. Returns the set's id and
     * counts and one line per plugin; the labels stay in the store.
     */
    async pollSitePlugins(input: { site: string }): Promise<PollResult> {
      const result = await pollSite({ store, designs, warn: (message, fields) => log.warn(message, fields) }, input);
      deps.telemetry?.polled(result.site, result.plugins);
      return result;
    },

    /**
     * Records an update run for the nodes whose plugin labels differ between
     * plugin sets `previous` and `set` (see `preparePluginChangeRun`);
     * idempotent per set.
     */
    async pluginChangeRun(input: { site: string; set: number; previous: number }): Promise<PluginChangeRun> {
      return preparePluginChangeRun({ store, designs }, input);
    },

    /** Discards a run recorded for a plugin change whose workflow could not start. */
    async discardPluginRun(input: { run: number }): Promise<void> {
      await store.runs.discard(input.run);
    },
  };
}
