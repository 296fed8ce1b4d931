/**
 * Assembles the facade entry points use: the documents facade over the
 * revision store, and (connected on first use) the runs facade over Temporal.
 */
import { Client, Connection } from '@temporalio/client';
import { FailureType } from '../core/failure-types.ts';
import { refusedAtOnce, temporalUnreachable } from '../temporal-reach.ts';
import { connectOptions, temporalSettingsFromEnv, type TemporalConnectOptions } from '../temporal-settings.ts';
import { openStore } from '../store/open-store.ts';
import { createDocuments, type Documents } from './documents.ts';
import { RelabelError } from './relabel-error.ts';
import { createRuns, type Runs } from './runs.ts';

export { RelabelError } from './relabel-error.ts';
export type { Documents } from './documents.ts';
export type { NodeOutcome, NodePage, Runs, RunListing, RunRef, RunStatusReport, StartedRun, StartOptions, TargetSelection, RunListFilter } from './runs.ts';

/** Where the facade finds Temporal and the store. */
export interface RelabelConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
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

/** Configuration from the Temporal profile and TEMPORAL_* variables (see temporal-settings.ts), RELABEL_TASK_QUEUE, RELABEL_STORE_URL, TEMPORAL_UI_URL, RELABEL_SEARCH_ATTRIBUTES. */
export function relabelConfigFromEnv(env: NodeJS.ProcessEnv = process.env): RelabelConfig {
  return {
    ...temporalSettingsFromEnv(env),
    storeUrl: env.RELABEL_STORE_URL || undefined,
    uiUrl: env.TEMPORAL_UI_URL || 'http://localhost:8233',
    searchAttributes: env.RELABEL_SEARCH_ATTRIBUTES !== 'off',
  };
}

/** An open facade. `close()` releases the store and any Temporal connection. */
export interface Relabel {
  documents: Documents;
  /**
   * The runs facade, connecting to Temporal on first call; Unavailable,
   * saying where and why, when Temporal cannot be reached.
   */
  runs(): Promise<Runs>;
  close(): Promise<void>;
}

/** Opens the store (and lazily Temporal) named by `config`. */
export async function openRelabel(config: RelabelConfig): Promise<Relabel> {
  const store = await openStore(config.storeUrl);
  let connection: Connection | undefined;
  let runs: Promise<Runs> | undefined;
  return {
    documents: createDocuments(store),
    runs() {
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
        return createRuns({
          client: new Client({ connection: c, namespace: config.namespace }),
          store,
          taskQueue: config.taskQueue,
          namespace: config.namespace,
          uiUrl: config.uiUrl,
          searchAttributes: config.searchAttributes,
        });
      })();
      // A failed connection is not kept: the next call tries again.
      runs.catch(() => (runs = undefined));
      return runs;
    },
    async close() {
      await connection?.close();
      await store.close();
    },
  };
}
