/**
 * KWOK, the simulated kubelets: the `kwok` binary run against the stack's
 * API server as cluster administrator. It manages exactly the Nodes carrying
 * {@link KWOK_NODE_ANNOTATION}: makes them Ready, renews their Leases,
 * heartbeats their status, and runs the pods bound to them (they start
 * Running at once and go away when deleted). No container ever runs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, makeInformer, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { kwokStages, type KwokHeartbeat } from './kwok-stages.ts';
import { startProcess, waitUntil, type ManagedProcess } from './processes.ts';
import { toolPath } from './tools.ts';

/** The annotation that hands a Node to KWOK (KWOK's own convention), and its value. */
export const KWOK_NODE_ANNOTATION = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;

/** The label every simulated Node carries besides the kubelet's own (`type=kwok`, as kwokctl's nodes). */
export const KWOK_NODE_LABEL = { key: 'type', value: 'kwok' } as const;

/** How KWOK plays the kubelets. */
export interface KwokOptions extends KwokHeartbeat {
  /** Cluster-admin kubeconfig KWOK reaches the API server with. */
  adminKubeconfig: string;
  /**
   * Lease duration in seconds KWOK writes on each node's Lease
   * (kube-node-lease), renewing it every quarter of that, as a kubelet does;
   * 0 means no Leases (the node controller then goes by status heartbeats).
   */
  leaseSeconds: number;
  /** Loopback port of KWOK's own server (its /healthz). */
  port: number;
}

/**
 * KWOK's own settings (only a config file sets them): more stages and
 * Lease renewals in flight than its 4 each, which register 1,000 new nodes
 * at only about 7 a second on a busy machine (each one a patch's round trip).
 */
function kwokConfiguration(): Record<string, unknown> {
  const parallelism = 16;
  return {
    apiVersion: 'config.kwok.x-k8s.io/v1alpha1',
    kind: 'KwokConfiguration',
    metadata: { name: 'relabel-stack' },
    options: { nodePlayStageParallelism: parallelism, podPlayStageParallelism: parallelism, nodeLeaseParallelism: parallelism },
  };
}

/**
 * Starts KWOK under `dir` (its Stages in `kwok.yaml`, its log in
 * `kwok.log`) and resolves once its informers are synced and its /healthz
 * answers. Throws with the log tail when it does not come up.
 */
export async function startKwok(dir: string, options: KwokOptions, env: NodeJS.ProcessEnv = process.env): Promise<ManagedProcess> {
  const bin = toolPath('kwok', env);
  const config = join(dir, 'kwok.yaml');
  const documents = [kwokConfiguration(), ...kwokStages(options)];
  writeFileSync(config, documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
  const args = [
    `--kubeconfig=${options.adminKubeconfig}`,
    `--config=${config}`,
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION.key}=${KWOK_NODE_ANNOTATION.value}`,
    `--node-lease-duration-seconds=${options.leaseSeconds}`,
    // KWOK's default pod network is a /24: 254 pod IPs for the whole cluster.
    '--cidr=10.0.0.0/16',
    `--server-address=127.0.0.1:${options.port}`,
    // At INFO it logs every patch: a line per node per heartbeat.
    '--v=WARN',
  ];
  const kwok = await startProcess('kwok', bin, args, join(dir, 'kwok.log'), env);
  await waitUntil(
    kwok,
    '/healthz answering ok',
    () => fetch(`http://127.0.0.1:${options.port}/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok),
    60_000,
  );
  return kwok;
}

/** The name of simulated node `index` (from 0) under `prefix`. */
export function kwokNodeName(prefix: string, index: number): string {
  return `${prefix}${index}`;
}

/** The labels a kubelet puts on the Node it registers as `name` (linux, amd64). */
export function kubeletLabels(name: string): Record<string, string> {
  return {
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/arch': 'amd64',
  };
}

/** The Node object KWOK will manage: the kubelet's labels, `labels`, {@link KWOK_NODE_LABEL} and the annotation. */
export function kwokNode(name: string, labels: Record<string, string> = {}): V1Node {
  return {
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION.key]: KWOK_NODE_ANNOTATION.value },
      labels: {
        ...kubeletLabels(name),
        ...labels,
        // Last: the stack finds its simulated nodes by it.
        [KWOK_NODE_LABEL.key]: KWOK_NODE_LABEL.value,
      },
    },
  };
}

/**
 * Creates the simulated Nodes `names` (each with `labels`), `concurrency`
 * at a time. A Node that already exists is left as it is (a restarted
 * stack); any other error is thrown.
 */
export async function createKwokNodes(admin: KubeConfig, names: readonly string[], labels: Record<string, string> = {}, concurrency = 50): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++] as string;
      await core.createNode({ body: kwokNode(name, labels) }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
}

/** Whether a Node is Ready and schedulable: Ready=True and no not-ready or unreachable taint left. */
export function nodeReady(node: V1Node): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const tainted = node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready' || t.key === 'node.kubernetes.io/unreachable') ?? false;
  return ready && !tainted;
}

/**
 * Resolves once every Node of `names` is Ready and untainted at once (see
 * {@link nodeReady}): KWOK has registered it and the node lifecycle
 * controller has lifted the not-ready taint, so pods can be scheduled.
 * Lists the simulated Nodes once and then watches them (polling whole lists
 * of 1,000 nodes cost the API server more than registering them); throws
 * after `timeoutMs` naming how many are not ready yet, and one of them.
 */
export async function waitForKwokNodes(admin: KubeConfig, names: readonly string[], timeoutMs = 120_000): Promise<void> {
  const wanted = new Set(names);
  const pending = new Set(names);
  if (pending.size === 0) return;
  const core = admin.makeApiClient(CoreV1Api);
  const selector = `${KWOK_NODE_LABEL.key}=${KWOK_NODE_LABEL.value}`;
  const informer = makeInformer<V1Node>(admin, '/api/v1/nodes', () => core.listNode({ labelSelector: selector }), selector);
  let timer: NodeJS.Timeout | undefined;
  let finished = false;
  try {
    await new Promise<void>((resolve, reject) => {
      const seen = (node: V1Node) => {
        const name = node.metadata?.name ?? '';
        if (nodeReady(node)) pending.delete(name);
        else if (wanted.has(name)) pending.add(name);
        if (pending.size === 0) resolve();
      };
      informer.on('add', seen);
      informer.on('update', seen);
      // The informer stops on a failed list or watch: start it again (not once stopped
      // here, which aborts its watch and reports that as an error too).
      informer.on('error', () => {
        setTimeout(() => {
          if (!finished) informer.start().catch(reject);
        }, 1000);
      });
      timer = setTimeout(() => {
        reject(new Error(`${pending.size} of ${wanted.size} KWOK nodes not ready after ${timeoutMs / 1000}s (one is ${[...pending][0]})`));
      }, timeoutMs);
      informer.start().catch(reject);
    });
  } finally {
    finished = true;
    clearTimeout(timer);
    await informer.stop();
  }
}
