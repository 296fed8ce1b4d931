/**
 * Node Feature Discovery's `nfd-master` (v0.19, built by `npm run tools`)
 * as the benchmark runs it against the stack's kube-apiserver: NodeFeature
 * API (the only one in v0.19: no gRPC server, no TLS), no leader election,
 * no config file, its metrics and health port on a free port.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freeLoopbackPort, startProcess, type ManagedProcess } from '../../stack/processes.ts';
import { metricValue } from '../../stack/prometheus.ts';
import { toolsDir } from '../../stack/tools.ts';

/**
 * nfd-master's client rate limit: NFD sets no QPS or burst on its
 * rest.Config and has no flag or config option for them, so client-go's
 * defaults apply, per client. Each node updater makes its own client.
 */
export const NFD_CLIENT_RATE = { qps: 5, burst: 10 } as const;

/** nfd-master's default `-nfd-api-parallelism`: node updaters, each with its own client. */
export const NFD_DEFAULT_PARALLELISM = 10;

/** A running nfd-master. */
export interface NfdMaster {
  process: ManagedProcess;
  /** Its Prometheus metrics (nfd_master_*). */
  metricsUrl: string;
  /** Its command line, for the report. */
  args: string[];
}

/** The path of the built nfd-master; throws, saying to run `npm run tools`, when it is not built. */
export function nfdMasterPath(env: NodeJS.ProcessEnv = process.env): string {
  const path = join(toolsDir(env), 'bin', 'nfd-master');
  if (!existsSync(path)) throw new Error(`nfd-master is not built: expected it at ${path}. Run \`npm run tools\`.`);
  return path;
}

/**
 * nfd-master's flags: `kubeconfig` (it reads NodeFeatures, NodeFeatureRules,
 * NodeFeatureGroups and Nodes, and patches Nodes), `-config=` (no file:
 * defaults), the metrics port (it listens on every interface, `:port`;
 * nothing in v0.19 binds it to loopback), and the updaters when given.
 * Leader election stays off (its default); no label namespace flag is
 * needed: only `*.kubernetes.io` namespaces other than NFD's own are
 * refused without `-extra-label-ns`.
 */
export function nfdMasterArgs(options: { kubeconfig: string; port: number; parallelism?: number }): string[] {
  return [
    `-kubeconfig=${options.kubeconfig}`,
    '-config=',
    `-port=${options.port}`,
    ...(options.parallelism === undefined ? [] : [`-nfd-api-parallelism=${options.parallelism}`]),
  ];
}

/**
 * Starts nfd-master, output to `log`. NODE_NAME names the node it
 * annotates with its version at start (it exits when that node does not
 * exist); KUBERNETES_NAMESPACE is "its" namespace, where it expects
 * nfd-worker's NodeFeatures.
 */
export async function startNfdMaster(options: {
  kubeconfig: string;
  nodeName: string;
  namespace: string;
  log: string;
  parallelism?: number;
}): Promise<NfdMaster> {
  const port = await freeLoopbackPort();
  const args = nfdMasterArgs({ kubeconfig: options.kubeconfig, port, ...(options.parallelism === undefined ? {} : { parallelism: options.parallelism }) });
  const env = { ...process.env, NODE_NAME: options.nodeName, KUBERNETES_NAMESPACE: options.namespace };
  const proc = await startProcess('nfd-master', nfdMasterPath(), args, options.log, env);
  return { process: proc, metricsUrl: `http://127.0.0.1:${port}/metrics`, args };
}

/** Nodes nfd-master has updated so far (`nfd_master_node_updates_total`); undefined while its port is not up. */
export async function nodesUpdated(master: NfdMaster): Promise<number | undefined> {
  try {
    const res = await fetch(master.metricsUrl);
    if (!res.ok) return undefined;
    return metricValue(await res.text(), 'nfd_master_node_updates_total', {});
  } catch {
    return undefined;
  }
}
