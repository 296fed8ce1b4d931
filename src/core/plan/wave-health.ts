/**
 * The health gate after a wave: on each node of the wave, every DaemonSet
 * the DaemonSet controller would run there has a Ready pod there, and no
 * DaemonSet it would no longer keep there still has a pod there (one being
 * deleted still counts: it is not gone). Pure: from the DaemonSets, the
 * wave's nodes as they are now and the pods bound to them.
 */
import { daemonSetShouldRun, type DaemonSetInfo, type NodeView } from './daemon-sets.ts';
import type { PodInfo } from './workload-impact.ts';

/** Most unhealthy pairs a verdict names; the rest are counted. */
export const HEALTH_SAMPLE_SIZE = 10;

/** A DaemonSet on a node, not yet as the wave should leave it. */
export interface UnhealthyPod {
  node: string;
  /** `namespace/name` of the DaemonSet. */
  daemonSet: string;
  /** `ready`: its pod there is missing or not Ready; `gone`: its pod there should have left. */
  want: 'ready' | 'gone';
}

/** The gate's verdict: how many DaemonSet–node pairs are not yet right, with a sample. */
export interface WaveHealth {
  /** DaemonSet–node pairs checked (DaemonSets that run, or ran, on a wave node). */
  checked: number;
  unhealthy: number;
  sample: UnhealthyPod[];
}

const isDaemonPodOf = (pod: PodInfo, ds: DaemonSetInfo) =>
  pod.namespace === ds.namespace && pod.controller?.kind === 'DaemonSet' && pod.controller.name === ds.name;

/** Checks the wave's `nodes` against `daemonSets` and the pods bound to each node (`pods`, by node name). */
export function waveHealth(
  daemonSets: readonly DaemonSetInfo[],
  nodes: readonly ({ name: string } & NodeView)[],
  pods: ReadonlyMap<string, readonly PodInfo[]>,
): WaveHealth {
  const verdict: WaveHealth = { checked: 0, unhealthy: 0, sample: [] };
  const flag = (u: UnhealthyPod) => {
    verdict.unhealthy++;
    if (verdict.sample.length < HEALTH_SAMPLE_SIZE) verdict.sample.push(u);
  };
  for (const node of nodes) {
    const here = pods.get(node.name) ?? [];
    for (const ds of daemonSets) {
      const mine = here.filter((pod) => isDaemonPodOf(pod, ds));
      const { shouldRun, shouldContinueRunning } = daemonSetShouldRun(ds, node);
      const daemonSet = `${ds.namespace}/${ds.name}`;
      if (shouldRun) {
        verdict.checked++;
        if (!mine.some((pod) => pod.ready === true && pod.terminating !== true)) flag({ node: node.name, daemonSet, want: 'ready' });
      } else if (!shouldContinueRunning && mine.length > 0) {
        verdict.checked++;
        flag({ node: node.name, daemonSet, want: 'gone' });
      }
    }
  }
  return verdict;
}

/** The verdict in words: `3 DaemonSet pods not right: ns/ds on n1 not Ready, …`. */
export function healthText(health: WaveHealth): string {
  if (health.unhealthy === 0) return `all ${health.checked} DaemonSet pods of the wave are as they should be`;
  const shown = health.sample.map((u) => `${u.daemonSet} on ${u.node} ${u.want === 'ready' ? 'not Ready' : 'not gone'}`);
  const more = health.unhealthy > shown.length ? ` and ${health.unhealthy - shown.length} more` : '';
  return `${health.unhealthy} DaemonSet pod(s) not as they should be: ${shown.join(', ')}${more}`;
}
