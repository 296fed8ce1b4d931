/**
 * A throwaway real PostgreSQL server for tests and the local stack: a data
 * directory of its own, listening on 127.0.0.1 only, trust authentication
 * (loopback is the only way in), its Unix socket inside the data directory.
 *
 * PostgreSQL refuses to run as root. When we are root the server runs as the
 * `postgres` system user (created with `useradd` when absent), which owns the
 * data directory; otherwise it runs as ourselves. Where the binaries come
 * from: ./postgres-bin.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { blockedAbove, canEnter, defaultPostgresSources, findPostgresBin, runnablePostgresBin, type Identity } from './postgres-bin.ts';
import { freeLoopbackPort, isAlive, logTail, waitUntil, type ManagedProcess } from './processes.ts';

/** System user the server runs as when we are root. */
export const POSTGRES_USER = 'postgres';

/** Database role and database name of the throwaway server. */
export const POSTGRES_SUPERUSER = 'postgres';

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** Directory for the data directory (`pgdata/`) and logs; created when absent, reused when initialized. */
  readonly dir: string;
  /** Loopback TCP port; default: a free one. */
  readonly port?: number;
  /**
   * Keep fsync and full-page writes on. Default false: a throwaway server
   * trades crash safety for speed.
   */
  readonly durable?: boolean;
  /**
   * Leave the server running when this process exits without calling
   * `stop()` (the local stack, which outlives its command). Default false.
   */
  readonly keepAfterExit?: boolean;
  /** How long to wait for the server to accept connections, in ms. Default 60 000. */
  readonly timeoutMs?: number;
  /** Environment used to find the binaries (`RELABEL_PG_BIN`, `PATH`): see {@link findPostgresBin}. */
  readonly env?: NodeJS.ProcessEnv;
}

/** A running server. */
export interface PostgresServer {
  /** Connection URL of the `postgres` database as the `postgres` superuser. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Server log file. */
  readonly log: string;
  /** The postmaster; its pid is also its process group id. */
  readonly process: ManagedProcess;
  /** Fast shutdown; resolves once no server process is left. Idempotent. */
  stop(): Promise<void>;
}

function lookupUser(name: string): Identity | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** The identity to run the server as: ourselves, or when root the `postgres` user (created if missing). */
function serverIdentity(): Identity | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookupUser(POSTGRES_USER);
  if (existing) return existing;
  try {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', POSTGRES_USER], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (error) {
    throw new Error(`PostgreSQL cannot run as root and creating the '${POSTGRES_USER}' user failed: ${String(error)}`);
  }
  const created = lookupUser(POSTGRES_USER);
  if (!created) throw new Error(`user '${POSTGRES_USER}' still missing after useradd`);
  return created;
}

/** Throw unless `who` can traverse every directory above `path`. */
function assertReachable(path: string, who: Identity): void {
  const blocked = blockedAbove(dirname(path), who);
  if (blocked !== undefined) {
    throw new Error(
      `the '${POSTGRES_USER}' user (uid ${who.uid}) cannot enter ${blocked} on the way to ${path}; ` +
        'choose a directory it can reach (e.g. under /tmp) or make the parents traversable',
    );
  }
}

/**
 * Create `dir` and let the server's user traverse it (often a private mkdtemp
 * directory) and any directory created here above it: traversal only, not
 * listing. Directories that existed above `dir` are not ours to open up: when
 * one blocks the way, fail with a clear message instead.
 */
function prepareDir(dir: string, who: Identity | undefined): void {
  const firstCreated = mkdirSync(dir, { recursive: true });
  if (!who) return;
  const ours = [dir];
  if (firstCreated !== undefined) {
    for (let d = dirname(dir); d.length >= firstCreated.length && d !== dirname(d); d = dirname(d)) ours.push(d);
  }
  for (const d of ours) if (!canEnter(d, who)) chmodSync(d, (statSync(d).mode & 0o7777) | 0o001);
  assertReachable(join(dir, 'pgdata'), who);
}

/** Create (or reuse) the data directory, owned by the server's user, and run initdb when it is new. */
function initDataDir(bin: string, dir: string, dataDir: string, who: Identity | undefined, durable: boolean): void {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  // A data directory without PG_VERSION is a failed earlier initdb: start over.
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { mode: 0o700 });
  if (who) chownSync(dataDir, who.uid, who.gid);
  const log = join(dir, 'initdb.log');
  const fd = openSync(log, 'w');
  try {
    const args = ['-D', dataDir, '-U', POSTGRES_SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C'];
    if (!durable) args.push('--no-sync');
    execFileSync(join(bin, 'initdb'), args, {
      stdio: ['ignore', fd, fd],
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C' },
      ...(who ?? {}),
    });
  } catch (error) {
    throw new Error(`initdb failed (${String(error)}); last lines of ${log}:\n${logTail(log)}`);
  } finally {
    closeSync(fd);
  }
}

