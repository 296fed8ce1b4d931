/**
 * A fleet of independent sites on this machine: one Temporal (temporal-server
 * on PostgreSQL) shared by all, and per site its own etcd, kube-apiserver and
 * KWOK on ports and a directory of its own, its API server keeping an audit
 * log of every write to a Node and knowing the site's worker as a user of
 * the site's own (`relabel-worker-<site>`). Site worker processes get only
 * their own site's kubeconfig and store and poll `relabel-<site>`; the
 * centre worker (`--role centre`) holds neither.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readSync, closeSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../src/worker/config.ts';
import { startControlPlane } from './control-plane.ts';
import { startKube, type KubeStack } from './kube.ts';
import { createKwokNodes, startKwok, waitForKwokNodes } from './kwok.ts';
import { freeLoopbackPort, stopProcess, type ManagedProcess } from './processes.ts';
import { restartTemporalServer, startTemporalPostgres, type TemporalPostgresStack } from './temporal-postgres.ts';

/** One site as the fleet starts it. */
export interface FleetSiteSpec {
  /** The site's name, as its documents name it. */
  site: string;
  /** The KWOK Nodes its cluster registers. */
  nodes: string[];
  /** Run the DaemonSet controller and the scheduler too, for a health gate with pods to wait for. */
  controlPlane?: boolean;
}

/** A running site cluster. */
export interface FleetSiteCluster {
  site: string;
  taskQueue: string;
  nodes: string[];
  kube: KubeStack;
  /** The site's processes in start order (etcd first). */
  processes: ManagedProcess[];
  /** How long the site took to come up, Nodes Ready. */
  startMs: number;
}

