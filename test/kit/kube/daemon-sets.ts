/**
 * DaemonSets for health-gate tests and recordings: one pod per selected
 * node, a pause container. Whether its pods can ever be Ready is the
 * caller's: a CPU request above a KWOK node's capacity leaves them
 * Pending; with no DaemonSet controller there are no pods at all.
 */
import type { AppsV1Api, V1PodSpec } from '@kubernetes/client-node';

/** Creates DaemonSet `name` in `namespace` whose pod template takes `spec` over the pause container. */
export async function createPauseDaemonSet(
  apps: AppsV1Api,
  ds: { name: string; namespace: string },
  spec: Partial<V1PodSpec> & { cpu?: string } = {},
): Promise<void> {
  const { cpu, ...pod } = spec;
  await apps.createNamespacedDaemonSet({
    namespace: ds.namespace,
    body: {
      metadata: { name: ds.name },
      spec: {
        selector: { matchLabels: { app: ds.name } },
        template: {
          metadata: { labels: { app: ds.name } },
          spec: { ...pod, containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.10', ...(cpu ? { resources: { requests: { cpu } } } : {}) }] },
        },
      },
    },
  });
}