function readFrom(file: string, offset: number): string {
  return readFileSync(file).subarray(offset).toString('utf8');
}

/**
 * True when the server at `url` answers queries and is ours: another server
 * already listening on the port must not pass for the one just started.
 */
async function servesDataDir(url: string, dataDir: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory');
    return rows[0]?.data_directory === dataDir;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** True while any process of the group led by `pgid` is left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stop a server started by {@link startPostgres}, from any process: fast
 * shutdown (SIGINT: clients disconnected, checkpoint, exit), then immediate
 * shutdown (SIGQUIT) after `graceMs`, then SIGKILL to its process group.
 * Resolves once no process of the server's group is left. Idempotent.
 */
export async function stopPostgres(p: Pick<ManagedProcess, 'pid'>, graceMs = 30_000): Promise<void> {
  const signal = (target: number, sig: NodeJS.Signals) => {
    try {
      process.kill(target, sig);
    } catch {
      // already gone
    }
  };
  const waitUntilGone = async (alive: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (alive() && Date.now() < deadline) await sleep(50);
    return !alive();
  };
  const leader = () => isAlive(p.pid);
  if (leader()) {
    signal(p.pid, 'SIGINT');
    if (!(await waitUntilGone(leader, graceMs))) {
      signal(p.pid, 'SIGQUIT');
      await waitUntilGone(leader, 5_000);
    }
  }
  // Backends outliving the postmaster exit on their own when they notice its
  // death. While one is left the group id cannot have been reused, so killing
  // the group can only hit the server's own processes.
  const group = () => groupAlive(p.pid);
  if (!(await waitUntilGone(group, 5_000))) {
    signal(-p.pid, 'SIGKILL');
    await waitUntilGone(group, 5_000);
  }
}

function spawnServer(bin: string, dataDir: string, port: number, log: string, who: Identity | undefined, durable: boolean): Promise<ManagedProcess> {
  const settings = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${dataDir}`,
    'logging_collector=off',
    ...(durable ? [] : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off']),
  ];
  const fd = openSync(log, 'a');
  try {
    const child = spawn(join(bin, 'postgres'), ['-D', dataDir, '-p', String(port), ...settings.flatMap((s) => ['-c', s])], {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C' },
      ...(who ?? {}),
    });
    return new Promise((resolvePid, reject) => {
      child.once('error', (err) => reject(new Error(`cannot start postgres: ${err.message}`)));
      child.once('spawn', () => {
        child.unref();
        resolvePid({ name: 'postgres', pid: child.pid as number, log });
      });
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Start a PostgreSQL server under `dir` (initializing `dir/pgdata` on first
 * use) and wait until it answers queries. On failure nothing is left running
 * and the error carries the end of the log. Throws a MissingPostgresError
 * when the binaries are not found (see {@link findPostgresBin}).
 */
export async function startPostgres(options: StartPostgresOptions): Promise<PostgresServer> {
  const dir = resolve(options.dir);
  const durable = options.durable ?? false;
  const sources = defaultPostgresSources();
  const who = serverIdentity();
  const bin = runnablePostgresBin(findPostgresBin(options.env, sources), who, sources.packaged);
  prepareDir(dir, who);
  const dataDir = join(dir, 'pgdata');
  initDataDir(bin, dir, dataDir, who, durable);
  const log = join(dir, 'postgres.log');
  // A port picked for us may be taken by someone else before the server binds it: retry with another.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freeLoopbackPort());
    const url = `postgres://${POSTGRES_SUPERUSER}@127.0.0.1:${port}/postgres`;
    const logStart = existsSync(log) ? statSync(log).size : 0;
    const proc = await spawnServer(bin, dataDir, port, log, who, durable);
    try {
      await waitUntil(proc, 'accepting queries', () => servesDataDir(url, dataDir), options.timeoutMs ?? 60_000);
    } catch (error) {
      await stopPostgres(proc, 5_000);
      const portTaken = /could not bind|Address already in use/.test(readFrom(log, logStart));
      if (options.port === undefined && portTaken && attempt < 3) continue;
      throw error;
    }
    // Last resort for a test process that ends without calling stop(); a
    // SIGKILLed process cannot run it, so stop() stays the contract.
    const onExit = () => {
      try {
        process.kill(proc.pid, 'SIGINT');
      } catch {
        // already gone
      }
    };
    if (!options.keepAfterExit) process.once('exit', onExit);
    return {
      url,
      port,
      dataDir,
      log,
      process: proc,
      stop: async () => {
        process.off('exit', onExit);
        await stopPostgres(proc);
      },
    };
  }
}
