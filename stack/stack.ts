/**
 * The local stack: a real Temporal dev server (with Web UI) and a real
 * etcd + kube-apiserver, all on loopback, state kept in a directory so that
 * `stack:down` from another process stops exactly what `stack:up` started.
 */
import { mkdirSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freeLoopbackPort, isAlive, stopProcess, type ManagedProcess } from './processes.ts';
import { startKube } from './kube.ts';
import { startTemporal } from './temporal.ts';
import { startTemporalPostgres } from './temporal-postgres.ts';
import { startSimulatedCluster, type SimulatedClusterInfo, type SimulatedClusterOptions } from './simulated-cluster.ts';

/** Loopback ports the stack listens on. */
export interface StackPorts {
  temporal: number;
  temporalUi: number;
  temporalHttp: number;
  temporalMetrics: number;
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  /** The simulated cluster's listeners (health and metrics), used only when it runs. */
  controllerManager?: number;
  scheduler?: number;
  kwok?: number;
}

/** Ports used by `stack:up` when none are given: Temporal's and Kubernetes' usual ones. */
export const DEFAULT_PORTS: StackPorts = {
  temporal: 7233,
  temporalUi: 8233,
  temporalHttp: 7243,
  temporalMetrics: 7244,
  etcdClient: 2379,
  etcdPeer: 2380,
  apiserver: 6443,
  controllerManager: 10257,
  scheduler: 10259,
  kwok: 10247,
};

/**
 * Which Temporal the stack runs: the CLI's dev server (SQLite, Web UI; the
 * default and the demo's), or temporal-server on PostgreSQL
 * (./temporal-postgres.ts), shaped as a production cluster and without a Web UI.
 */
export const StackTemporal = { dev: 'dev', postgres: 'postgres' } as const;

/** One of the {@link StackTemporal} kinds. */
export type StackTemporal = (typeof StackTemporal)[keyof typeof StackTemporal];

/** What a running stack offers its clients; saved as `stack.json` in its directory. */
export interface StackInfo {
  dir: string;
  ports: StackPorts;
  /** Which Temporal runs; absent in state saved before there was a choice (the dev server). */
  temporal?: StackTemporal;
  temporalAddress: string;
  /** The Web UI; empty when the stack's Temporal has none (`postgres`). */
  temporalUiUrl: string;
  kubeServer: string;
  /** Least-privilege kubeconfig for relabel (read and patch Nodes). */
  kubeconfig: string;
  /** Cluster-admin kubeconfig, for creating Nodes in tests and the demo. */
  adminKubeconfig: string;
  /** The simulated cluster (controller manager, scheduler, KWOK), when the stack runs one. */
  simulatedCluster?: SimulatedClusterInfo;
  processes: ManagedProcess[];
}

/** Allocates a free loopback port for every stack listener. */
export async function freePorts(): Promise<StackPorts> {
  const ports = {} as StackPorts;
  const taken = new Set<number>();
  for (const key of Object.keys(DEFAULT_PORTS) as (keyof StackPorts)[]) {
    let port = await freeLoopbackPort();
    while (taken.has(port)) port = await freeLoopbackPort();
    taken.add(port);
    ports[key] = port;
  }
  return ports;
}

function stateFile(dir: string): string {
  return join(dir, 'stack.json');
}

/** Reads the saved state of the stack in `dir`, or null when none is recorded. */
export function readStack(dir: string): StackInfo | null {
  const file = stateFile(resolve(dir));
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}

/**
 * Starts the whole stack under `dir` and waits until every server is ready.
 * With `kwok`, also the simulated cluster (controller manager, scheduler,
 * KWOK and its Nodes, all Ready); its ports come from `ports`, or free ones.
 * With `temporal: 'postgres'`, Temporal is temporal-server on a PostgreSQL
 * of its own instead of the dev server (its frontend, HTTP and metrics on the
 * same ports). Refuses when a stack recorded in `dir` is still running. On any
 * failure the servers already started are stopped before the error is thrown.
 */
