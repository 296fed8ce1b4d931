/**
 * Karpenter creating the nodes that relabel labels: a NodePool of
 * Karpenter's KWOK provider on the simulated cluster, a Deployment of
 * pending pods that only its nodes can take, and a watch of the pool's
 * Nodes noting when each is first seen (its creation, to the watch event)
 * and when it is first seen done (for relabel's pool: Karpenter has
 * registered it, relabel has written it and lifted its uninitialized
 * taint). The same pods go to two pools in one run: one whose nodes start
 * with relabel's taint (the NodePool's `startupTaints`), one without, so
 * the node counts can be set side by side. Then the pool's nodes are
 * removed the way Karpenter removes them (its NodeClaims deleted: drained,
 * then the instance and the Node gone).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, makeInformer, type KubeConfig, type V1Node, type V1Taint } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import type { SourceFile } from '../../src/store/revisions/revision-store.ts';
import { KARPENTER_API, KWOK_NODE_CLASS_API, NODEPOOL_LABEL } from '../../stack/karpenter.ts';

/** relabel's uninitialized taint as a NodePool's `startupTaints` lists it. */
export const RELABEL_STARTUP_TAINT: V1Taint = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
/** The taint Karpenter's nodes are created with, lifted when Karpenter registers them. */
export const UNREGISTERED_TAINT_KEY = 'karpenter.sh/unregistered';
/** The label Karpenter sets on a Node once it has registered it (its labels and taints synced). */
export const REGISTERED_LABEL = 'karpenter.sh/registered';
/** The one instance type the pools may use (4 CPUs), so that a pool's node count is the pods' arithmetic, not a price comparison. */
export const INSTANCE_TYPE = 'c-4x-amd64-linux';

/**
 * The site file of node set `name`: the members of NodePool `pool` (by
 * Karpenter's own label on them), the sample site's `compute` profile, and
 * `labels` of its own (what the pods select).
 */
export function karpenterSetFile(name: string, pool: string, labels: Record<string, string>): SourceFile {
  const doc = {
    schema: 'relabel/NodeSet/v1',
    metadata: { schema: 'metadata/Document/v1', name },
    data: {
      selector: { matchLabels: { [NODEPOOL_LABEL]: pool } },
      host_profile: 'compute',
      metadata: { owner_data: { ...labels, 'workload-class': 'web' }, annotations: { 'example.com/fleet': 'karpenter' } },
    },
  };
  return { source: 'node-sets.yaml', text: `---\n${JSON.stringify(doc, null, 1)}\n` };
}

/** A NodePool of the KWOK provider: `labels` on every node, `startupTaints` until another controller lifts them. */
export function nodePool(name: string, options: { labels: Record<string, string>; startupTaints?: V1Taint[] }): Record<string, unknown> {
  return {
    apiVersion: `${KARPENTER_API.group}/${KARPENTER_API.version}`,
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        metadata: { labels: options.labels },
        spec: {
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [INSTANCE_TYPE] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          ],
          nodeClassRef: { group: KWOK_NODE_CLASS_API.group, kind: KWOK_NODE_CLASS_API.kind, name: 'default' },
          ...(options.startupTaints ? { startupTaints: options.startupTaints } : {}),
          expireAfter: 'Never',
        },
      },
      // Only the scenario removes nodes: consolidation would remove them while they are being counted.
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' },
    },
  };
}

/** Pods only `pool`'s nodes take: they select the pool and `labels`, and ask for half a CPU each. */
function deployment(name: string, pool: string, labels: Record<string, string>, replicas: number) {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector: { [NODEPOOL_LABEL]: pool, ...labels },
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '500m', memory: '256Mi' } } }],
          terminationGracePeriodSeconds: 0,
        },
      },
    },
  };
}

/** One Node of a pool as the watch saw it (`performance.now()` ms, and the Node's own creation time, s precision). */
export interface PoolNode {
  name: string;
  firstSeen: number;
  created: number;
  /** When last seen becoming done (see {@link PoolWatch}); undefined while it is not. */
  done?: number;
  /** Times it was seen done and then not (relabel's taint put back on it). */
  undone: number;
  /** Seen written by relabel before Karpenter registered it (so before the NodePool's startupTaints were on it). */
  early: boolean;
  /** When first seen registered by Karpenter (its label on, its own taint lifted). */
  registered?: number;
  deleted?: number;
}

/** A watch of one pool's Nodes. */
export interface PoolWatch {
  nodes: Map<string, PoolNode>;
  stop(): Promise<void>;
}

