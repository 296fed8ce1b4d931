/**
 * Where and how relabel reaches Temporal, read in one place for the worker,
 * the CLI and the API through the Temporal SDK's environment configuration:
 * a profile of the TOML profiles file (`TEMPORAL_CONFIG_FILE`, else
 * ~/.config/temporalio/temporal.toml when present; `TEMPORAL_PROFILE`, else
 * `default`), overridden by `TEMPORAL_*` variables: `TEMPORAL_ADDRESS`
 * (default localhost:7233), `TEMPORAL_NAMESPACE` (default `default`),
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_CLIENT_CERT_PATH|DATA`,
 * `TEMPORAL_TLS_CLIENT_KEY_PATH|DATA`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH|DATA`,
 * `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_GRPC_META_*`. `RELABEL_TASK_QUEUE`
 * (default `relabel`) names the task queue. An empty variable counts as unset.
 */
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/client';
import { clip } from '../core/plan/text.ts';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../core/plan/constants.ts';

/** Default Temporal frontend. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

/** Longest part of the SDK's own message kept in a configuration error. */
const MAX_CAUSE = 300;

/** How to connect beyond the address: TLS (true: with the system's roots), an API key, gRPC headers. */
export interface TemporalConnectOptions {
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** The Temporal frontend, namespace and task queue relabel uses, and how to connect. */
export interface TemporalSettings {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** TLS, API key and headers from the profile and the variables; none for a plain local server. */
  connect?: TemporalConnectOptions;
  /**
   * Why the profile could not be used (an unreadable or invalid profiles
   * file, a missing profile, an unreadable certificate), naming the file and
   * profile. Connecting fails with it; commands that need no Temporal work.
   */
  configError?: string;
}

/** `env` without its empty variables. */
function nonEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
}

/** Where the profile was looked for, for messages: `profile P of FILE`. */
function profileWhere(env: Record<string, string>): string {
  const file = env.TEMPORAL_CONFIG_FILE ?? 'the default profiles file (~/.config/temporalio/temporal.toml)';
  return `profile ${env.TEMPORAL_PROFILE ?? 'default'} of ${file}`;
}

function bounded(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return clip(line, MAX_CAUSE);
}

/** {@link TemporalSettings} from `env` (the profiles file it names, then its `TEMPORAL_*` variables). */
export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const vars = nonEmpty(env);
  const taskQueue = vars.RELABEL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  let connectConfig: ReturnType<typeof toClientOptions>;
  try {
    connectConfig = toClientOptions(loadClientConfigProfile({ overrideEnvVars: vars }));
  } catch (err) {
    return {
      temporalAddress: vars.TEMPORAL_ADDRESS ?? DEFAULT_TEMPORAL_ADDRESS,
      namespace: vars.TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE,
      taskQueue,
      configError: `Temporal connection settings (${profileWhere(vars)}): ${bounded(err instanceof Error ? err.message : String(err))}`,
    };
  }
  const { address, tls, apiKey, metadata } = connectConfig.connectionOptions;
  const connect: TemporalConnectOptions = {
    ...(tls !== undefined && tls !== null ? { tls } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(metadata !== undefined && Object.keys(metadata).length > 0 ? { metadata: metadata as Record<string, string> } : {}),
  };
  return {
    temporalAddress: address || DEFAULT_TEMPORAL_ADDRESS,
    namespace: connectConfig.namespace || DEFAULT_NAMESPACE,
    taskQueue,
    ...(Object.keys(connect).length > 0 ? { connect } : {}),
  };
}

/** The settings' connection options, or their configuration error thrown. */
export function connectOptions(settings: Pick<TemporalSettings, 'connect' | 'configError'>): TemporalConnectOptions {
  if (settings.configError !== undefined) throw new Error(settings.configError);
  return settings.connect ?? {};
}
