/**
 * Karpenter on the simulated cluster: Karpenter's own controllers with its
 * KWOK cloud provider (`karpenter-kwok`, built from the pinned Go module),
 * run against the stack's API server as cluster administrator. Pending pods
 * make it create NodeClaims; its fake cloud creates each NodeClaim's Node
 * itself, annotated for KWOK, which then plays that node's kubelet (Ready,
 * heartbeats, pods Running) as for the stack's own nodes. Karpenter then
 * registers the node (its labels, the NodePool's taints and startupTaints),
 * and removes nodes as it would a cloud's (consolidation, NodeClaims
 * deleted).
 *
 * The CRDs (NodePool, NodeClaim, KWOKNodeClass and the others that release
 * serves) are read from the tool cache, as `tools/build-tools.sh` copied
 * them out of the module, and applied at start.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiextensionsV1Api, CustomObjectsApi, KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { freeLoopbackPort, startProcess, stopProcess, waitUntil, type ManagedProcess } from './processes.ts';
import { toolPath } from './tools.ts';

/** Karpenter's API group and version (NodePool, NodeClaim). */
export const KARPENTER_API = { group: 'karpenter.sh', version: 'v1' } as const;
/** The KWOK cloud provider's node class API. */
export const KWOK_NODE_CLASS_API = { group: 'karpenter.kwok.sh', version: 'v1alpha1', kind: 'KWOKNodeClass', plural: 'kwoknodeclasses' } as const;
/** The label Karpenter puts on every node of a NodePool, naming it. */
export const NODEPOOL_LABEL = 'karpenter.sh/nodepool';

/** How to start Karpenter. */
export interface KarpenterOptions {
  /** Cluster-admin kubeconfig Karpenter reaches the API server with. */
  adminKubeconfig: string;
  /**
   * Karpenter's batching of pending pods (seconds): a batch ends after this
   * long with no new pending pod (its default 1), or after `batchMaxSeconds`
   * (default 10) in any case.
   */
  batchIdleSeconds?: number;
  batchMaxSeconds?: number;
}

/** A running Karpenter. */
export interface Karpenter {
  process: ManagedProcess;
  /** Its metrics (`/metrics`) on 127.0.0.1. */
  metricsPort: number;
  stop(): Promise<void>;
}

/** The CRD files of the tool cache's `karpenter-crds` directory, parsed. */
export function karpenterCrds(env: NodeJS.ProcessEnv = process.env): V1CustomResourceDefinition[] {
  const dir = toolPath('karpenter-crds', env);
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  if (files.length === 0) throw new Error(`no CRD files in ${dir}: run \`npm run tools\` (tools/build-tools.sh) again`);
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8'))
      .map((d) => d.toJS() as V1CustomResourceDefinition | null)
      .filter((d): d is V1CustomResourceDefinition => d?.kind === 'CustomResourceDefinition'),
  );
}

/**
 * Creates (or replaces) each CRD and resolves once the API server serves
 * every one of them (Established), so Karpenter's informers find them.
 */
export async function applyCrds(admin: KubeConfig, crds: readonly V1CustomResourceDefinition[], timeoutMs = 60_000): Promise<void> {
  const api = admin.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    const existing = await api.readCustomResourceDefinition({ name }).catch((err: unknown) => {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    });
    if (existing) {
      await api.replaceCustomResourceDefinition({ name, body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } } });
    } else await api.createCustomResourceDefinition({ body: crd });
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const got = await api.readCustomResourceDefinition({ name });
      if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`the CRD ${name} was not established within ${timeoutMs / 1000}s`);
      await sleep(100);
    }
  }
}

/**
 * Creates the KWOKNodeClass `name` (a NodePool's `nodeClassRef`) and marks it
 * Ready: the KWOK provider has no controller of its own that does, and
 * Karpenter provisions no node for a NodePool whose node class is not Ready.
 */
export async function applyKwokNodeClass(admin: KubeConfig, name = 'default'): Promise<void> {
  const custom = admin.makeApiClient(CustomObjectsApi);
  const ref = { group: KWOK_NODE_CLASS_API.group, version: KWOK_NODE_CLASS_API.version, plural: KWOK_NODE_CLASS_API.plural, name };
  await custom
    .createClusterCustomObject({
      ...ref,
      body: { apiVersion: `${ref.group}/${ref.version}`, kind: KWOK_NODE_CLASS_API.kind, metadata: { name }, spec: {} },
    })
    .catch((err: unknown) => {
      if ((err as { code?: number }).code !== 409) throw err;
    });
  const current = (await custom.getClusterCustomObject(ref)) as { metadata: { resourceVersion: string; generation?: number } };
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'Ready',
    message: '',
    lastTransitionTime: new Date().toISOString(),
    observedGeneration: current.metadata.generation ?? 1,
  };
  await custom.replaceClusterCustomObjectStatus({
    ...ref,
    body: { ...current, status: { conditions: [ready] } },
  });
}

/**
 * Applies the CRDs and the `default` KWOKNodeClass, then starts Karpenter
 * under `dir` (its log in `karpenter.log`; leader election off, as one
 * process) and resolves once its /readyz answers: caches synced, CRDs found.
 * Throws with the log tail when it does not come up.
 */
export async function startKarpenter(dir: string, options: KarpenterOptions, env: NodeJS.ProcessEnv = process.env): Promise<Karpenter> {
  const bin = toolPath('karpenter-kwok', env);
  const admin = new KubeConfig();
  admin.loadFromFile(options.adminKubeconfig);
  await applyCrds(admin, karpenterCrds(env));
  await applyKwokNodeClass(admin);
  const [metricsPort, healthPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const karpenterEnv: NodeJS.ProcessEnv = {
    ...env,
    KUBECONFIG: options.adminKubeconfig,
    DISABLE_LEADER_ELECTION: 'true',
    METRICS_PORT: String(metricsPort),
    HEALTH_PROBE_PORT: String(healthPort),
    BATCH_IDLE_DURATION: `${options.batchIdleSeconds ?? 1}s`,
    BATCH_MAX_DURATION: `${options.batchMaxSeconds ?? 10}s`,
    LOG_LEVEL: 'info',
  };
  const process = await startProcess('karpenter', bin, [], join(dir, 'karpenter.log'), karpenterEnv);
  try {
    await waitUntil(
      process,
      '/readyz answering ok',
      () => fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok),
      120_000,
    );
  } catch (err) {
    await stopProcess(process);
    throw err;
  }
  return { process, metricsPort, stop: () => stopProcess(process) };
}
