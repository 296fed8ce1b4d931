/**
 * The fleet registry as the CLI and the API see it: sites added, listed a
 * page at a time with each site's worker health, and removed. A site's
 * health is what Temporal knows of the workers polling its task queue (its
 * pollers and when each last polled): the centre holds no kubeconfig and
 * opens no connection into a site, so Temporal's pollers are how it knows a
 * site's worker is there.
 */
import type { Client } from '@temporalio/client';
import { defaultTaskQueue, type FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { selectorMatches, type LabelSelector } from '../core/plan/label-selector.ts';
import { mapLimited } from '../core/plan/map-limited.ts';
import { clip } from '../core/plan/text.ts';
import { MAX_FLEET_PAGE, type FleetSiteRecord } from '../store/fleet/fleet-store.ts';
import type { Store } from '../store/store.ts';
import { timestampMs } from '../temporal/timestamp.ts';
import { POLLER_FRESH_MS, QUERY_TIMEOUT_MS } from './idle-task-queue.ts';
import { RelabelError } from './relabel-error.ts';

/** Temporal's TaskQueueType values (temporal.api.enums.v1): the two kinds of task a relabel worker polls for. */
const TaskQueueType = { workflow: 1, activity: 2 } as const;

/** Sites in a page of `fleet sites list` when not told. */
export const DEFAULT_FLEET_PAGE = 100;
/** Pollers' identities a site's health names at most. */
const MAX_IDENTITIES = 5;
/** Task queues described at once while a page's health is read. */
const DESCRIBE_AT_ONCE = 16;

/** What Temporal knows of the workers serving a site's task queue. */
export interface SiteHealth {
  /** Whether a worker polled the queue for workflow and activity tasks within the last {@link POLLER_FRESH_MS}. */
  polling: boolean;
  /** Distinct workers seen polling (workflow or activity tasks). */
  workers: number;
  /** The most recent poll, ISO-8601; absent: none seen. */
  lastPollAt?: string;
  /** Their identities (at most five), sorted. */
  identities: string[];
  /** Why the health could not be read (Temporal did not answer); `polling` is false then. */
  unknown?: string;
}

/** A registered site with its worker's health (absent when not asked for). */
export interface FleetSiteView extends FleetSiteRecord {
  worker?: SiteHealth;
}

/** A page of the registry. */
export interface FleetPage {
  sites: FleetSiteView[];
  total: number;
  /** The name to list after for the next page; absent on the last. */
  next?: string;
}

/** The fleet facade. */
export interface Fleet {
  /** Registers a site; its task queue defaults to `relabel-<name>`. InvalidArgument or Conflict, naming why, and nothing written. */
  add(site: { name: string; taskQueue?: string; labels?: Record<string, string> }, by?: string): Promise<FleetSiteRecord>;
  /** A page of sites in name order, with each worker's health when `health` (needs Temporal). */
  list(options?: { after?: string; limit?: number; health?: boolean }): Promise<FleetPage>;
  /** Every site, in name order (a rollout's sites). */
  all(): Promise<FleetSite[]>;
  /** Unregisters `name`: NotFound when it is not registered. */
  remove(name: string): Promise<void>;
}

/** What the fleet facade works with; `client` only for health. */
export interface FleetDeps {
  store: Store;
  namespace: string;
  client?: Client;
}

/** Reads one queue's pollers of one task type. */
async function pollers(client: Client, namespace: string, name: string, type: number) {
  const described = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
    client.workflowService.describeTaskQueue({ namespace, taskQueue: { name }, taskQueueType: type }),
  );
  return (described.pollers ?? []).map((p) => ({ identity: p.identity ?? '', at: timestampMs(p.lastAccessTime) ?? 0 }));
}

