/**
 * The small slice of the Kubernetes API relabel uses: read a Node, patch a
 * Node. Everything else in the activities talks to this interface, so error
 * mapping can be unit-tested against a fake and proven against the real server.
 */
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';

/** What relabel needs to know of a Node. */
export interface NodeState {
  name: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: { key: string; value?: string; effect: string }[];
}

/** Read and patch Nodes. Errors are the client's; see `kube-errors.ts` for their mapping. */
export interface NodeApi {
  /** Reads one Node. */
  readNode(name: string): Promise<NodeState>;
  /** Sends one JSON merge patch to a Node and returns its new state. */
  patchNode(name: string, patch: object): Promise<NodeState>;
}

/**
 * Loads a kubeconfig: the file at `path` when given, else `KUBECONFIG`, the
 * in-cluster service account, or ~/.kube/config (the client's default order).
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** Converts the client's Node object into {@link NodeState}. */
export function toNodeState(node: V1Node): NodeState {
  return {
    name: node.metadata?.name ?? '',
    resourceVersion: node.metadata?.resourceVersion ?? '',
    labels: { ...(node.metadata?.labels ?? {}) },
    annotations: { ...(node.metadata?.annotations ?? {}) },
    taints: (node.spec?.taints ?? []).map((t) => ({
      key: t.key,
      effect: t.effect,
      ...(t.value === undefined ? {} : { value: t.value }),
    })),
  };
}

/** A {@link NodeApi} backed by @kubernetes/client-node. */
export function createNodeApi(kc: KubeConfig): NodeApi {
  const core = kc.makeApiClient(CoreV1Api);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    async readNode(name) {
      return toNodeState(await core.readNode({ name }));
    },
    async patchNode(name, patch) {
      return toNodeState(await core.patchNode({ name, body: patch, fieldManager: 'relabel' }, mergePatch));
    },
  };
}
