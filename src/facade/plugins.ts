/**
 * The label plugins facade, shared by the CLI (and the API, later): the
 * per-site Temporal Schedule that polls them (`relabel-plugins/<site>`), a
 * poll now, and each plugin's stored status.
 */
import { randomUUID } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { PluginStatusRow } from '../store/plugins/plugin-store.ts';
import type { Store } from '../store/store.ts';
import { pollPlugins } from '../workflows/poll-plugins.ts';
import { DEFAULT_PLUGIN_POLL_EVERY, PLUGIN_SCHEDULE_PREFIX, type PollPluginsResult } from '../contracts/plugin-messages.ts';
import { parseInterval } from './schedules.ts';
import { RelabelError, relabelErrorOf } from './relabel-error.ts';
import { storeSite } from './documents/store-site.ts';

export { DEFAULT_PLUGIN_POLL_EVERY, PLUGIN_SCHEDULE_PREFIX };

/** The schedule ID of a site's plugin polls. */
export function pluginScheduleId(site: string): string {
  return `${PLUGIN_SCHEDULE_PREFIX}/${site}`;
}

/** What the schedule of a site's plugin polls needs. */
export interface PluginScheduleOptions {
  site: string;
  /** Interval between polls, e.g. `10m` (default {@link DEFAULT_PLUGIN_POLL_EVERY}), 1 minute to 7 days. */
  every?: string;
  taskQueue: string;
  /** Whether update runs a poll starts set relabel's search attributes. */
  searchAttributes?: boolean;
}

/**
 * Creates the Temporal Schedule polling a site's plugins (ID
 * `relabel-plugins/<site>`, overlap SKIP: a poll still running makes the
 * next one wait for its turn), or updates its interval when it exists.
 * InvalidArgument for an interval outside 1 minute to 7 days. The one
 * function a schedules table can register as its `plugins` kind.
 */
export async function ensurePluginSchedule(client: Client, options: PluginScheduleOptions): Promise<{ scheduleId: string; every: string; created: boolean }> {
  const every = options.every ?? DEFAULT_PLUGIN_POLL_EVERY;
  let seconds: number;
  try {
    seconds = parseInterval(every) / 1000;
  } catch (err) {
    throw new RelabelError(FailureType.InvalidArgument, `--every ${JSON.stringify(every.slice(0, 40))}: ${(err as Error).message}`);
  }
  const scheduleId = pluginScheduleId(options.site);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: pollPlugins,
    args: [{ site: options.site, searchAttributes: options.searchAttributes !== false }] as [Parameters<typeof pollPlugins>[0]],
    taskQueue: options.taskQueue,
    workflowId: scheduleId,
  };
  const spec = { intervals: [{ every: `${seconds}s` as const }] };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { kind: 'plugins', site: options.site },
    });
    return { scheduleId, every, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule
    .getHandle(scheduleId)
    .update((previous) => ({ ...previous, spec, action, policies: { ...previous.policies, overlap: ScheduleOverlapPolicy.SKIP } }));
  return { scheduleId, every, created: false };
}

/** What the plugins facade needs. */
export interface PluginsDeps {
  store: Store;
  /** Validated designs by revision, shared by the facade's parts (revisions are immutable: each is validated once). */
  designs: DesignCache;
  /** Temporal, for polls and schedules (status needs only the store). */
  client?: Client;
  taskQueue: string;
  searchAttributes?: boolean;
}

/** Builds the plugins facade. */
export function createPlugins(deps: PluginsDeps) {
  const { store, designs } = deps;
  const temporal = (): Client => {
    if (!deps.client) throw new RelabelError(FailureType.Unavailable, 'Temporal is not connected');
    return deps.client;
  };

  /** `site`, or the store's site (see `storeSite`: NoCommittedRevision without a revision, DocumentValidationFailed for invalid documents). */
  async function siteOf(site?: string): Promise<string> {
    return site ?? (await storeSite(store, designs)).site;
  }

  /** Each plugin's last poll and last good one, of `site` (default: every site). */
  async function status(site?: string): Promise<PluginStatusRow[]> {
    return store.plugins.status(site);
  }

  /**
   * Polls the site's plugins now and waits for the poll to end. A plugin's
   * failure is in the result; the poll itself fails (RelabelError with its
   * type) only when the site cannot be polled.
   */
  async function poll(site?: string): Promise<PollPluginsResult & { workflowId: string }> {
    const name = await siteOf(site);
    const workflowId = `${pluginScheduleId(name)}/now-${randomUUID().slice(0, 8)}`;
    try {
      const result = await temporal().workflow.execute(pollPlugins, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [{ site: name, searchAttributes: deps.searchAttributes !== false }],
        staticSummary: `Poll the label plugins of site ${name}`,
      });
      return { ...result, workflowId };
    } catch (err) {
      throw relabelErrorOf(err) ?? err;
    }
  }

  /** Creates (or updates) the site's poll schedule; see {@link ensurePluginSchedule}. */
  async function schedule(options: { site?: string; every?: string }) {
    const site = await siteOf(options.site);
    return {
      site,
      ...(await ensurePluginSchedule(temporal(), {
        site,
        taskQueue: deps.taskQueue,
        searchAttributes: deps.searchAttributes,
        ...(options.every ? { every: options.every } : {}),
      })),
    };
  }

  return { siteOf, status, poll, schedule };
}

/** The facade's type. */
export type Plugins = ReturnType<typeof createPlugins>;
