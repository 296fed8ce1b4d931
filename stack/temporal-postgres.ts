/**
 * A production-shaped Temporal for the local stack: `temporal-server` (the
 * frontend, history, matching and worker services in one process) on a
 * PostgreSQL of its own, with SQL visibility, the schemas installed by
 * `temporal-sql-tool`, and the `default` namespace and relabel's search
 * attributes registered through the operator API, as docs/deploy.md tells an
 * operator to. Started by `npm run stack:up -- --temporal postgres` and by
 * the tests under `RELABEL_TEST_TEMPORAL=postgres`; the demo keeps the dev
 * server (./temporal.ts).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import { SEARCH_ATTRIBUTES } from '../src/core/plan/constants.ts';
import { startPostgres, POSTGRES_SUPERUSER } from './postgres.ts';
import { freeLoopbackPort, portOpen, startProcess, stopProcess, waitUntil, type ManagedProcess } from './processes.ts';
import { MissingToolError, toolPath, toolsDir } from './tools.ts';

const run = promisify(execFile);

/** The namespace relabel runs in, and how long Temporal keeps its closed workflows. */
export const TEMPORAL_NAMESPACE = 'default';
/** Retention of {@link TEMPORAL_NAMESPACE}: three days, as `temporal operator namespace create --retention 72h`. */
export const NAMESPACE_RETENTION_HOURS = 72;

/** History shards: fixed for the life of a cluster; four is plenty on one machine. */
export const NUM_HISTORY_SHARDS = 4;

/** The two databases Temporal keeps: its state, and SQL visibility. */
export const TEMPORAL_DATABASES = { main: 'temporal', visibility: 'temporal_visibility' } as const;

/** What {@link startTemporalPostgres} started, PostgreSQL first. */
export interface TemporalPostgresStack {
  /** PostgreSQL, then temporal-server: stop them in reverse order. */
  processes: ManagedProcess[];
  /** gRPC address clients and workers connect to (host:port). */
  address: string;
  /** The PostgreSQL server's URL (the `postgres` database). */
  postgresUrl: string;
}

/** The binaries `npm run tools` builds from tools/temporal-server (not needed by the dev-server stack). */
export const TemporalServerTool = {
  server: 'temporal-server',
  sqlTool: 'temporal-sql-tool',
} as const;

/** One of the {@link TemporalServerTool} names. */
export type TemporalServerTool = (typeof TemporalServerTool)[keyof typeof TemporalServerTool];

/** Resolves a {@link TemporalServerTool} in the tool cache; never builds it (as `toolPath`). */
export function temporalServerToolPath(tool: TemporalServerTool, env: NodeJS.ProcessEnv = process.env): string {
  const path = join(toolsDir(env), 'bin', tool);
  if (!existsSync(path)) {
    throw new MissingToolError(`${tool} is not built: expected it at ${path}. Run \`npm run tools\` (tools/build-tools.sh) to build it.`);
  }
  return path;
}

/** The `go.temporal.io/server` version tools/temporal-server/go.mod pins, which built the binaries. */
export function pinnedServerVersion(): string {
  const goMod = join(dirname(fileURLToPath(import.meta.url)), '..', 'tools', 'temporal-server', 'go.mod');
  const match = /^require go\.temporal\.io\/server (v\S+)$/m.exec(readFileSync(goMod, 'utf8'));
  if (!match?.[1]) throw new Error(`no go.temporal.io/server version in ${goMod}`);
  return match[1];
}

/**
 * The server module's PostgreSQL schema directory (`schema/postgresql/v12`)
 * in the Go module cache, where `npm run tools` downloaded it. Throws naming
 * the command when it is missing.
 */
export async function schemaDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout } = await run('go', ['env', 'GOMODCACHE'], { env });
  const dir = join(stdout.trim(), `go.temporal.io/server@${pinnedServerVersion()}`, 'schema', 'postgresql', 'v12');
  if (!existsSync(dir)) throw new Error(`Temporal's SQL schemas are missing at ${dir}; build the tools first: npm run tools`);
  return dir;
}

