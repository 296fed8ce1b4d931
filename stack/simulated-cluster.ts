/**
 * The simulated cluster: the real kube-controller-manager and kube-scheduler
 * beside the stack's API server, and KWOK playing the kubelets of N Nodes.
 * Labels then move workloads as in a real cluster (DaemonSets, node
 * selectors, taints), and the Nodes' status and Leases are written all the
 * time, as kubelets do.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from './control-plane.ts';
import { createKwokNodes, kwokNodeName, startKwok, waitForKwokNodes } from './kwok.ts';
import { stopProcess, type ManagedProcess } from './processes.ts';

/** What `startStack({ kwok })` and `stack up --kwok-nodes N` start the simulated cluster with. */
export interface SimulatedClusterOptions {
  /** How many KWOK-managed Nodes to create (0: none; tests may add their own with `createKwokNodes`). */
  nodes: number;
  /** Node names are `${nodePrefix}${i}`, i from 0. Default `kwok-node-`. */
  nodePrefix?: string;
  /** Labels every created Node carries besides the kubelet's own and `type=kwok`. */
  nodeLabels?: Record<string, string>;
  /** Seconds between status heartbeats of each node (+0–10 %); 0 turns them off. Default 20 (KWOK's own). */
  heartbeatSeconds?: number;
  /** Node Lease duration in seconds, renewed every quarter of it; 0: no Leases. Default 40 (the kubelet's). */
  leaseSeconds?: number;
  /** The controller manager's `--controllers`; default `['*']`, every controller a real cluster runs. */
  controllers?: string[];
  /** The controller manager's client rate limit (requests a second). Default 200. */
  controllerManagerQps?: number;
}

/** The simulated cluster as recorded in the stack's state. */
export interface SimulatedClusterInfo {
  nodePrefix: string;
  /** Nodes created at start: `${nodePrefix}0` … `${nodePrefix}${nodes - 1}`. */
  nodes: number;
  heartbeatSeconds: number;
  leaseSeconds: number;
}

/** Kubernetes' own `--node-monitor-grace-period`, in seconds. */
const DEFAULT_GRACE_SECONDS = 50;

/**
 * The node lifecycle controller's grace period that fits the cluster's
 * heartbeats: two and a half times the longest a node goes without one
 * (its status heartbeat, 10 % jitter included, or its Lease renewal,
 * whichever comes more often), and never below Kubernetes' default. Long
 * heartbeats (for thousands of nodes on a small machine) would otherwise
 * make nodes flap NotReady.
 */
export function graceSeconds(info: Pick<SimulatedClusterInfo, 'heartbeatSeconds' | 'leaseSeconds'>): number {
  const status = info.heartbeatSeconds > 0 ? info.heartbeatSeconds * 1.1 : Number.POSITIVE_INFINITY;
  const lease = info.leaseSeconds > 0 ? info.leaseSeconds / 4 : Number.POSITIVE_INFINITY;
  const longest = Math.min(status, lease);
  return Number.isFinite(longest) ? Math.max(DEFAULT_GRACE_SECONDS, Math.ceil(2.5 * longest)) : DEFAULT_GRACE_SECONDS;
}

/** The names of the Nodes a simulated cluster created at start. */
export function simulatedNodeNames(info: Pick<SimulatedClusterInfo, 'nodePrefix' | 'nodes'>): string[] {
  return Array.from({ length: info.nodes }, (_, i) => kwokNodeName(info.nodePrefix, i));
}

/** What the stack hands over to start the simulated cluster. */
export interface SimulatedClusterContext {
  adminKubeconfig: string;
  serviceAccountKey: string;
  caFile: string;
  ports: { controllerManager: number; scheduler: number; kwok: number };
}

/**
 * Starts the controller manager, the scheduler and KWOK under `dir`, then
 * creates the Nodes and resolves once every one is Ready and untainted and
 * the `default` service account exists (pods can be created and scheduled).
 * Returns the processes in start order with what to record. On failure the
 * processes it started are stopped before the error is thrown.
 */
export async function startSimulatedCluster(
  dir: string,
  context: SimulatedClusterContext,
  options: SimulatedClusterOptions,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = () => {},
): Promise<{ processes: ManagedProcess[]; info: SimulatedClusterInfo }> {
  const info: SimulatedClusterInfo = {
    nodePrefix: options.nodePrefix ?? 'kwok-node-',
    nodes: options.nodes,
    heartbeatSeconds: options.heartbeatSeconds ?? 20,
    leaseSeconds: options.leaseSeconds ?? 40,
  };
  const admin = new KubeConfig();
  admin.loadFromFile(context.adminKubeconfig);
  const processes: ManagedProcess[] = [];
  try {
    let t0 = Date.now();
    const plane = await startControlPlane(
      dir,
      {
        adminKubeconfig: context.adminKubeconfig,
        serviceAccountKey: context.serviceAccountKey,
        caFile: context.caFile,
        ports: context.ports,
        ...(options.controllers ? { controllers: options.controllers } : {}),
        ...(options.controllerManagerQps ? { controllerManagerQps: options.controllerManagerQps } : {}),
        ...(graceSeconds(info) > DEFAULT_GRACE_SECONDS ? { nodeMonitorGracePeriodSeconds: graceSeconds(info) } : {}),
      },
      env,
    );
    processes.push(plane.controllerManager, plane.scheduler);
    log(`kube-controller-manager and kube-scheduler ready (${Date.now() - t0} ms)`);
    t0 = Date.now();
    const kwok = await startKwok(
      dir,
      { adminKubeconfig: context.adminKubeconfig, heartbeatSeconds: info.heartbeatSeconds, leaseSeconds: info.leaseSeconds, port: context.ports.kwok },
      env,
    );
    processes.push(kwok);
    log(`KWOK ready (${Date.now() - t0} ms)`);
    t0 = Date.now();
    const names = simulatedNodeNames(info);
    await createKwokNodes(admin, names, options.nodeLabels);
    await waitForKwokNodes(admin, names, 120_000 + names.length * 100);
    await waitForServiceAccount(admin.makeApiClient(CoreV1Api), 60_000);
    log(`${names.length} KWOK nodes Ready (${Date.now() - t0} ms)`);
    return { processes, info };
  } catch (err) {
    for (const p of processes.reverse()) await stopProcess(p);
    throw err;
  }
}

/** Waits for the service account controller to create `default/default`, without which no pod is admitted. */
async function waitForServiceAccount(core: CoreV1Api, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }).then(
      () => true,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error(`the service account default/default was not created within ${timeoutMs / 1000}s`);
    await sleep(200);
  }
}
