/**
 * Assembles the facade entry points use: the documents facade over the
 * revision store, and (connected on first use) the runs facade over Temporal.
 */
import { Client, Connection } from '@temporalio/client';
import { clip } from '../core/plan/text.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { refusedAtOnce, temporalUnreachable } from '../temporal/reach.ts';
import { connectOptions, temporalSettingsFromEnv, type TemporalConnectOptions } from '../temporal/settings.ts';
import { settingFromEnv, variableFromEnv } from '../settings/setting.ts';
import { CONNECTION, VARIABLES } from '../settings/table.ts';
import { createDesignCache } from '../store/designs/design-cache.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { createDocuments, type Documents } from './documents/documents.ts';
import { RelabelError } from './relabel-error.ts';
import { createPlugins, type Plugins } from './plugins.ts';
import { createRuns, type Runs } from './runs/runs.ts';
import { createSchedules, type Schedules } from './schedules.ts';
import { createDrift, type Drift } from './drift.ts';
import { createJoins, type Joins } from './joins.ts';
import { createFleet, type Fleet } from './fleet.ts';
import { createFleetRollouts, type FleetRollouts } from './fleet-rollouts.ts';
import { createFleetSurveys, type FleetSurveys } from './fleet-survey.ts';

export { RelabelError } from './relabel-error.ts';
export type { Documents } from './documents/documents.ts';
export type { Schedules, ScheduleView } from './schedules.ts';
export type { Drift, DriftPage } from './drift.ts';
export type { Plugins } from './plugins.ts';
export type { Joins, JoinStatus } from './joins.ts';
export type { Fleet, FleetPage, FleetSiteView, SiteHealth } from './fleet.ts';
export type { FleetRollouts, FleetRolloutStatus, StartedFleetRollout } from './fleet-rollouts.ts';
export type { FleetSurveys, EndedSurvey, SurveyRequest } from './fleet-survey.ts';
export type {
  NodeOutcome,
  NodePage,
  Runs,
  RunListing,
  RunRef,
  RunStatusReport,
  StartedRun,
  StartOptions,
  TargetSelection,
  RunListFilter,
} from './runs/runs.ts';

/**
 * The centre's parts over the registry in `store`: the rollouts, and the
 * surveys their preflight asks through, both started on the fleet task
 * queue, which only the centre worker polls (a site's worker, holding a
 * kubeconfig, never runs a fleet's workflow).
 */
function centreParts(store: Store, config: RelabelConfig, client: Client): { rollouts: FleetRollouts; surveys: FleetSurveys } {
  const fleet = createFleet({ store, namespace: config.namespace, client });
  const surveys = createFleetSurveys({ client, taskQueue: config.fleetTaskQueue, fleet });
  return { rollouts: createFleetRollouts({ client, taskQueue: config.fleetTaskQueue, fleet, surveys }), surveys };
}

/** Where the facade finds Temporal and the store. */
export interface RelabelConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Task queue of the fleet's workflows (rollouts, surveys): the centre worker's (`relabel-worker --role centre`). */
  fleetTaskQueue: string;
  /** TLS, API key and headers for Temporal (the SDK's environment configuration). */
  connect?: TemporalConnectOptions;
  /** Why the Temporal profile could not be used; connecting to Temporal fails with it. */
  configError?: string;
  /** Revision store URL; the embedded default when absent. */
  storeUrl?: string;
  /** Temporal Web UI base URL, for links. */
  uiUrl?: string;
  /** Whether relabel's search attributes are registered on the server. */
  searchAttributes: boolean;
}

/** Configuration from the Temporal profile and TEMPORAL_* variables (see src/temporal/settings.ts), RELABEL_TASK_QUEUE, RELABEL_FLEET_TASK_QUEUE, RELABEL_STORE_URL, TEMPORAL_UI_URL, RELABEL_SEARCH_ATTRIBUTES. */
export function relabelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): RelabelConfig {
  return {
    ...temporalSettingsFromEnv(env),
    fleetTaskQueue: settingFromEnv(CONNECTION.fleetTaskQueue, env) ?? CONNECTION.fleetTaskQueue.default,
    storeUrl: settingFromEnv(CONNECTION.store, env),
    uiUrl: variableFromEnv(VARIABLES.uiUrl, env),
    searchAttributes: variableFromEnv(VARIABLES.searchAttributes, env),
  };
}

/** How long one readiness check may take before it counts as failed. */
export const HEALTH_CHECK_TIMEOUT_MS = 3000;

/** Longest part of an error message kept in a health check's message. */
const MAX_HEALTH_CAUSE = 300;

/** One dependency's readiness: whether it answered, and what was found, in plain words. */
export interface HealthCheck {
  ok: boolean;
  message: string;
}