/** The health of the worker serving `taskQueue`: it counts as polling when both its workflow and its activity pollers are fresh. */
export async function siteHealth(client: Client, namespace: string, taskQueue: string, now = Date.now()): Promise<SiteHealth> {
  try {
    const [workflow, activity] = await Promise.all([
      pollers(client, namespace, taskQueue, TaskQueueType.workflow),
      pollers(client, namespace, taskQueue, TaskQueueType.activity),
    ]);
    const fresh = (list: { at: number }[]) => list.some((p) => p.at > now - POLLER_FRESH_MS);
    const all = [...workflow, ...activity];
    const last = Math.max(0, ...all.map((p) => p.at));
    const identities = [...new Set(all.map((p) => p.identity).filter((i) => i.length > 0))].sort();
    return {
      polling: fresh(workflow) && fresh(activity),
      workers: identities.length,
      ...(last > 0 ? { lastPollAt: new Date(last).toISOString() } : {}),
      identities: identities.slice(0, MAX_IDENTITIES),
    };
  } catch (err) {
    return { polling: false, workers: 0, identities: [], unknown: clip(err instanceof Error ? err.message : String(err), 200) };
  }
}

/** Unknown site names a refusal lists. */
const NAMES_LISTED = 10;

/**
 * The registered sites a request chooses, by name (in the order given,
 * each once) and by a selector over their labels, every site when neither
 * is given; InvalidRequest, naming what is wrong, for an empty registry, an
 * unknown name, or a choice that leaves no site.
 */
export async function chooseSites(fleet: Pick<Fleet, 'all'>, choice: { sites?: readonly string[]; select?: LabelSelector }): Promise<FleetSite[]> {
  const registered = await fleet.all();
  if (registered.length === 0) throw new RelabelError(FailureType.InvalidRequest, 'no site is registered: add sites with `relabel fleet sites add`');
  let sites = registered;
  if (choice.sites !== undefined) {
    const byName = new Map(registered.map((s) => [s.name, s]));
    const unknown = choice.sites.filter((n) => !byName.has(n));
    if (unknown.length > 0) {
      const named = unknown.slice(0, NAMES_LISTED).map((n) => JSON.stringify(n.slice(0, 80)));
      const more = unknown.length > NAMES_LISTED ? ` and ${unknown.length - NAMES_LISTED} more` : '';
      throw new RelabelError(FailureType.InvalidRequest, `unknown site(s): ${named.join(', ')}${more}: \`relabel fleet sites list\` shows the registered ones`);
    }
    sites = [...new Set(choice.sites)].map((n) => byName.get(n) as FleetSite);
  }
  const { select } = choice;
  if (select) sites = sites.filter((s) => selectorMatches(select, s.labels));
  if (sites.length === 0) throw new RelabelError(FailureType.InvalidRequest, 'the selection matches no registered site');
  return sites;
}

/** Builds the fleet facade. */
export function createFleet(deps: FleetDeps): Fleet {
  const { store, namespace, client } = deps;
  return {
    async add(site, by) {
      return store.fleet.add({ name: site.name, taskQueue: site.taskQueue ?? defaultTaskQueue(site.name), labels: site.labels ?? {} }, by);
    },

    async list(options = {}) {
      const limit = options.limit ?? DEFAULT_FLEET_PAGE;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FLEET_PAGE) {
        throw new RelabelError(FailureType.InvalidArgument, `limit ${String(limit)}: a page holds 1 to ${MAX_FLEET_PAGE} sites`);
      }
      const [page, total] = await Promise.all([
        store.fleet.list({ limit: limit + 1, ...(options.after !== undefined ? { after: options.after } : {}) }),
        store.fleet.count(),
      ]);
      const sites = page.slice(0, limit);
      const views: FleetSiteView[] =
        options.health && client
          ? await mapLimited(sites, DESCRIBE_AT_ONCE, async (s) => ({ ...s, worker: await siteHealth(client, namespace, s.taskQueue) }))
          : sites;
      const last = sites.at(-1);
      return { sites: views, total, ...(page.length > limit && last ? { next: last.name } : {}) };
    },

    async all() {
      const sites: FleetSite[] = [];
      for (let after: string | undefined; ;) {
        const page = await store.fleet.list({ limit: MAX_FLEET_PAGE, ...(after !== undefined ? { after } : {}) });
        sites.push(...page.map(({ name, taskQueue, labels }) => ({ name, taskQueue, labels })));
        if (page.length < MAX_FLEET_PAGE) return sites;
        after = page.at(-1)?.name;
      }
    },

    async remove(name) {
      if (!(await store.fleet.remove(name))) throw new RelabelError(FailureType.NotFound, `site ${clip(name, 80)} is not registered`);
    },
  };
}