/** Whether relabel has written `node` after Karpenter registered it, and no uninitialized taint of relabel's is left. */
export function relabelled(node: V1Node): boolean {
  const taints = node.spec?.taints ?? [];
  return (
    node.metadata?.labels?.[REGISTERED_LABEL] === 'true' &&
    node.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined &&
    !taints.some((t) => t.key === UNINITIALIZED_TAINT_KEY || t.key === UNREGISTERED_TAINT_KEY)
  );
}

/** Whether Karpenter has registered `node` (its own taint lifted). */
export function registered(node: V1Node): boolean {
  return node.metadata?.labels?.[REGISTERED_LABEL] === 'true' && !(node.spec?.taints ?? []).some((t) => t.key === UNREGISTERED_TAINT_KEY);
}

/**
 * Watches the Nodes of `pool`, noting each one's first sight, when it last
 * became `done` (and how often it was done and then not again), and its
 * deletion.
 */
export async function watchPool(kc: KubeConfig, pool: string, done: (node: V1Node) => boolean): Promise<PoolWatch> {
  const core = kc.makeApiClient(CoreV1Api);
  const selector = `${NODEPOOL_LABEL}=${pool}`;
  const informer = makeInformer<V1Node>(kc, '/api/v1/nodes', () => core.listNode({ labelSelector: selector }), selector);
  const nodes = new Map<string, PoolNode>();
  let stopped = false;
  const seen = (node: V1Node) => {
    const now = performance.now();
    const name = node.metadata?.name ?? '';
    let entry = nodes.get(name);
    if (!entry) {
      const created = node.metadata?.creationTimestamp ? new Date(node.metadata.creationTimestamp).getTime() : Date.now();
      nodes.set(name, (entry = { name, firstSeen: now, created, undone: 0, early: false }));
    }
    if (node.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && node.metadata.labels?.[REGISTERED_LABEL] !== 'true') entry.early = true;
    if (entry.registered === undefined && registered(node)) entry.registered = now;
    const isDone = done(node);
    if (entry.done === undefined && isDone) entry.done = now;
    else if (entry.done !== undefined && !isDone) {
      entry.done = undefined;
      entry.undone++;
    }
  };
  informer.on('add', seen);
  informer.on('update', seen);
  informer.on('delete', (node) => {
    const entry = nodes.get(node.metadata?.name ?? '');
    if (entry && entry.deleted === undefined) entry.deleted = performance.now();
  });
  informer.on('error', () => {
    setTimeout(() => {
      if (!stopped) informer.start().catch(() => undefined);
    }, 500);
  });
  await informer.start();
  return {
    nodes,
    async stop() {
      stopped = true;
      await informer.stop();
    },
  };
}

/** What provisioning one pool came to. */
export interface Provisioned {
  pool: string;
  /** Nodes of the pool ever seen, and NodeClaims of it now. */
  nodes: number;
  nodeClaims: number;
  podsRunning: number;
  /** From the pods' creation until every one runs and every node is done (ms). */
  ms: number;
  /** Per node, first seen to done for good (ms); nodes not done are left out. */
  latencies: number[];
  /** The same from the Node's creationTimestamp (whole seconds, so up to a second more). */
  fromCreationMs: number[];
  /** The same from first seen registered by Karpenter (the NodePool's startupTaints then on). */
  fromRegisteredMs: number[];
  /** Nodes not done at the end. */
  notDone: string[];
  /** Nodes seen done and then not again (relabel's taint put back on), before they were done for good. */
  undone: number;
  /** Nodes relabel wrote before Karpenter registered them. */
  early: number;
  /** Why a pod still pending is (the scheduler's message), when one is. */
  pending?: string;
}

/** The scenario's clients. */
export interface PoolClients {
  kc: KubeConfig;
  namespace: string;
}

const custom = (kc: KubeConfig) => kc.makeApiClient(CustomObjectsApi);
const nodeClaimsRef = { group: KARPENTER_API.group, version: KARPENTER_API.version, plural: 'nodeclaims' };

/** The names of `pool`'s NodeClaims. */
export async function nodeClaimsOf(kc: KubeConfig, pool: string): Promise<string[]> {
  const list = (await custom(kc).listClusterCustomObject({ ...nodeClaimsRef, labelSelector: `${NODEPOOL_LABEL}=${pool}` })) as {
    items: { metadata: { name: string } }[];
  };
  return list.items.map((i) => i.metadata.name);
}

