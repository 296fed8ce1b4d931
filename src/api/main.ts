/**
 * `relabel api --listen 127.0.0.1:PORT`: serves the HTTP API over the facade
 * configured from the environment (TEMPORAL_ADDRESS, RELABEL_STORE_URL, …;
 * see `relabelConfigFromEnv`) and flags. Tokens come from `--tokens-file`
 * (a YAML or JSON list of `{token, role, name?}`) or `RELABEL_API_TOKENS`
 * (`token:role,token:role`). With `--keystone-url` (RELABEL_KEYSTONE_URL)
 * a token none of those matches is validated by Keystone
 * (src/api/http/keystone.ts), and static tokens become optional; without either
 * the server refuses to start.
 * SIGTERM/SIGINT stop it gracefully: no new connections, in-flight requests
 * finish, then the store and Temporal connections are closed.
 */
import { readFileSync } from 'node:fs';
import { Command, type Option } from 'commander';
import type { FastifyInstance } from 'fastify';
import { createNodeApi, loadKubeConfig } from '../kube/nodes.ts';
import { openRelabel, relabelConfigFromEnv, type RelabelConfig } from '../facade/index.ts';
import { parseTokensEnv, parseTokensFile, type ApiToken } from './http/auth.ts';
import { createKeystoneVerifier, DEFAULT_KEYSTONE_ROLES, parseKeystoneRoles, type KeystoneOptions } from './http/keystone.ts';
import { createApiServer, DEFAULT_BODY_LIMIT } from './http/server.ts';
import { connectOptions } from '../temporal/settings.ts';
import { connectionOptions } from '../settings/connection-options.ts';
import { addSettingOptions, settingOption, variableFromEnv } from '../settings/setting.ts';
import { API, CONNECTION, VARIABLES } from '../settings/table.ts';

/** A `host:port` to listen on (`[::1]:8080` for IPv6). */
export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (!match || host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new Error(`--listen ${JSON.stringify(value)}: expected HOST:PORT, e.g. 127.0.0.1:8000`);
  }
  return { host, port };
}

/** The tokens: from the file when given, else from `RELABEL_API_TOKENS`. Throws when there are none, unless `optional` (Keystone is on). */
export function loadTokens(tokensFile: string | undefined, env: NodeJS.ProcessEnv = process.env, optional = false): ApiToken[] {
  if (tokensFile) return parseTokensFile(readFileSync(tokensFile, 'utf8'), tokensFile);
  const fromEnv = variableFromEnv(VARIABLES.apiTokens, env);
  if (fromEnv !== undefined) return parseTokensEnv(fromEnv);
  if (optional) return [];
  throw new Error('no API tokens: give --tokens-file FILE or set RELABEL_API_TOKENS=token:role[:name],…, or --keystone-url');
}

/** The `--keystone-*` flags as given (each defaulted from its RELABEL_KEYSTONE_* variable). */
export interface KeystoneFlags {
  keystoneUrl?: string;
  keystoneUsername: string;
  keystonePasswordFile?: string;
  keystoneProject: string;
  keystoneUserDomain: string;
  keystoneProjectDomain: string;
  keystoneRoles: string;
  keystoneCacheSeconds: string;
}

/**
 * Keystone's options from the flags, or undefined without a URL. The
 * password comes from `--keystone-password-file` (its first line), else
 * RELABEL_KEYSTONE_PASSWORD, never from the command line. Throws naming
 * the flag that is wrong.
 */
export function keystoneOptions(flags: KeystoneFlags, env: NodeJS.ProcessEnv = process.env): KeystoneOptions | undefined {
  if (!flags.keystoneUrl) return undefined;
  const password = flags.keystonePasswordFile
    ? (readFileSync(flags.keystonePasswordFile, 'utf8').split('\n', 1)[0] ?? '')
    : (variableFromEnv(VARIABLES.keystonePassword, env) ?? '');
  if (password === '') throw new Error("--keystone-url needs relabel's service password: --keystone-password-file FILE or RELABEL_KEYSTONE_PASSWORD");
  if (!flags.keystoneUsername) throw new Error("--keystone-url needs relabel's service user: --keystone-username or RELABEL_KEYSTONE_USERNAME");
  const cacheSeconds = Number(flags.keystoneCacheSeconds);
  if (!/^[0-9]+$/.test(flags.keystoneCacheSeconds) || cacheSeconds > 3600) {
    throw new Error(`--keystone-cache-seconds ${flags.keystoneCacheSeconds}: expected a whole number of seconds from 0 to 3600`);
  }
  return {
    url: flags.keystoneUrl,
    username: flags.keystoneUsername,
    password,
    projectName: flags.keystoneProject,
    userDomainName: flags.keystoneUserDomain,
    projectDomainName: flags.keystoneProjectDomain,
    roles: parseKeystoneRoles(flags.keystoneRoles),
    cacheSeconds,
  };
}

