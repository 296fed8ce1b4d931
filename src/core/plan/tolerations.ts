/**
 * Taints and tolerations as Kubernetes weighs them, in relabel's own small
 * types: whether a toleration tolerates a taint (k8s.io/api
 * `Toleration.ToleratesTaint`), whether a pod tolerates a node's taints of
 * some effects (component-helpers `FindMatchingUntoleratedTaint`), when the
 * taint-eviction controller deletes a pod from a node with NoExecute taints
 * (`GetMatchingTolerations`, `getMinTolerationTime`), and the tolerations
 * the DaemonSet controller adds to every daemon pod
 * (`AddOrUpdateDaemonPodTolerations`).
 */
import type { Taint } from './taints.ts';
import { parseInt64 } from './node-affinity.ts';

/** A pod's toleration. An absent operator means Equal; an absent key, every key; an absent effect, every effect. */
export type Toleration = {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  /** Seconds a NoExecute taint is tolerated before the pod is evicted; absent: for ever. */
  tolerationSeconds?: number;
};

/** What a toleration looks at on a taint. */
export type TaintLike = Pick<Taint, 'key' | 'value' | 'effect'>;

/** An integer as a toleration's Gt/Lt reads it: optional minus, no plus, no leading zero, within int64. */
function strictInt64(text: string): bigint | undefined {
  return /^-?(0|[1-9][0-9]*)$/.test(text) ? parseInt64(text) : undefined;
}

/** Taint effects that keep a pod from being scheduled or from running (the scheduler and the DaemonSet controller ignore PreferNoSchedule). */
export const BLOCKING_EFFECTS = ['NoSchedule', 'NoExecute'] as const;

/**
 * True when `toleration` tolerates `taint`: its effect is empty or the
 * taint's, its key is empty or the taint's, and by operator: Equal (or
 * empty) compares values (an absent value is empty), Exists matches any
 * value, Gt/Lt compare the taint's value with the toleration's as int64
 * (taint > toleration for Gt, taint < toleration for Lt), each written
 * strictly: an optional minus and digits without a leading zero, so `+5`
 * and `05` are no integers here, unlike in a node selector's Gt/Lt (the API
 * server admits these two only with the alpha
 * TaintTolerationComparisonOperators gate). Any other operator tolerates
 * nothing.
 */
export function toleratesTaint(toleration: Toleration, taint: TaintLike): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    case 'Gt':
    case 'Lt': {
      const bound = strictInt64(toleration.value ?? '');
      const actual = strictInt64(taint.value ?? '');
      if (bound === undefined || actual === undefined) return false;
      return toleration.operator === 'Gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

/**
 * True when every taint in `taints` whose effect is one of `effects` is
 * tolerated by at least one of `tolerations` (taints of other effects do
 * not count). No such taint: true.
 */
export function toleratesTaints(tolerations: readonly Toleration[], taints: readonly TaintLike[], effects: readonly string[]): boolean {
  return taints.every((taint) => !effects.includes(taint.effect) || tolerations.some((t) => toleratesTaint(t, taint)));
}

/** What the taint-eviction controller does to a pod on a node: nothing, or delete it after some seconds (0: at once). */
export type NoExecuteOutcome = { evicted: false } | { evicted: true; afterSeconds: number };

/**
 * What the taint-eviction controller does to a pod with `tolerations` on a
 * node with `taints`. Only NoExecute taints count. One not tolerated: the
 * pod is deleted at once. All tolerated: for each taint the *first*
 * toleration (in the pod's order) that tolerates it is the one used, and
 * the pod is deleted after the least `tolerationSeconds` among those used
 * (0 or negative: at once); when none of them sets seconds, never.
 */
export function noExecuteOutcome(tolerations: readonly Toleration[], taints: readonly TaintLike[]): NoExecuteOutcome {
  let least: number | undefined;
  for (const taint of taints) {
    if (taint.effect !== 'NoExecute') continue;
    const used = tolerations.find((t) => toleratesTaint(t, taint));
    if (!used) return { evicted: true, afterSeconds: 0 };
    if (used.tolerationSeconds !== undefined) least = Math.min(least ?? Infinity, Math.max(0, used.tolerationSeconds));
  }
  return least === undefined ? { evicted: false } : { evicted: true, afterSeconds: least };
}

/** The tolerations the DaemonSet controller gives every daemon pod (the last one only to pods on the host network). */
export const DAEMON_POD_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The toleration of `node.kubernetes.io/network-unavailable` that daemon pods on the host network get. */
export const HOST_NETWORK_DAEMON_TOLERATION: Toleration = { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' };

/** Same key, effect, operator and value (`Toleration.MatchToleration`; seconds aside). */
function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') && (a.effect ?? '') === (b.effect ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '')
  );
}

/**
 * A DaemonSet template's tolerations with the controller's defaults added
 * (`AddOrUpdateDaemonPodTolerations`): a default replaces, in place, a
 * template toleration with the same key, effect, operator and value (so a
 * template's `tolerationSeconds` on not-ready/unreachable is dropped: daemon
 * pods tolerate them for ever), and is appended otherwise. Pure: returns a new list.
 */
export function daemonPodTolerations(template: readonly Toleration[], hostNetwork: boolean): Toleration[] {
  let tolerations = [...template];
  for (const extra of hostNetwork ? [...DAEMON_POD_TOLERATIONS, HOST_NETWORK_DAEMON_TOLERATION] : DAEMON_POD_TOLERATIONS) {
    const replaced = tolerations.map((t) => (sameToleration(t, extra) ? { ...extra } : t));
    tolerations = tolerations.some((t) => sameToleration(t, extra)) ? replaced : [...tolerations, { ...extra }];
  }
  return tolerations;
}
