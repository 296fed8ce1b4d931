/**
 * The benchmark's nodes: registering them (as KWOK nodes when the simulated
 * cluster plays their kubelets, so they heartbeat), the plain-client floor
 * that writes them, and the check that they are as the design says.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION } from '../src/core/plan/constants.ts';
import { isKubeletLabelKey } from '../src/core/plan/label-keys.ts';
import { nodePatch } from '../src/core/plan/node-reconcile.ts';
import { formatOwnedLabels } from '../src/core/plan/owned-labels.ts';
import type { Design } from '../src/core/site/validate-site.ts';
import { planOf } from '../src/core/plan/node-plan.ts';
import { createNodeApi, loadKubeConfig } from '../src/kube/nodes.ts';
import { isStaleWrite } from '../src/kube/errors.ts';
import { kwokNode, waitForKwokNodes } from '../stack/kwok.ts';
import { FLOOR_LABEL_KEYS, FLOOR_OWNED_ANNOTATION, floorValues } from './floor-labels.ts';

/** The nodes named with `prefix`, one paginated LIST of 500 a page. */
export async function* benchNodes(core: CoreV1Api, prefix: string): AsyncGenerator<V1Node> {
  let cont: string | undefined;
  do {
    const page = await core.listNode({ limit: 500, ...(cont ? { _continue: cont } : {}) });
    for (const n of page.items) if (n.metadata?.name?.startsWith(prefix)) yield n;
    cont = page.metadata?._continue || undefined;
  } while (cont);
}

/** Runs `fn` over `items`, `width` at once. */
export async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
    }),
  );
}

/**
 * A client for the admin kubeconfig whose requests share one kept-alive
 * connection pool, as relabel's and any Go client's do (a client without
 * it opens a TLS connection per request, which would flatter every ratio).
 */
export function benchCore(adminKubeconfig: string): { kc: KubeConfig; core: CoreV1Api } {
  const kc = loadKubeConfig(adminKubeconfig);
  createNodeApi(kc);
  return { kc, core: kc.makeApiClient(CoreV1Api) };
}

/**
 * A node as relabel leaves it: what its planner would patch onto a freshly
 * registered node (labels, annotations, taints and every ownership record).
 */
export function asDesired(design: Design, name: string): V1Node {
  const registered = { labels: { 'kubernetes.io/hostname': name }, annotations: {}, taints: [], resourceVersion: '' };
  const patch = nodePatch(planOf(design, registered, name), registered, design.policy.liftUninitializedTaint);
  const labels = { ...registered.labels, ...patch?.metadata.labels };
  const annotations = patch?.metadata.annotations ?? {};
  const taints = patch?.spec?.taints ?? [];
  const present = <T>(o: Record<string, T | null>) => Object.fromEntries(Object.entries(o).filter((e): e is [string, T] => e[1] !== null));
  // A node freshly made carries no taint times: the taints go as documents write them.
  const spec = { taints: taints.map(({ key, value, effect }) => ({ key, effect, ...(value === undefined ? {} : { value }) })) };
  return { metadata: { name, labels: present(labels), annotations: present(annotations) }, ...(taints.length > 0 ? { spec } : {}) };
}

/**
 * Registers `names`: plain nodes, or with `kwok` nodes KWOK manages (its
 * annotation and label added), waited for until every one is Ready; with
 * `design`, each already as relabel would leave it; with `labels`, each
 * carrying those its registration gives it (a MachineDeployment's).
 */
export async function registerNodes(
  kc: KubeConfig,
  names: readonly string[],
  options: { kwok: boolean; design?: Design; labels?: (name: string) => Record<string, string> },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await pool(names, 32, (name) => {
    const desired: V1Node = options.design ? asDesired(options.design, name) : { metadata: { name, labels: { 'kubernetes.io/hostname': name } } };
    const plain: V1Node = { ...desired, metadata: { ...desired.metadata, labels: { ...desired.metadata?.labels, ...options.labels?.(name) } } };
    if (!options.kwok) return core.createNode({ body: plain });
    const simulated = kwokNode(name);
    const metadata = {
      ...plain.metadata,
      labels: { ...simulated.metadata?.labels, ...plain.metadata?.labels },
      annotations: { ...simulated.metadata?.annotations, ...plain.metadata?.annotations },
    };
    return core.createNode({ body: { ...plain, metadata } });
  });
  if (options.kwok) await waitForKwokNodes(kc, names, 30 * 60_000);
}