async function databaseExists(url: string, name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/**
 * Creates each Temporal database when absent and brings its schema to the
 * version the pinned server ships (`setup-schema -v 0.0` once, then
 * `update-schema` over the module's versioned directory): idempotent, so a
 * stack started again on the same directory keeps its workflows.
 */
async function installSchemas(url: string, port: number, env: NodeJS.ProcessEnv): Promise<void> {
  const sqlTool = temporalServerToolPath(TemporalServerTool.sqlTool, env);
  const schemas = await schemaDir(env);
  for (const [kind, db] of [
    ['temporal', TEMPORAL_DATABASES.main],
    ['visibility', TEMPORAL_DATABASES.visibility],
  ] as const) {
    const base = ['--plugin', 'postgres12', '--ep', '127.0.0.1', '-p', String(port), '-u', POSTGRES_SUPERUSER, '--db', db];
    if (!(await databaseExists(url, db))) {
      await run(sqlTool, [...base, 'create-database'], { env });
      await run(sqlTool, [...base, 'setup-schema', '-v', '0.0'], { env });
    }
    await run(sqlTool, [...base, 'update-schema', '-d', join(schemas, kind, 'versioned')], { env });
  }
}

/** Whether `port` on 127.0.0.1 can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port below 32768 for a membership (ringpop) listener: the
 * SQL schema keeps membership ports as `smallint`, and the ports the OS hands
 * out (32768 and up on Linux) do not fit.
 */
async function freeMembershipPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await canListen(port))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free loopback port between 20000 and 32000 for temporal-server membership');
}

/** Loopback ports of the server: the three the stack gives Temporal, the rest free ones. */
interface ServerPorts {
  frontend: number;
  http: number;
  metrics: number;
}

function datastore(db: string, port: number, maxConns: number) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName: db,
      connectAddr: `127.0.0.1:${port}`,
      connectProtocol: 'tcp',
      user: POSTGRES_SUPERUSER,
      password: '',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  };
}

/**
 * The server's static config (YAML, written as JSON, which YAML reads): as
 * the server's config/development-postgres12.yaml, on the given ports, with
 * no archival and the dynamic config file beside it.
 */
