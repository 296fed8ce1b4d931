/**
 * `relabel api --listen 127.0.0.1:PORT`: serves the HTTP API over the facade
 * configured from the environment (TEMPORAL_ADDRESS, RELABEL_STORE_URL, …;
 * see `relabelConfigFromEnv`) and flags. Tokens come from `--tokens-file`
 * (a YAML or JSON list of `{token, role, name?}`) or `RELABEL_API_TOKENS`
 * (`token:role,token:role`); without any the server refuses to start.
 * SIGTERM/SIGINT stop it gracefully: no new connections, in-flight requests
 * finish, then the store and Temporal connections are closed.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { createNodeApi, loadKubeConfig } from '../kube/nodes.ts';
import { openRelabel, relabelConfigFromEnv, type RelabelConfig } from '../facade/index.ts';
import { parseTokensEnv, parseTokensFile, type ApiToken } from './auth.ts';
import { createApiServer, DEFAULT_BODY_LIMIT } from './server.ts';
import { connectOptions } from '../temporal-settings.ts';

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

/** The tokens: from the file when given, else from `RELABEL_API_TOKENS`. Throws when there are none. */
export function loadTokens(tokensFile: string | undefined, env: NodeJS.ProcessEnv = process.env): ApiToken[] {
  if (tokensFile) return parseTokensFile(readFileSync(tokensFile, 'utf8'), tokensFile);
  if (env.RELABEL_API_TOKENS) return parseTokensEnv(env.RELABEL_API_TOKENS);
  throw new Error('no API tokens: give --tokens-file FILE or set RELABEL_API_TOKENS=token:role[:name],…');
}

/** What {@link startApi} needs. */
export interface ApiOptions {
  listen: string;
  tokens: readonly ApiToken[];
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
  const relabel = await openRelabel(options.facade);
  const app = createApiServer({
    relabel,
    nodes,
    tokens: options.tokens,
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

/** The command line: `relabel-api --listen HOST:PORT [--tokens-file FILE] …`. */
export async function main(argv: string[]): Promise<void> {
  const env = relabelConfigFromEnv();
  const program = new Command('relabel-api')
    .description('Serve the Airship-compatible HTTP API of relabel')
    .requiredOption('--listen <host:port>', 'address to listen on, e.g. 127.0.0.1:8000')
    .option('--tokens-file <file>', 'YAML or JSON list of {token, role, name?} (else RELABEL_API_TOKENS=token:role[:name],…); the name is recorded as who started a run')
    .option('--address <host:port>', 'Temporal frontend (TEMPORAL_ADDRESS)', env.temporalAddress)
    .option('--namespace <ns>', 'Temporal namespace (TEMPORAL_NAMESPACE)', env.namespace)
    .option('--task-queue <name>', 'task queue (RELABEL_TASK_QUEUE)', env.taskQueue)
    .option('--store <url>', 'revision store URL (RELABEL_STORE_URL)', env.storeUrl)
    .option('--kubeconfig <path>', 'kubeconfig for node-labels (KUBECONFIG; in-cluster when absent)', process.env.KUBECONFIG || undefined)
    .option('--body-limit <bytes>', 'largest request body', String(DEFAULT_BODY_LIMIT))
    .option('--log-level <level>', 'log level: trace, debug, info, warn or error (RELABEL_LOG_LEVEL)', process.env.RELABEL_LOG_LEVEL || 'info')
    .parse(argv);
  const opts = program.opts<{
    listen: string;
    tokensFile?: string;
    address: string;
    namespace: string;
    taskQueue: string;
    store?: string;
    kubeconfig?: string;
    bodyLimit: string;
    logLevel: string;
  }>();
  const bodyLimit = Number(opts.bodyLimit);
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1) throw new Error(`--body-limit ${opts.bodyLimit}: expected a positive number of bytes`);
  const api = await startApi({
    listen: opts.listen,
    tokens: loadTokens(opts.tokensFile),
    facade: {
      ...env,
      temporalAddress: opts.address,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
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
