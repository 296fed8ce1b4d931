/**
 * Where the local stack's server binaries live: the cache that
 * `tools/build-tools.sh` fills, outside the repository.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The servers the local stack runs, each built from pinned Go modules: the
 * plain stack's three, the simulated cluster's controller manager,
 * scheduler and KWOK, and Karpenter's KWOK cloud provider with its CRDs (a
 * directory of their YAML files), which the simulated cluster runs on demand.
 */
export const StackTool = {
  temporal: 'temporal',
  etcd: 'etcd',
  kubeApiserver: 'kube-apiserver',
  kubeControllerManager: 'kube-controller-manager',
  kubeScheduler: 'kube-scheduler',
  kwok: 'kwok',
  karpenterKwok: 'karpenter-kwok',
  karpenterCrds: 'karpenter-crds',
} as const;

/** One of the {@link StackTool} names. */
export type StackTool = (typeof StackTool)[keyof typeof StackTool];

/**
 * What the Helm chart's tests use besides the servers, from the same cache:
 * helm, and the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs
 * (a directory of their YAML files).
 */
export const ChartTool = {
  helm: 'helm',
  prometheusOperatorCrds: 'prometheus-operator-crds',
} as const;

/** One of the {@link ChartTool} names. */
export type ChartTool = (typeof ChartTool)[keyof typeof ChartTool];

/** The tool cache directory, as `tools/build-tools.sh --print` reports it. */
export function toolsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RELABEL_TOOLS_DIR) return env.RELABEL_TOOLS_DIR;
  const cacheHome = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cacheHome, 'relabel', 'tools');
}

/** Raised when a server binary is not in the cache; the message says how to build it. */
export class MissingToolError extends Error {
  override name = 'MissingToolError';
}

/**
 * Resolves the path of a built server binary (or another tool of the cache).
 *
 * Never builds anything: a missing binary is an error naming the path and the
 * command that builds it, so a test run without its servers fails loudly.
 */
export function toolPath(tool: StackTool | ChartTool, env: NodeJS.ProcessEnv = process.env): string {
  const path = join(toolsDir(env), 'bin', tool);
  if (!existsSync(path)) {
    throw new MissingToolError(
      `${tool} is not built: expected it at ${path}. Run \`npm run tools\` (tools/build-tools.sh) to build the local stack's servers from Go modules.`,
    );
  }
  return path;
}