async function serverConfig(dir: string, pgPort: number, ports: ServerPorts) {
  const taken = new Set<number>();
  const rpc = async (grpcPort: number, extra: Record<string, number> = {}) => ({
    rpc: { grpcPort, membershipPort: await freeMembershipPort(taken), bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: NUM_HISTORY_SHARDS,
      datastores: {
        // Each of the four services opens its own pools: 4 × (10 + 3) stays well under PostgreSQL's 100 connections.
        'postgres-default': datastore(TEMPORAL_DATABASES.main, pgPort, 10),
        'postgres-visibility': datastore(TEMPORAL_DATABASES.visibility, pgPort, 3),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${ports.metrics}` } },
    },
    services: {
      frontend: await rpc(ports.frontend, { httpPort: ports.http }),
      history: await rpc(await freeLoopbackPort()),
      matching: await rpc(await freeLoopbackPort()),
      worker: await rpc(await freeLoopbackPort()),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: join(dir, 'dynamicconfig.yaml'), pollInterval: '10s' },
  };
}

/**
 * Registers the `default` namespace (with its retention) and relabel's search
 * attributes with the Temporal CLI, exactly as docs/deploy.md shows an
 * operator; an existing namespace or attribute is left as it is.
 */
export async function registerNamespace(address: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const temporal = toolPath('temporal', env);
  const cli = (args: string[]) => run(temporal, [...args, '--address', address], { env });
  const exists = await cli(['operator', 'namespace', 'describe', '--namespace', TEMPORAL_NAMESPACE]).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await cli(['operator', 'namespace', 'create', '--namespace', TEMPORAL_NAMESPACE, '--retention', `${NAMESPACE_RETENTION_HOURS}h`]);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) {
    // create is idempotent for an attribute already registered with the same type.
    await cli(['operator', 'search-attribute', 'create', '--namespace', TEMPORAL_NAMESPACE, '--name', name, '--type', type]);
  }
}

/**
 * True once the frontend serves the namespace with relabel's attributes: a
 * visibility query naming one of them is accepted (the frontend's namespace
 * and search attribute caches refresh on their own period after a change).
 */
async function namespaceReady(address: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const temporal = toolPath('temporal', env);
  const query = `${Object.keys(SEARCH_ATTRIBUTES)[1]} = 'ready'`;
  return run(temporal, ['workflow', 'count', '--namespace', TEMPORAL_NAMESPACE, '--query', query, '--address', address], { env }).then(
    () => true,
    () => false,
  );
}

/** temporal-server from the config file written under `dir`, its four services in one process. */
function startServerProcess(dir: string, server: string, env: NodeJS.ProcessEnv): Promise<ManagedProcess> {
  return startProcess(
    'temporal-server',
    server,
    [
      '--config-file',
      join(dir, 'temporal-server.yaml'),
      '--allow-no-auth',
      'start',
      ...['frontend', 'history', 'matching', 'worker'].flatMap((s) => ['--service', s]),
    ],
    join(dir, 'temporal-server.log'),
    env,
  );
}

/**
 * Stops the temporal-server of the stack `started` under `dir` (PostgreSQL
 * stays up), waits `downMs`, and starts it again on the same config and
 * database: workflows resume where they were. Resolves once the namespace
 * is served again; returns the stack with the new process in place.
 */
export async function restartTemporalServer(
  dir: string,
  started: TemporalPostgresStack,
  downMs = 0,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalPostgresStack> {
  const old = started.processes.find((p) => p.name === 'temporal-server');
  if (!old) throw new Error(`no temporal-server among the processes started under ${dir}`);
  await stopProcess(old);
  await new Promise((resolve) => setTimeout(resolve, downMs));
  const proc = await startServerProcess(dir, temporalServerToolPath(TemporalServerTool.server, env), env);
  const port = Number(started.address.split(':').pop());
  await waitUntil(proc, 'frontend port open', () => portOpen(port), 120_000);
  await waitUntil(proc, 'namespace and search attributes served', () => namespaceReady(started.address, env), 60_000);
  return { ...started, processes: started.processes.map((p) => (p === old ? proc : p)) };
}

/**
 * Starts PostgreSQL and temporal-server under `dir` on loopback, installs or
 * updates the schemas, registers the namespace and search attributes, and
 * waits until a client can use them. Reuses the data of an earlier start in
 * the same `dir`. On failure stops what it started and throws with the log
 * tail.
 */
export async function startTemporalPostgres(dir: string, ports: ServerPorts, env: NodeJS.ProcessEnv = process.env): Promise<TemporalPostgresStack> {
  const server = temporalServerToolPath(TemporalServerTool.server, env);
  mkdirSync(dir, { recursive: true });
  // PostgreSQL runs as another user when we are root (./postgres.ts): let it traverse (not list)
  // this directory and the stack's, often a private mkdtemp one, which are ours.
  for (const d of [dir, dirname(dir)]) {
    const st = statSync(d);
    if (process.getuid?.() === 0 && st.uid === 0) chmodSync(d, (st.mode & 0o7777) | 0o001);
  }
  const postgres = await startPostgres({ dir: join(dir, 'postgres'), keepAfterExit: true, env });
  const processes: ManagedProcess[] = [{ ...postgres.process, name: 'temporal-postgres' }];
  try {
    await installSchemas(postgres.url, postgres.port, env);
    const configFile = join(dir, 'temporal-server.yaml');
    writeFileSync(configFile, JSON.stringify(await serverConfig(dir, postgres.port, ports), null, 2));
    // The dev server's settings (./temporal.ts) are for SQLite in one connection; this one keeps the defaults.
    writeFileSync(join(dir, 'dynamicconfig.yaml'), '{}\n');
    const proc = await startServerProcess(dir, server, env);
    processes.push(proc);
    const address = `127.0.0.1:${ports.frontend}`;
    await waitUntil(proc, 'frontend port open', () => portOpen(ports.frontend), 120_000);
    await waitUntil(
      proc,
      'namespace registered',
      () =>
        registerNamespace(address, env).then(
          () => true,
          () => false,
        ),
      60_000,
    );
    await waitUntil(proc, 'namespace and search attributes served', () => namespaceReady(address, env), 60_000);
    return { processes, address, postgresUrl: postgres.url };
  } catch (error) {
    for (const p of [...processes].reverse()) await stopProcess(p);
    throw error;
  }
}