/**
 * Creates NodePool `pool` and `pods` pods only its nodes can take, then
 * resolves once every pod runs and every node the watch saw is done, or at
 * `timeoutMs` with what it came to (the caller judges).
 */
export async function provision(
  c: PoolClients,
  watch: PoolWatch,
  pool: { name: string; labels: Record<string, string>; startupTaints?: V1Taint[] },
  pods: number,
  timeoutMs: number,
): Promise<Provisioned> {
  await custom(c.kc).createClusterCustomObject({
    group: KARPENTER_API.group,
    version: KARPENTER_API.version,
    plural: 'nodepools',
    body: nodePool(pool.name, pool),
  });
  const core = c.kc.makeApiClient(CoreV1Api);
  const t0 = performance.now();
  await c.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: c.namespace, body: deployment(pool.name, pool.name, pool.labels, pods) });
  let running = 0;
  let pending: string | undefined;
  const allDone = () => watch.nodes.size > 0 && [...watch.nodes.values()].every((n) => n.done !== undefined || n.deleted !== undefined);
  while (performance.now() - t0 < timeoutMs) {
    const list = await core.listNamespacedPod({ namespace: c.namespace, labelSelector: `app=${pool.name}` });
    running = list.items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).length;
    const waiting = list.items.find((p) => p.status?.phase === 'Pending');
    pending = waiting
      ? `${waiting.metadata?.name}: ${waiting.status?.conditions?.map((k) => `${k.type}=${k.status} ${k.message ?? ''}`).join('; ')}`
      : undefined;
    if (running >= pods && allDone()) break;
    await sleep(250);
  }
  const ms = performance.now() - t0;
  const nodes = [...watch.nodes.values()];
  const done = nodes.filter((n) => n.done !== undefined);
  // performance.now() to wall-clock: the offset at this moment.
  const wall = Date.now() - performance.now();
  return {
    pool: pool.name,
    nodes: nodes.length,
    nodeClaims: (await nodeClaimsOf(c.kc, pool.name)).length,
    podsRunning: running,
    ms,
    latencies: done.map((n) => (n.done as number) - n.firstSeen),
    fromCreationMs: done.map((n) => (n.done as number) + wall - n.created),
    fromRegisteredMs: done.map((n) => (n.done as number) - (n.registered ?? n.firstSeen)),
    notDone: nodes.filter((n) => n.done === undefined && n.deleted === undefined).map((n) => n.name),
    undone: nodes.filter((n) => n.undone > 0).length,
    early: nodes.filter((n) => n.early).length,
    ...(pending !== undefined ? { pending } : {}),
  };
}

/**
 * Removes `pool`'s nodes as Karpenter does: once its pods are gone (their
 * Deployment deleted: pods evicted by the drain would otherwise be made
 * again, and Karpenter would make nodes for them), every NodeClaim is
 * deleted (Karpenter drains each node, deletes the instance, and lets the
 * Node go), then the NodePool. Resolves once no Node and no NodeClaim of the
 * pool is left; throws naming what is left after `timeoutMs`.
 */
export async function removePool(c: PoolClients, watch: PoolWatch, pool: string, timeoutMs: number): Promise<{ ms: number; removed: number }> {
  const t0 = performance.now();
  const core = c.kc.makeApiClient(CoreV1Api);
  const until = async (what: string, gone: () => Promise<boolean>) => {
    while (!(await gone())) {
      if (performance.now() - t0 > timeoutMs) throw new Error(`${what} ${timeoutMs / 1000}s after the removal of ${pool} began`);
      await sleep(250);
    }
  };
  await c.kc.makeApiClient(AppsV1Api).deleteNamespacedDeployment({ name: pool, namespace: c.namespace });
  await until('pods still there', async () => (await core.listNamespacedPod({ namespace: c.namespace, labelSelector: `app=${pool}` })).items.length === 0);
  const claims = await nodeClaimsOf(c.kc, pool);
  await Promise.all(claims.map((name) => custom(c.kc).deleteClusterCustomObject({ ...nodeClaimsRef, name })));
  const left = () => [...watch.nodes.values()].filter((n) => n.deleted === undefined);
  await until('nodes still there', async () => left().length === 0);
  await until('NodeClaims still there', async () => (await nodeClaimsOf(c.kc, pool)).length === 0);
  await custom(c.kc).deleteClusterCustomObject({ group: KARPENTER_API.group, version: KARPENTER_API.version, plural: 'nodepools', name: pool });
  return { ms: performance.now() - t0, removed: claims.length };
}
