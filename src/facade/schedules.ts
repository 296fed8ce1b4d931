/**
 * relabel's Temporal Schedules, one per site and kind, through the SDK's
 * schedule client: create, list, pause, unpause, trigger, delete. Each kind
 * is one entry of {@link SCHEDULE_KINDS}: the ID prefix (`relabel-<kind>/<site>`),
 * the workflow it starts, its default interval, and how its result reads.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleDescription } from '@temporalio/client';
import { FailureType } from '../core/plan/failure-types.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import { DRIFT_ID_PREFIX, type DetectDriftResult } from '../contracts/drift-messages.ts';
import { DEFAULT_PLUGIN_POLL_EVERY, PLUGIN_SCHEDULE_PREFIX, type PollPluginsResult } from '../contracts/plugin-messages.ts';
import { RelabelError } from './relabel-error.ts';
import { triggerSchedule } from './schedule-trigger.ts';
import { storeSite } from './documents/store-site.ts';

/** Prefix of every schedule relabel owns; `list` shows only these. */
export const SCHEDULE_ID_PREFIX = 'relabel-';

/** One kind of schedule. */
export interface ScheduleKind {
  /** Schedule (and workflow) ID prefix; the ID is `<prefix>/<site>`. */
  idPrefix: string;
  /** The workflow type each action starts. */
  workflowType: string;
  /** The workflow's input for a site. */
  args(site: string): unknown[];
  /** Interval when none is given, as `relabel schedule create --every` takes it. */
  defaultEvery: string;
  /** What it does, for help and the Temporal UI. */
  description: string;
  /** One line about a completed action's result. */
  resultText(result: unknown): string;
}

/** The kinds of schedules; adding a kind is adding an entry. */
export const SCHEDULE_KINDS = {
  drift: {
    idPrefix: DRIFT_ID_PREFIX,
    workflowType: 'detectDrift',
    args: (site) => [{ site }],
    defaultEvery: '10m',
    description: 'drift detection: report nodes changed behind relabel, and heal them when the policy says so',
    resultText(result) {
      const r = result as DetectDriftResult;
      const c = r.counts;
      const heal = r.heal ? `; healed in ${r.heal.runs.length} run(s)${r.heal.skipped ? ` (${r.heal.skipped})` : ''}` : '';
      return `report ${r.report}: ${c.drifted} drifted, ${c.pending} pending, ${c.unmanaged} unmanaged, ${c.missing} missing, ${c.in_sync} in sync${heal}`;
    },
  },
  plugins: {
    idPrefix: PLUGIN_SCHEDULE_PREFIX,
    workflowType: 'pollPlugins',
    args: (site) => [{ site }],
    defaultEvery: DEFAULT_PLUGIN_POLL_EVERY,
    description: 'label plugin polling: run every plugin of the site, keep the last good labels of any that fails',
    resultText(result) {
      const r = result as PollPluginsResult;
      const failed = r.plugins.filter((p) => !p.ok).length;
      return `${r.status}: ${r.set ? `plugin set ${r.set.id}${r.set.created ? ' (new)' : ''}` : 'no plugin set'}, ${failed} of ${r.plugins.length} plugin(s) failed`;
    },
  },
} as const satisfies Record<string, ScheduleKind>;

/** Shortest and longest interval accepted. */
export const MIN_INTERVAL_MS = 60_000;
export const MAX_INTERVAL_MS = 7 * 24 * 3600_000;

/** Most schedules `list` looks at. */
const MAX_LISTED = 200;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/**
 * An interval as `90s`, `10m`, `1h30m`, `1d` in ms; InvalidArgument, saying
 * the form and the bounds, for anything else.
 */
export function parseInterval(text: string): number {
  const bad = (why: string) => new RelabelError(FailureType.InvalidArgument, `bad interval ${JSON.stringify(text.slice(0, 40))}: ${why}`);
  if (!/^([0-9]{1,6}[smhd])+$/.test(text)) throw bad('use a number and a unit, s, m, h or d, such as 10m or 1h30m');
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/([0-9]+)([smhd])/g)) ms += Number(n) * (UNITS[unit ?? 's'] ?? 0);
  if (ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) throw bad('must be between 1m and 7d');
  return ms;
}

