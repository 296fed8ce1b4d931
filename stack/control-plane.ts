/**
 * kube-controller-manager and kube-scheduler beside the stack's API server:
 * the controllers of a real cluster (DaemonSets, node lifecycle and taint
 * eviction, ReplicaSets and Deployments, service accounts, garbage
 * collection, …) and the scheduler that binds pods to nodes. Both run as
 * cluster administrator, on loopback, without leader election.
 */
import { request } from 'node:https';
import { join } from 'node:path';
import { startProcess, stopProcess, waitUntil, type ManagedProcess } from './processes.ts';
import { toolPath } from './tools.ts';

/** What the controller manager and the scheduler are started with. */
export interface ControlPlaneOptions {
  /** Cluster-admin kubeconfig both use to reach the API server. */
  adminKubeconfig: string;
  /** The service-account signing key (PEM) shared with the API server. */
  serviceAccountKey: string;
  /** The CA bundle published to pods (`kube-root-ca.crt`). */
  caFile: string;
  /** Loopback ports of their health and metrics endpoints (HTTPS). */
  ports: { controllerManager: number; scheduler: number };
  /**
   * Controllers to run, in the controller manager's `--controllers` syntax;
   * `['*']` (the default) runs every controller a real cluster runs by default.
   */
  controllers?: string[];
  /**
   * Client rate limit of the controller manager (requests a second, burst
   * twice that). Default 200: at Kubernetes' own 20, the node lifecycle
   * controller would take 50 s to lift the not-ready taint of 1,000 new nodes.
   */
  controllerManagerQps?: number;
  /**
   * Seconds without a heartbeat (status or Lease) before the node lifecycle
   * controller marks a node NotReady; absent: Kubernetes' default (50 s).
   */
  nodeMonitorGracePeriodSeconds?: number;
}

/** The two processes, started and healthy. */
export interface ControlPlane {
  controllerManager: ManagedProcess;
  scheduler: ManagedProcess;
}

/**
 * Whether https://127.0.0.1:`port`/healthz answers 200. The components
 * serve with a self-signed certificate they make at start, so it is not
 * verified: the request never leaves loopback.
 */
export function healthzOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.once('timeout', () => req.destroy());
    req.end();
  });
}

/** Flags both components share: admin credentials, loopback serving, no leader election. */
function commonArgs(kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    // Delegated authentication and authorization of their own endpoints; /healthz is always allowed.
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    // The API server has no client CA (token authentication), so there is no CA configmap to look up.
    '--authentication-skip-lookup',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    // One instance of each: nothing to elect, and no Lease written every few seconds.
    '--leader-elect=false',
    '--v=1',
  ];
}

function controllerManagerArgs(options: ControlPlaneOptions, certDir: string): string[] {
  const qps = options.controllerManagerQps ?? 200;
  return [
    ...commonArgs(options.adminKubeconfig, options.ports.controllerManager),
    `--cert-dir=${certDir}`,
    `--controllers=${(options.controllers ?? ['*']).join(',')}`,
    `--service-account-private-key-file=${options.serviceAccountKey}`,
    `--root-ca-file=${options.caFile}`,
    `--kube-api-qps=${qps}`,
    `--kube-api-burst=${qps * 2}`,
    ...(options.nodeMonitorGracePeriodSeconds ? [`--node-monitor-grace-period=${options.nodeMonitorGracePeriodSeconds}s`] : []),
  ];
}

/**
 * Starts kube-controller-manager and kube-scheduler under `dir` (logs
 * there) and resolves once both answer their health checks. Throws, with
 * the log tail, when either fails to come up; what it had started is
 * stopped first.
 */
export async function startControlPlane(dir: string, options: ControlPlaneOptions, env: NodeJS.ProcessEnv = process.env): Promise<ControlPlane> {
  const kcmBin = toolPath('kube-controller-manager', env);
  const schedulerBin = toolPath('kube-scheduler', env);
  const started: ManagedProcess[] = [];
  try {
    const controllerManager = await startProcess(
      'kube-controller-manager',
      kcmBin,
      controllerManagerArgs(options, join(dir, 'controller-manager-certs')),
      join(dir, 'kube-controller-manager.log'),
      env,
    );
    started.push(controllerManager);
    const scheduler = await startProcess(
      'kube-scheduler',
      schedulerBin,
      [...commonArgs(options.adminKubeconfig, options.ports.scheduler), `--cert-dir=${join(dir, 'scheduler-certs')}`],
      join(dir, 'kube-scheduler.log'),
      env,
    );
    started.push(scheduler);
    await Promise.all([
      waitUntil(controllerManager, '/healthz answering ok', () => healthzOk(options.ports.controllerManager), 60_000),
      waitUntil(scheduler, '/healthz answering ok', () => healthzOk(options.ports.scheduler), 60_000),
    ]);
    return { controllerManager, scheduler };
  } catch (err) {
    for (const p of started.reverse()) await stopProcess(p);
    throw err;
  }
}