/**
 * The floor: one paginated LIST, then per node one merge patch of 16 labels
 * and an annotation guarded by the resourceVersion listed, `width` at once.
 * A patch refused because the node moved (a heartbeat) is sent again after
 * a GET, as a plain client does; those are counted.
 */
export async function floor(core: CoreV1Api, prefix: string, width: number): Promise<{ ms: number; nodes: number; conflicts: number }> {
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const t0 = performance.now();
  const seen: { name: string; rv: string }[] = [];
  for await (const n of benchNodes(core, prefix)) seen.push({ name: n.metadata?.name ?? '', rv: n.metadata?.resourceVersion ?? '' });
  const labels = Object.fromEntries(FLOOR_LABEL_KEYS.map((key, i) => [key, `value-${i}`]));
  const annotations = { [FLOOR_OWNED_ANNOTATION]: FLOOR_LABEL_KEYS.join(',') };
  let conflicts = 0;
  await pool(seen, width, async (n) => {
    for (let rv = n.rv; ; conflicts++) {
      try {
        return await core.patchNode({ name: n.name, body: { metadata: { resourceVersion: rv, labels, annotations } } }, merge);
      } catch (err) {
        if (!isStaleWrite(err)) throw err;
        rv = (await core.readNode({ name: n.name })).metadata?.resourceVersion ?? '';
      }
    }
  });
  return { ms: performance.now() - t0, nodes: seen.length, conflicts };
}

/** Nodes whose labels or ownership record differ from the design (at most a few named). */
export async function wrongNodes(core: CoreV1Api, prefix: string, design: Design, skip: ReadonlySet<string> = new Set()): Promise<string[]> {
  const wrong: string[] = [];
  for await (const n of benchNodes(core, prefix)) {
    const name = n.metadata?.name ?? '';
    if (skip.has(name)) continue;
    const desired = design.nodes[name]?.labels ?? {};
    const labels = n.metadata?.labels ?? {};
    const owned = formatOwnedLabels(
      Object.keys(desired)
        .filter((k) => !isKubeletLabelKey(k))
        .sort(),
    );
    if (Object.entries(desired).some(([k, v]) => labels[k] !== v) || n.metadata?.annotations?.[OWNED_LABELS_ANNOTATION] !== owned) wrong.push(name);
  }
  return wrong;
}

/** Nodes named with `prefix` that do not carry every label of the pass tagged `tag` (one paginated LIST). */
export async function nodesWithout(core: CoreV1Api, prefix: string, tag: string): Promise<string[]> {
  const want = Object.entries(floorValues(tag).labels);
  const wrong: string[] = [];
  for await (const n of benchNodes(core, prefix)) if (want.some(([k, v]) => n.metadata?.labels?.[k] !== v)) wrong.push(n.metadata?.name ?? '');
  return wrong;
}

/**
 * Deletes `names` and registers them anew as `register` does (the bench's
 * `--fresh-nodes`): each node then is as it registered, whatever earlier
 * passes wrote. Waits until the API server lists none of the old ones
 * before registering, so that a Ready node seen after is a new one.
 */
export async function renewNodes(kc: KubeConfig, names: readonly string[], prefix: string, register: () => Promise<void>): Promise<number> {
  const core = kc.makeApiClient(CoreV1Api);
  const t0 = performance.now();
  await pool(names, 32, (name) => core.deleteNode({ name }));
  const wanted = new Set(names);
  const deadline = Date.now() + 10 * 60_000;
  for (let left = names.length; left > 0;) {
    left = 0;
    for await (const n of benchNodes(core, prefix)) if (wanted.has(n.metadata?.name ?? '')) left++;
    if (left > 0 && Date.now() > deadline) throw new Error(`${left} of ${names.length} deleted nodes still listed after 10 minutes`);
    if (left > 0) await new Promise((r) => setTimeout(r, 500));
  }
  await register();
  return performance.now() - t0;
}