/** The fleet's servers. */
export interface FleetStack {
  dir: string;
  temporalAddress: string;
  sites: FleetSiteCluster[];
  /** Stops temporal-server, waits `downMs`, starts it again on the same database. */
  restartTemporal(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The task queue a site's worker polls. */
export const siteTaskQueue = (site: string): string => `relabel-${site}`;

/** The user a site's worker authenticates as to its own API server. */
export const siteWorkerUser = (site: string): string => `relabel-worker-${site}`;

async function startSite(dir: string, spec: FleetSiteSpec, heartbeatSeconds: number, env: NodeJS.ProcessEnv): Promise<FleetSiteCluster> {
  const t0 = Date.now();
  mkdirSync(dir, { recursive: true });
  const ports = { etcdClient: await freeLoopbackPort(), etcdPeer: await freeLoopbackPort(), apiserver: await freeLoopbackPort() };
  const kube = await startKube(dir, ports, env, { relabelUser: siteWorkerUser(spec.site), auditNodeWrites: true });
  const processes: ManagedProcess[] = [kube.etcd, kube.apiserver];
  try {
    if (spec.controlPlane) {
      const plane = await startControlPlane(
        dir,
        {
          adminKubeconfig: kube.adminKubeconfig,
          serviceAccountKey: kube.serviceAccountKey,
          caFile: kube.caFile,
          ports: { controllerManager: await freeLoopbackPort(), scheduler: await freeLoopbackPort() },
          // What a health gate needs: DaemonSet pods (and the service account they are admitted under); no node lifecycle controller to taint quiet nodes.
          controllers: ['daemonset', 'serviceaccount'],
        },
        env,
      );
      processes.push(plane.controllerManager, plane.scheduler);
    }
    // No Leases: with no node lifecycle controller nothing reads them, and they cost each API server a write per node every few seconds.
    const kwok = await startKwok(dir, { adminKubeconfig: kube.adminKubeconfig, heartbeatSeconds, leaseSeconds: 0, port: await freeLoopbackPort() }, env);
    processes.push(kwok);
    const admin = new KubeConfig();
    admin.loadFromFile(kube.adminKubeconfig);
    await createKwokNodes(admin, spec.nodes);
    // The API server taints a new Node not-ready; with no node lifecycle controller to lift it, the site's admin does.
    const core = admin.makeApiClient(CoreV1Api);
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    for (const name of spec.nodes) await core.patchNode({ name, body: { spec: { taints: null } } }, merge);
    await waitForKwokNodes(admin, spec.nodes, 120_000 + spec.nodes.length * 100);
    return { site: spec.site, taskQueue: siteTaskQueue(spec.site), nodes: spec.nodes, kube, processes, startMs: Date.now() - t0 };
  } catch (err) {
    for (const p of processes.reverse()) await stopProcess(p);
    throw err;
  }
}

/**
 * Starts Temporal on PostgreSQL, then each site in turn (one at a time: a
 * 2-core machine starts eight API servers at once no faster, and each
 * start's failure is then its own). On failure stops what it started.
 */
export async function startFleetStack(options: {
  dir: string;
  sites: FleetSiteSpec[];
  /** KWOK's status heartbeat of each Node, in seconds (0: none). Default 120. */
  heartbeatSeconds?: number;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}): Promise<FleetStack> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const temporalDir = join(options.dir, 'temporal-postgres');
  let t0 = Date.now();
  let temporal: TemporalPostgresStack = await startTemporalPostgres(
    temporalDir,
    { frontend: await freeLoopbackPort(), http: await freeLoopbackPort(), metrics: await freeLoopbackPort() },
    env,
  );
  log(`Temporal on PostgreSQL ready at ${temporal.address} (${Date.now() - t0} ms)`);
  const sites: FleetSiteCluster[] = [];
  const stop = async () => {
    for (const s of [...sites].reverse()) for (const p of [...s.processes].reverse()) await stopProcess(p);
    for (const p of [...temporal.processes].reverse()) await stopProcess(p);
  };
  try {
    for (const spec of options.sites) {
      t0 = Date.now();
      const site = await startSite(join(options.dir, 'sites', spec.site), spec, options.heartbeatSeconds ?? 120, env);
      sites.push(site);
      log(
        `site ${spec.site}: etcd, kube-apiserver${spec.controlPlane ? ', controller manager, scheduler' : ''} and KWOK with ${spec.nodes.length} Nodes Ready (${Date.now() - t0} ms)`,
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dir: options.dir,
    temporalAddress: temporal.address,
    sites,
    async restartTemporal(downMs = 0) {
      temporal = await restartTemporalServer(temporalDir, temporal, downMs, env);
    },
    stop,
  };
}

const WORKER_ENTRY = new URL('../src/worker.ts', import.meta.url).pathname;

/**
 * A worker process (src/worker.ts) with `env` over this process's own and
 * relabel's worker settings; resolves once it polls. `centre` runs the
 * centre's role: the fleet's workflows, no kubeconfig, no store.
 */
export function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(WORKER_ENTRY, [], {
    execArgv: [...WORKER_NODE_FLAGS],
    env: { ...process.env, ...WORKER_ENV, RELABEL_LOG_LEVEL: 'warn', RELABEL_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { ready?: boolean }) => {
      if (m.ready) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/** A site's worker: only its own site's kubeconfig and store, on its own queue. */
export function startSiteWorker(fleet: Pick<FleetStack, 'temporalAddress'>, site: FleetSiteCluster, storeUrl: string): Promise<ChildProcess> {
  return startWorkerProcess({
    TEMPORAL_ADDRESS: fleet.temporalAddress,
    KUBECONFIG: site.kube.kubeconfig,
    RELABEL_STORE_URL: storeUrl,
    RELABEL_TASK_QUEUE: site.taskQueue,
  });
}

/** The centre's worker: the fleet's workflows on the fleet task queue; no cluster's credentials, no store. */
export function startCentreWorker(fleet: Pick<FleetStack, 'temporalAddress'>): Promise<ChildProcess> {
  // KUBECONFIG and RELABEL_STORE_URL left in this process's environment are ignored by the centre.
  return startWorkerProcess({ TEMPORAL_ADDRESS: fleet.temporalAddress, RELABEL_WORKER_ROLE: 'centre' });
}

/** Where an audit log ends now: {@link auditedNodeWrites} from here reads only what comes after. */
export function auditMark(log: string): number {
  return existsSync(log) ? statSync(log).size : 0;
}

/** Writes to Nodes an API server's audit log holds: by user, then by Node, those it answered with success. */
export type NodeWrites = Map<string, Map<string, number>>;

/**
 * The successful creates, updates, patches and deletes of Nodes (not their
 * status) in the audit log `log` from byte `from` on, counted by the user
 * that made each and the Node it wrote.
 */
export function auditedNodeWrites(log: string, from = 0): NodeWrites {
  const writes: NodeWrites = new Map();
  if (!existsSync(log)) return writes;
  const size = statSync(log).size;
  const buffer = Buffer.alloc(Math.max(0, size - from));
  const fd = openSync(log, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  for (const line of buffer.toString('utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as {
      stage?: string;
      verb?: string;
      user?: { username?: string };
      objectRef?: { resource?: string; subresource?: string; name?: string };
      responseStatus?: { code?: number };
    };
    const code = event.responseStatus?.code ?? 0;
    if (event.stage !== 'ResponseComplete' || event.objectRef?.resource !== 'nodes' || event.objectRef.subresource || code < 200 || code > 299) continue;
    const user = event.user?.username ?? '';
    const byNode = writes.get(user) ?? new Map<string, number>();
    const node = event.objectRef.name ?? '';
    byNode.set(node, (byNode.get(node) ?? 0) + 1);
    writes.set(user, byNode);
  }
  return writes;
}