/** An interval in ms as `parseInterval` reads it (`1h30m`). */
export function formatInterval(ms: number): string {
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || '0s';
}

/** A schedule as `list` shows it. */
export interface ScheduleView {
  scheduleId: string;
  kind: string;
  site: string;
  paused: boolean;
  note?: string;
  /** The interval, as `10m`. */
  every?: string;
  nextRun?: string;
  /** The latest action: when, which workflow, how it ended (RUNNING, COMPLETED, FAILED …) and its result in one line. */
  lastRun?: { startedAt: string; workflowId: string; runId: string; status?: string; result?: string };
}

/** What the schedules facade needs. */
export interface SchedulesDeps {
  client: Client;
  store: Store;
  /** Validated designs by revision, shared by the facade's parts (revisions are immutable: each is validated once). */
  designs: DesignCache;
  taskQueue: string;
}

/** The kind named `name`; InvalidArgument listing the kinds otherwise. */
export function scheduleKind(name: string): ScheduleKind & { name: string } {
  const kind = Object.hasOwn(SCHEDULE_KINDS, name) ? (SCHEDULE_KINDS as Record<string, ScheduleKind>)[name] : undefined;
  if (!kind)
    throw new RelabelError(
      FailureType.InvalidArgument,
      `unknown schedule kind ${JSON.stringify(name.slice(0, 40))}: one of ${Object.keys(SCHEDULE_KINDS).join(', ')}`,
    );
  return { ...kind, name };
}

/** The kind and site of a relabel schedule ID, or undefined for any other. */
function parseScheduleId(id: string): { kind: string; site: string } | undefined {
  for (const [name, kind] of Object.entries(SCHEDULE_KINDS) as [string, ScheduleKind][]) {
    if (id.startsWith(`${kind.idPrefix}/`)) return { kind: name, site: id.slice(kind.idPrefix.length + 1) };
  }
  return undefined;
}

/** A described schedule as shown, with its latest action's status and result. */
async function scheduleView(client: Client, d: ScheduleDescription): Promise<ScheduleView> {
  const parsed = parseScheduleId(d.scheduleId);
  const every = d.spec.intervals?.[0]?.every;
  const next = d.info.nextActionTimes[0];
  const last = d.info.recentActions.at(-1);
  let lastRun: ScheduleView['lastRun'];
  if (last) {
    const { workflowId, firstExecutionRunId: runId } = last.action.workflow;
    lastRun = { startedAt: last.takenAt.toISOString(), workflowId, runId };
    const handle = client.workflow.getHandle(workflowId, runId);
    const described = await handle.describe().catch(() => undefined);
    if (described) {
      lastRun.status = described.status.name;
      if (described.status.name === 'COMPLETED' && parsed) {
        const result: unknown = await handle.result().catch(() => undefined);
        if (result !== undefined) lastRun.result = scheduleKind(parsed.kind).resultText(result);
      }
    }
  }
  return {
    scheduleId: d.scheduleId,
    kind: parsed?.kind ?? '?',
    site: parsed?.site ?? '?',
    paused: d.state.paused,
    ...(d.state.note ? { note: d.state.note } : {}),
    ...(typeof every === 'number' ? { every: formatInterval(every) } : {}),
    ...(next && !d.state.paused ? { nextRun: next.toISOString() } : {}),
    ...(lastRun ? { lastRun } : {}),
  };
}