/** Resolves with `promise`, or rejects after `ms` saying that nothing answered in time. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function bounded(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
  return clip(text, MAX_HEALTH_CAUSE);
}

/** An open facade. `close()` releases the store and any Temporal connection. */
export interface Relabel {
  documents: Documents;
  /**
   * The runs facade, connecting to Temporal on first call; Unavailable,
   * saying where and why, when Temporal cannot be reached.
   */
  runs(): Promise<Runs>;
  /** The schedules facade (relabel's Temporal Schedules), connecting as `runs` does. */
  schedules(): Promise<Schedules>;
  /** The drift facade, connecting as `runs` does. */
  drift(): Promise<Drift>;
  /** The joins facade (a site's join watcher), connecting as `runs` does. */
  joins(): Promise<Joins>;
  /**
   * The label plugins facade; with `temporal`, connected to Temporal first
   * (polls and schedules need it; status reads only the store).
   */
  plugins(temporal?: boolean): Promise<Plugins>;
  /** The fleet registry; with `temporal`, connected to Temporal first (each site's worker health needs it). */
  fleet(temporal?: boolean): Promise<Fleet>;
  /** Fleet rollouts over the registry's sites, started on the fleet task queue (`fleetTaskQueue`), connecting as `runs` does. */
  fleetRollouts(): Promise<FleetRollouts>;
  /** Fleet surveys: each registered site's plan or state, asked of its worker (needs Temporal). */
  fleetSurveys(): Promise<FleetSurveys>;
  /**
   * Whether Temporal and the revision store answer now, each checked on its
   * own (a Temporal system-info call and a read of the latest revision),
   * each bounded to `timeoutMs`.
   */
  health(timeoutMs?: number): Promise<{ temporal: HealthCheck; store: HealthCheck }>;
  close(): Promise<void>;
}

/** Revisions whose design the facade keeps validated (the latest and the one before cover nearly every request). */
const FACADE_DESIGNS = 2;

/** Opens the store (and lazily Temporal) named by `config`. */
export async function openRelabel(config: RelabelConfig): Promise<Relabel> {
  const store = await openStore(config.storeUrl);
  // One cache for every part of the facade: revisions are immutable, so a long-lived facade (the API server) validates each once.
  const designs = createDesignCache(store, FACADE_DESIGNS);
  let connection: Connection | undefined;
  let client: Client | undefined;
  let runs: Promise<Runs> | undefined;
  const connectRuns = (): Promise<Runs> => {
    runs ??= (async () => {
      const { temporalAddress: address, namespace } = config;
      let connect: TemporalConnectOptions;
      try {
        connect = connectOptions(config);
      } catch (err) {
        throw new RelabelError(FailureType.InvalidArgument, (err as Error).message);
      }
      // A refused address fails at once; the client would wait out its connect timeout.
      const refused = await refusedAtOnce(address, namespace);
      if (refused !== undefined) throw new RelabelError(FailureType.Unavailable, refused);
      let c: Connection;
      try {
        c = await Connection.connect({ ...connect, address, connectTimeout: '5s' });
      } catch (err) {
        throw new RelabelError(FailureType.Unavailable, await temporalUnreachable(address, namespace, err));
      }
      connection = c;
      client = new Client({ connection: c, namespace: config.namespace });
      return createRuns({
        client,
        store,
        designs,
        taskQueue: config.taskQueue,
        namespace: config.namespace,
        uiUrl: config.uiUrl,
        searchAttributes: config.searchAttributes,
      });
    })();
    // A failed connection is not kept: the next call tries again.
    runs.catch(() => (runs = undefined));
    return runs;
  };
  const centre = (c: Client) => centreParts(store, config, c);
  /** The client, once `connectRuns` has connected. */
  const connected = async (): Promise<Client> => {
    await connectRuns();
    if (client === undefined) throw new RelabelError(FailureType.Unavailable, 'not connected to Temporal');
    return client;
  };
  return {
    documents: createDocuments(store, designs),
    runs: connectRuns,
    schedules: async () => createSchedules({ client: await connected(), store, designs, taskQueue: config.taskQueue }),
    drift: async () => createDrift({ client: await connected(), store, designs, taskQueue: config.taskQueue, namespace: config.namespace }),
    joins: async () => createJoins({ client: await connected(), store, designs, taskQueue: config.taskQueue, namespace: config.namespace }),
    async plugins(temporal = false) {
      if (temporal) await connectRuns();
      return createPlugins({ store, designs, taskQueue: config.taskQueue, searchAttributes: config.searchAttributes, ...(client ? { client } : {}) });
    },
    async fleet(temporal = false) {
      return createFleet({ store, namespace: config.namespace, ...(temporal ? { client: await connected() } : {}) });
    },
    fleetRollouts: async () => centre(await connected()).rollouts,
    fleetSurveys: async () => centre(await connected()).surveys,
    async health(timeoutMs = HEALTH_CHECK_TIMEOUT_MS) {
      const { temporalAddress: address, namespace } = config;
      const temporal = (async (): Promise<HealthCheck> => {
        try {
          await within(connectRuns(), timeoutMs);
          const c = connection;
          if (c === undefined) throw new Error('not connected');
          await within(
            c.withDeadline(Date.now() + timeoutMs, () => c.workflowService.getSystemInfo({})),
            timeoutMs + 500,
          );
          return { ok: true, message: `temporal: reachable at ${address} (namespace ${namespace})` };
        } catch (err) {
          const reason = err instanceof RelabelError ? err.message : await temporalUnreachable(address, namespace, err);
          return { ok: false, message: `temporal: ${bounded(reason)}` };
        }
      })();
      const storeCheck = (async (): Promise<HealthCheck> => {
        try {
          await within(store.revisions.latest(), timeoutMs);
          return { ok: true, message: 'revision store: reachable' };
        } catch (err) {
          return { ok: false, message: `revision store: ${bounded(err)}` };
        }
      })();
      return { temporal: await temporal, store: await storeCheck };
    },
    async close() {
      await connection?.close();
      await store.close();
    },
  };
}
