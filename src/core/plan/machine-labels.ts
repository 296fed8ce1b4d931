/**
 * Which labels Cluster API puts on a Node. Its machine controller copies
 * from a Machine to the Machine's Node only the labels of three domains:
 * `node-role.kubernetes.io`, `node-restriction.kubernetes.io` and
 * `node.cluster.x-k8s.io` (the last two with their subdomains), plus those
 * matching a regex of its `--additional-sync-machine-labels` flag; and it
 * sets `cluster.x-k8s.io/interruptible` on the Node of an interruptible
 * machine. Every other `cluster.x-k8s.io` label (`deployment-name`,
 * `set-name`, `cluster-name`, `control-plane`, `pool-name`, the topology
 * ones) stays on the Machine: a node-set selector reading one matches no
 * Node unless the flag names it, which relabel cannot see. Pure.
 */
import { quote } from './text.ts';
import type { LabelSelector } from './label-selector.ts';
import type { PathSegment } from './site-error.ts';

/** The domain Cluster API's labels are in (with its subdomains). */
const CAPI_DOMAIN = 'cluster.x-k8s.io';
/** The domain whose labels (subdomains too) the machine controller copies to the Node: the one to select on. */
export const CAPI_NODE_LABEL_DOMAIN = 'node.cluster.x-k8s.io';
/** Domains copied to the Node besides it: node roles (exactly that domain), node restrictions (with subdomains). */
const COPIED = { exact: ['node-role.kubernetes.io'], withSubdomains: ['node-restriction.kubernetes.io', CAPI_NODE_LABEL_DOMAIN] };
/** A Cluster API label the machine controller sets on the Node itself. */
const SET_ON_NODE = ['cluster.x-k8s.io/interruptible'];

const inDomain = (domain: string, of: string) => domain === of || domain.endsWith(`.${of}`);

/** True when Cluster API's machine controller copies the Machine's label `key` to the Node whatever its flags say. */
export function copiedToNode(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return COPIED.exact.includes(domain) || COPIED.withSubdomains.some((d) => inDomain(domain, d));
}

/**
 * True when `key` is a Cluster API label kept on Machines only: in the
 * `cluster.x-k8s.io` domain or a subdomain of it, neither copied to the
 * Node nor set there by the machine controller.
 */
export function isMachineOnlyLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0 || copiedToNode(key) || SET_ON_NODE.includes(key)) return false;
  return inDomain(key.slice(0, slash), CAPI_DOMAIN);
}

/** Why a selector reading the Machine-only label `key` matches no Node. */
export function machineOnlyReason(key: string): string {
  return (
    `selector reads label ${quote(key)}, which Cluster API keeps on Machines only: its machine controller copies to the Node only ` +
    `labels in node-role.kubernetes.io, node-restriction.kubernetes.io and ${CAPI_NODE_LABEL_DOMAIN} (and their subdomains) and those ` +
    `its --additional-sync-machine-labels flag names, so no Node carries it unless that flag names it; select on a ` +
    `${CAPI_NODE_LABEL_DOMAIN}/… label set in the MachineDeployment's spec.template.metadata.labels`
  );
}

/** One selector field reading a Machine-only label: where (in the selector), which key, and why it matches no Node. */
export type SelectorWarning = { path: PathSegment[]; key: string; message: string };

/** Every field of `selector` that reads a label Cluster API keeps on Machines only, in selector order. */
export function machineOnlySelectorWarnings(selector: LabelSelector): SelectorWarning[] {
  const warnings: SelectorWarning[] = [];
  const check = (key: string, path: PathSegment[]) => {
    if (isMachineOnlyLabel(key)) warnings.push({ path, key, message: machineOnlyReason(key) });
  };
  for (const key of Object.keys(selector.matchLabels ?? {})) check(key, ['matchLabels', key]);
  (selector.matchExpressions ?? []).forEach((r, i) => check(r.key, ['matchExpressions', i, 'key']));
  return warnings;
}

/** The warnings of a design's node sets as text, `node set "md": …`, by set name. */
export function nodeSetSelectorWarnings(sets: Readonly<Record<string, { selector: LabelSelector }>> | undefined): string[] {
  return Object.entries(sets ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, set]) => machineOnlySelectorWarnings(set.selector).map((w) => `node set ${quote(name)}: ${w.message}`));
}