export async function startStack(options: {
  dir: string;
  ports?: StackPorts;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  kwok?: SimulatedClusterOptions;
  temporal?: StackTemporal;
}): Promise<StackInfo> {
  const dir = resolve(options.dir);
  const log = options.log ?? (() => {});
  const existing = readStack(dir);
  if (existing && existing.processes.some((p) => isAlive(p.pid))) {
    throw new Error(`a stack is already running in ${dir}; stop it first (npm run stack:down)`);
  }
  mkdirSync(dir, { recursive: true });
  const ports = options.ports ?? DEFAULT_PORTS;
  const started: ManagedProcess[] = [];
  try {
    let t0 = Date.now();
    const kube = await startKube(join(dir, 'kube'), { etcdClient: ports.etcdClient, etcdPeer: ports.etcdPeer, apiserver: ports.apiserver }, options.env);
    started.push(kube.etcd, kube.apiserver);
    log(`kube-apiserver ready at ${kube.server} (${Date.now() - t0} ms)`);
    t0 = Date.now();
    const temporalKind = options.temporal ?? StackTemporal.dev;
    let temporal: { address: string; uiUrl: string };
    if (temporalKind === StackTemporal.postgres) {
      const server = await startTemporalPostgres(
        join(dir, 'temporal-postgres'),
        { frontend: ports.temporal, http: ports.temporalHttp, metrics: ports.temporalMetrics },
        options.env,
      );
      started.push(...server.processes);
      temporal = { address: server.address, uiUrl: '' };
      log(`Temporal (temporal-server on PostgreSQL) ready at ${server.address} (${Date.now() - t0} ms)`);
    } else {
      mkdirSync(join(dir, 'temporal'), { recursive: true });
      const dev = await startTemporal(
        join(dir, 'temporal'),
        { frontend: ports.temporal, ui: ports.temporalUi, http: ports.temporalHttp, metrics: ports.temporalMetrics },
        options.env,
      );
      started.push(dev.process);
      temporal = dev;
      log(`Temporal ready at ${dev.address}, Web UI ${dev.uiUrl} (${Date.now() - t0} ms)`);
    }
    let simulatedCluster: SimulatedClusterInfo | undefined;
    if (options.kwok) {
      const sim = await startSimulatedCluster(
        join(dir, 'kube'),
        {
          adminKubeconfig: kube.adminKubeconfig,
          serviceAccountKey: kube.serviceAccountKey,
          caFile: kube.caFile,
          ports: {
            controllerManager: ports.controllerManager ?? (await freeLoopbackPort()),
            scheduler: ports.scheduler ?? (await freeLoopbackPort()),
            kwok: ports.kwok ?? (await freeLoopbackPort()),
          },
        },
        options.kwok,
        options.env,
        log,
      );
      started.push(...sim.processes);
      simulatedCluster = sim.info;
    }
    const info: StackInfo = {
      dir,
      ports,
      temporal: temporalKind,
      temporalAddress: temporal.address,
      temporalUiUrl: temporal.uiUrl,
      kubeServer: kube.server,
      kubeconfig: kube.kubeconfig,
      adminKubeconfig: kube.adminKubeconfig,
      ...(simulatedCluster ? { simulatedCluster } : {}),
      processes: started,
    };
    writeFileSync(stateFile(dir), JSON.stringify(info, null, 2));
    return info;
  } catch (err) {
    await Promise.all(started.map((p) => stopProcess(p)));
    throw err;
  }
}

/**
 * Stops every process of the stack recorded in `dir` (KWOK, the scheduler
 * and the controller manager first, then Temporal, etcd last) and waits for each to exit. Returns the names stopped; a stack that
 * is not running is not an error. With `purge`, removes the directory too.
 */
export async function stopStack(dir: string, options: { purge?: boolean } = {}): Promise<string[]> {
  const info = readStack(dir);
  const stopped: string[] = [];
  if (info) {
    for (const p of [...info.processes].reverse()) {
      if (isAlive(p.pid)) stopped.push(p.name);
      await stopProcess(p);
    }
    rmSync(stateFile(resolve(dir)), { force: true });
  }
  if (options.purge) rmSync(resolve(dir), { recursive: true, force: true });
  return stopped;
}

/**
 * Restarts the Temporal dev server of the stack in `dir` on the same ports
 * and database file (workflows resume where they were), after `downMs`
 * with it stopped; with `empty`, on a new database instead (every workflow
 * and history gone, the search attributes registered again). Records the
 * new process in the stack's state and returns it.
 */
export async function restartTemporal(dir: string, downMs = 0, options: { empty?: boolean } = {}): Promise<ManagedProcess> {
  const info = readStack(dir);
  const old = info?.processes.find((p) => p.name === 'temporal');
  if (!info || !old) throw new Error(`no running stack with a Temporal dev server in ${dir}`);
  await stopProcess(old);
  await new Promise((r) => setTimeout(r, downMs));
  const { ports } = info;
  const home = join(resolve(dir), 'temporal');
  if (options.empty) for (const file of ['temporal.db', 'temporal.db-wal', 'temporal.db-shm']) rmSync(join(home, file), { force: true });
  const temporal = await startTemporal(home, {
    frontend: ports.temporal,
    ui: ports.temporalUi,
    http: ports.temporalHttp,
    metrics: ports.temporalMetrics,
  });
  const processes = info.processes.map((p) => (p.name === 'temporal' ? temporal.process : p));
  writeFileSync(stateFile(resolve(dir)), JSON.stringify({ ...info, processes }, null, 2));
  return temporal.process;
}