/** Builds the schedules facade. */
export function createSchedules(deps: SchedulesDeps) {
  const { client, store, designs } = deps;

  /** The schedule ID for `kind` at the store's site (`site` must be it, when given). */
  async function scheduleId(kindName: string, site?: string): Promise<{ id: string; kind: ScheduleKind & { name: string }; site: string }> {
    const kind = scheduleKind(kindName);
    const found = await storeSite(store, designs, site);
    return { id: `${kind.idPrefix}/${found.site}`, kind, site: found.site };
  }

  const notFound = (id: string) => new RelabelError(FailureType.NotFound, `no schedule ${id} (relabel schedule list shows relabel's schedules)`);

  /** Runs `fn` on the handle of `id`, NotFound when there is no such schedule. */
  async function onHandle<T>(id: string, fn: (h: ReturnType<Client['schedule']['getHandle']>) => Promise<T>): Promise<T> {
    try {
      return await fn(client.schedule.getHandle(id));
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw notFound(id);
      throw err;
    }
  }

  const view = (d: ScheduleDescription) => scheduleView(client, d);

  return {
    /**
     * Creates the schedule of `kind` for the store's site: every `every`
     * (default the kind's), overlapping actions skipped, started paused
     * when asked. InvalidArgument for an unknown kind or site, a bad
     * interval, or a schedule that exists already.
     */
    async create(kindName: string, options: { site?: string; every?: string; paused?: boolean } = {}): Promise<ScheduleView> {
      const { id, kind, site } = await scheduleId(kindName, options.site);
      const everyMs = parseInterval(options.every ?? kind.defaultEvery);
      try {
        await client.schedule.create({
          scheduleId: id,
          spec: { intervals: [{ every: everyMs }] },
          action: {
            type: 'startWorkflow',
            workflowType: kind.workflowType,
            workflowId: id,
            taskQueue: deps.taskQueue,
            args: kind.args(site),
            staticSummary: `${kind.name} of site ${site} (schedule ${id})`,
            staticDetails: `Started by the Temporal Schedule **${id}** every ${formatInterval(everyMs)}: ${kind.description}.`,
          },
          policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1m' },
          state: { paused: options.paused === true, note: `relabel ${kind.name} for site ${site}` },
          memo: { kind: kind.name, site },
        });
      } catch (err) {
        if (err instanceof ScheduleAlreadyRunning) {
          throw new RelabelError(FailureType.InvalidArgument, `schedule ${id} exists already (pause, unpause, trigger or delete it)`);
        }
        throw err;
      }
      return view(await client.schedule.getHandle(id).describe());
    },

    /** relabel's schedules (IDs starting `relabel-`), sorted by ID, each described. */
    async list(): Promise<ScheduleView[]> {
      const ids: string[] = [];
      for await (const s of client.schedule.list({ pageSize: 100 })) {
        if (s.scheduleId.startsWith(SCHEDULE_ID_PREFIX)) ids.push(s.scheduleId);
        if (ids.length >= MAX_LISTED) break;
      }
      ids.sort();
      const views: ScheduleView[] = [];
      for (const id of ids) {
        const d = await client.schedule
          .getHandle(id)
          .describe()
          .catch(() => undefined);
        if (d) views.push(await view(d));
      }
      return views;
    },

    /** The ID of `kind`'s schedule for the store's site (`site` must be it when given). */
    async idOf(kindName: string, site?: string): Promise<string> {
      return (await scheduleId(kindName, site)).id;
    },

    /** One schedule; NotFound when absent. */
    async describe(id: string): Promise<ScheduleView> {
      return onHandle(id, async (h) => view(await h.describe()));
    },

    /** Pauses a schedule (its note says why). */
    async pause(id: string, note = 'paused with relabel schedule pause'): Promise<ScheduleView> {
      return onHandle(id, async (h) => (await h.pause(note), view(await h.describe())));
    },

    /** Unpauses a schedule. */
    async unpause(id: string, note = 'unpaused with relabel schedule unpause'): Promise<ScheduleView> {
      return onHandle(id, async (h) => (await h.unpause(note), view(await h.describe())));
    },

    /**
     * Takes the schedule's action now, whether or not one runs, and returns
     * the workflow this trigger started once the schedule reports it (within
     * about 10 s), else undefined; never one the schedule's interval started
     * meanwhile (see schedule-trigger.ts for how, and what that relies on).
     */
    async trigger(id: string): Promise<{ workflowId: string; runId: string } | undefined> {
      return onHandle(id, (h) => triggerSchedule(client, h));
    },

    /** Deletes a schedule; the workflows it started are left alone. */
    async delete(id: string): Promise<void> {
      await onHandle(id, (h) => h.delete());
    },
  };
}

/** The schedules facade. */
export type Schedules = ReturnType<typeof createSchedules>;
