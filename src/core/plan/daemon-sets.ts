/**
 * Whether a DaemonSet runs a pod on a node, as the DaemonSet controller
 * decides it (`NodeShouldRunDaemonPod`): its pod template's node name,
 * node selector and required node affinity, and its tolerations with the
 * controller's defaults added against the node's NoSchedule and NoExecute
 * taints. Pure.
 */
import { matchesNodePlacement, type NodeSelector } from './node-affinity.ts';
import { BLOCKING_EFFECTS, daemonPodTolerations, toleratesTaints, type TaintLike, type Toleration } from './tolerations.ts';

/** A node as the impact sees it at one moment: its labels and taints. */
export type NodeView = { labels: Readonly<Record<string, string>>; taints: readonly TaintLike[] };

/** Where a pod (or a DaemonSet's pod template) may be placed. */
export type PodPlacement = {
  nodeSelector?: Readonly<Record<string, string>>;
  /** `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`. */
  affinity?: NodeSelector;
  tolerations?: readonly Toleration[];
};

/** A DaemonSet: where its pod template may run. */
export type DaemonSetInfo = PodPlacement & {
  namespace: string;
  name: string;
  /** `spec.template.spec.nodeName`, when the template pins one node. */
  nodeName?: string;
  /** `spec.template.spec.hostNetwork`. */
  hostNetwork?: boolean;
};

/** The DaemonSet controller's verdict for one node: create a pod there; keep one that is there. */
export type DaemonVerdict = { shouldRun: boolean; shouldContinueRunning: boolean };

/**
 * Whether `ds` runs a pod on `node` (`NodeShouldRunDaemonPod`): the
 * template's node name (if any) and its required placement (node selector
 * and required node affinity) must match, or neither is true. Then, with the
 * controller's default tolerations added, an untolerated NoSchedule or
 * NoExecute taint stops a new pod (`shouldRun` false) but keeps one already
 * there unless a NoExecute taint is untolerated. PreferNoSchedule is ignored.
 */
export function daemonSetShouldRun(ds: DaemonSetInfo, node: { name: string } & NodeView): DaemonVerdict {
  if (ds.nodeName && ds.nodeName !== node.name) return { shouldRun: false, shouldContinueRunning: false };
  if (!matchesNodePlacement(ds.nodeSelector, ds.affinity, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = daemonPodTolerations(ds.tolerations ?? [], ds.hostNetwork ?? false);
  if (toleratesTaints(tolerations, node.taints, BLOCKING_EFFECTS)) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: toleratesTaints(tolerations, node.taints, ['NoExecute']) };
}
