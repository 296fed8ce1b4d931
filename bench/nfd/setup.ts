/**
 * What Node Feature Discovery needs on the bench's cluster before
 * `nfd-master` runs: its CRDs, taken from the NFD module pinned in
 * tools/nfd (the one `npm run tools` builds nfd-master from), and one
 * NodeFeature object per node carrying the labels, as nfd-worker would
 * publish them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiException,
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

/** NFD's API group and version of NodeFeature. */
export const NFD_GROUP = 'nfd.k8s-sigs.io';
const NFD_VERSION = 'v1alpha1';

/** The label nfd-master finds a NodeFeature's node by. */
export const NFD_NODE_NAME_LABEL = 'nfd.node.kubernetes.io/node-name';

const TOOLS_NFD = new URL('../../tools/nfd/', import.meta.url).pathname;

/**
 * The directory of the pinned NFD module in the Go module cache (`go list
 * -m -json` in tools/nfd). Throws, saying to run `npm run tools`, when the
 * module has not been downloaded.
 */
export function nfdModuleDir(): string {
  const out = execFileSync('go', ['list', '-m', '-json', 'sigs.k8s.io/node-feature-discovery'], {
    cwd: TOOLS_NFD,
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const { Dir: dir, Version: version } = JSON.parse(out) as { Dir?: string; Version?: string };
  if (!dir) throw new Error(`Node Feature Discovery ${version ?? ''} is not in the Go module cache: run \`npm run tools\``);
  return dir;
}

/** Creates each CRD of NFD's `deployment/base/nfd-crds/` (those that exist are left as they are) and waits until all are established. */
export async function applyNfdCrds(kc: KubeConfig, moduleDir: string): Promise<string[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const text = readFileSync(join(moduleDir, 'deployment/base/nfd-crds/nfd-api-crds.yaml'), 'utf8');
  const crds = parseAllDocuments(text)
    .map((d) => d.toJS() as V1CustomResourceDefinition | null)
    .filter((d): d is V1CustomResourceDefinition => d?.kind === 'CustomResourceDefinition');
  for (const body of crds) {
    try {
      await api.createCustomResourceDefinition({ body });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
    }
  }
  const names = crds.map((c) => c.metadata?.name ?? '');
  for (const name of names) {
    for (let i = 0; ; i++) {
      const crd = await api.readCustomResourceDefinition({ name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (i >= 100) throw new Error(`CRD ${name} not established after 10 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return names;
}

/** Creates `namespace` unless it exists. */
export async function ensureNamespace(kc: KubeConfig, namespace: string): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  }
}

/** Runs `fn` over `items`, `width` at once. */
async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
    }),
  );
}

/**
 * Publishes `labels` for every node as nfd-worker does: one NodeFeature per
 * node in `namespace`, named after the node and labelled with its name;
 * an existing one gets the new values (a merge patch of its spec: keys
 * never removed, as the bench only changes values).
 */
export async function publishNodeFeatures(kc: KubeConfig, namespace: string, nodes: readonly string[], labels: Record<string, string>): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const where = { group: NFD_GROUP, version: NFD_VERSION, namespace, plural: 'nodefeatures' };
  await pool(nodes, 32, async (node) => {
    const body = {
      apiVersion: `${NFD_GROUP}/${NFD_VERSION}`,
      kind: 'NodeFeature',
      metadata: { name: node, namespace, labels: { [NFD_NODE_NAME_LABEL]: node } },
      spec: { labels },
    };
    try {
      await api.createNamespacedCustomObject({ ...where, body });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
      await api.patchNamespacedCustomObject({ ...where, name: node, body: { spec: { labels } } }, merge);
    }
  });
}
