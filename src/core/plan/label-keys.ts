/**
 * Label keys with special standing: the ones the kubelet owns, the beta/GA
 * os-arch aliases of KEP-793, and protected keys named by the label policy.
 *
 * Restricted domains (as Cluster API names them): `node-role.kubernetes.io/` and
 * `node-restriction.kubernetes.io/` (including `*.node-restriction.kubernetes.io/`)
 * are deliberately NOT rejected. The NodeRestriction admission plugin forbids
 * the *kubelet* from setting `node-restriction.kubernetes.io/` labels precisely
 * so that administrators and controllers (that is, relabel) can use them for
 * workload isolation a compromised node cannot forge; `node-role.kubernetes.io/`
 * is how roles such as `node-role.kubernetes.io/worker=""` are expressed.
 * Both are the labels this product exists to manage.
 */

/**
 * Keys the kubelet sets on its own Node. Documents asking for one fail
 * validation; the planner never writes or removes one, except the beta
 * os/arch aliases when alias reconciliation is on.
 */
export const KUBELET_LABEL_KEYS = [
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/arch',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
] as const;

/** One of {@link KUBELET_LABEL_KEYS}. */
export type KubeletLabelKey = (typeof KUBELET_LABEL_KEYS)[number];

const kubeletKeys: ReadonlySet<string> = new Set(KUBELET_LABEL_KEYS);

/** True when the kubelet owns `key` (see {@link KUBELET_LABEL_KEYS}). */
export function isKubeletLabelKey(key: string): key is KubeletLabelKey {
  return kubeletKeys.has(key);
}

/**
 * Annotations the API server reads as Node configuration and checks by
 * decoding their JSON (the legacy taints and preferAvoidPods annotations of
 * the scheduler). Documents may not set them: relabel manages taints as
 * `spec.taints`, and does not reproduce Go's JSON decoding to check them, so
 * it refuses them rather than accept a value the API server would refuse.
 */
export const NODE_CONFIG_ANNOTATIONS: readonly string[] = ['scheduler.alpha.kubernetes.io/taints', 'scheduler.alpha.kubernetes.io/preferAvoidPods'];

/**
 * KEP-793 alias pairs: the GA key is the truth, the beta key its deprecated
 * twin, reconciled to match the GA value.
 */
export const OS_ARCH_ALIASES = [
  { ga: 'kubernetes.io/os', beta: 'beta.kubernetes.io/os' },
  { ga: 'kubernetes.io/arch', beta: 'beta.kubernetes.io/arch' },
] as const;

/**
 * True when `key` matches one of the policy's protected entries. An entry
 * ending in `/` protects every key with that prefix (a whole domain, e.g.
 * `feature.node.kubernetes.io/`); any other entry protects exactly that key.
 */
export function isProtectedLabelKey(key: string, protectedKeys: readonly string[]): boolean {
  return protectedKeys.some((entry) => (entry.endsWith('/') ? key.startsWith(entry) : key === entry));
}