/** What {@link startApi} needs. */
export interface ApiOptions {
  listen: string;
  tokens: readonly ApiToken[];
  /** Keystone, asked for tokens none of `tokens` matches. */
  keystone?: KeystoneOptions;
  facade: RelabelConfig;
  /** kubeconfig for node-labels; absent: KUBECONFIG, in-cluster, ~/.kube/config. */
  kubeconfig?: string;
  bodyLimit?: number;
  logLevel?: string;
}

/** Opens the facade and serves the API; `close()` stops serving, then closes the facade. */
export async function startApi(options: ApiOptions): Promise<{ app: FastifyInstance; url: string; close(): Promise<void> }> {
  const { host, port } = parseListen(options.listen);
  // The configuration first: a bad Temporal profile or kubeconfig is refused before anything is opened.
  connectOptions(options.facade);
  const nodes = createNodeApi(loadKubeConfig(options.kubeconfig));
  const keystone = options.keystone ? createKeystoneVerifier(options.keystone) : undefined;
  const relabel = await openRelabel(options.facade);
  const app = createApiServer({
    relabel,
    nodes,
    tokens: options.tokens,
    ...(keystone ? { keystone } : {}),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    logger: { level: options.logLevel ?? 'info', base: { component: 'relabel-api' } },
  });
  let url: string;
  try {
    url = await app.listen({ host, port });
  } catch (err) {
    await relabel.close();
    throw err;
  }
  return {
    app,
    url,
    async close() {
      await app.close();
      await relabel.close();
    },
  };
}

/** The API server's options from the settings table, each defaulting to its variable's value; throws SettingError for a refused variable. */
function apiOptions(env: NodeJS.ProcessEnv, facade: RelabelConfig): Option[] {
  const from = { env };
  return [
    settingOption(API.listen).makeOptionMandatory(),
    settingOption(API.tokensFile),
    ...[API.keystoneUrl, API.keystoneUsername, API.keystonePasswordFile, API.keystoneProject, API.keystoneUserDomain, API.keystoneProjectDomain].map((s) =>
      settingOption<string>(s, from),
    ),
    settingOption(API.keystoneRoles, { env, fallback: DEFAULT_KEYSTONE_ROLES }),
    settingOption(API.keystoneCacheSeconds, from),
    ...connectionOptions(env, facade),
    settingOption(API.bodyLimit, { env, fallback: DEFAULT_BODY_LIMIT }),
    settingOption(CONNECTION.logLevel, from),
  ];
}

/** The command line: `relabel-api --listen HOST:PORT [--tokens-file FILE] …` (`name`: `relabel api` when the CLI runs it). */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, name = 'relabel-api'): Promise<void> {
  const program = new Command(name).description('Serve the Airship-compatible HTTP API of relabel');
  const facade = addSettingOptions(program, () => {
    const read = relabelConfigFromEnv(env);
    return { options: apiOptions(env, read), read };
  });
  const opts = program.parse(argv).opts<
    KeystoneFlags & {
      listen: string;
      tokensFile?: string;
      address: string;
      namespace: string;
      taskQueue: string;
      fleetTaskQueue?: string;
      store?: string;
      kubeconfig?: string;
      bodyLimit: number;
      logLevel: string;
    }
  >();
  const bodyLimit = opts.bodyLimit;
  const keystone = keystoneOptions(opts, env);
  const api = await startApi({
    listen: opts.listen,
    tokens: loadTokens(opts.tokensFile, env, keystone !== undefined),
    ...(keystone ? { keystone } : {}),
    facade: {
      ...facade,
      temporalAddress: opts.address,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      ...(opts.fleetTaskQueue ? { fleetTaskQueue: opts.fleetTaskQueue } : {}),
      ...(opts.store ? { storeUrl: opts.store } : {}),
    },
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    bodyLimit,
    logLevel: opts.logLevel,
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      api.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      api.close().then(
        () => process.exit(0),
        (err: unknown) => {
          api.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  process.send?.({ ready: true, url: api.url });
}

if (import.meta.main) {
  main(process.argv).catch((err: unknown) => {
    console.error(`relabel-api: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
