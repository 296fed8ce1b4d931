/**
 * Node taints as relabel handles them: their identity (`key:effect`, as
 * Kubernetes allows one taint per key and effect), the taints nobody but
 * Kubernetes may touch, and the syntax of a taint written in a document,
 * checked as the API server checks `spec.taints`.
 */
import { TAINT_EFFECTS, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { invalidValue, labelKeyErrors, labelValueErrors } from './label-syntax.ts';
import { quote } from './text.ts';

/**
 * A Node taint. `timeAdded` is kept as the API server gave it (RFC 3339,
 * set on NoExecute taints by Kubernetes), so a rewritten taint list keeps
 * everyone else's taints exactly as they were.
 */
export type Taint = { key: string; value?: string; effect: string; timeAdded?: string };

/** Key prefixes of the taints Kubernetes itself sets and lifts (not-ready, unreachable, uninitialized…). */
export const SYSTEM_TAINT_PREFIXES = ['node.kubernetes.io/', 'node.cloudprovider.kubernetes.io/'] as const;

/** True when Kubernetes owns taints with `key`: relabel never sets or removes them. */
export function isSystemTaintKey(key: string): boolean {
  return SYSTEM_TAINT_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** What names the join taint: the label policy's `join_taint_key`, absent for the default. */
export type JoinTaintPolicy = { joinTaintKey?: string };

/** The key of the join taint under `policy`: its `join_taint_key`, or {@link UNINITIALIZED_TAINT_KEY}. */
export function joinTaintKeyOf(policy: JoinTaintPolicy | undefined): string {
  return policy?.joinTaintKey ?? UNINITIALIZED_TAINT_KEY;
}

/**
 * Which join taint a write lifts: none (`false`), the default one (`true`,
 * {@link UNINITIALIZED_TAINT_KEY}), or the taint with this key (the policy's
 * `join_taint_key`).
 */
export type TaintLift = boolean | string;

/** The key of the taint `lift` lifts, or undefined when it lifts none. */
export function liftedTaintKey(lift: TaintLift | undefined): string | undefined {
  return lift === true ? UNINITIALIZED_TAINT_KEY : typeof lift === 'string' ? lift : undefined;
}

/** What a policy lifts: its join taint when it sets `lift_uninitialized_taint`, else nothing. */
export function taintLiftOf(policy: JoinTaintPolicy & { liftUninitializedTaint: boolean }): TaintLift {
  return policy.liftUninitializedTaint ? joinTaintKeyOf(policy) : false;
}

/** True when `key` is relabel's join taint: the default key always, and the policy's own when it names one. */
export function isJoinTaintKey(key: string, policy?: JoinTaintPolicy): boolean {
  return key === UNINITIALIZED_TAINT_KEY || key === policy?.joinTaintKey;
}

/**
 * What is wrong with `key` as the label policy's `join_taint_key`: the API
 * server's messages for a taint key, and a refusal of the system taints
 * (Kubernetes lifts those itself). Empty when it may be the join taint.
 */
export function joinTaintKeyErrors(key: string): string[] {
  const errors = labelKeyErrors(key).map((message) => `taint key ${invalidValue(key, message)}`);
  if (isSystemTaintKey(key)) errors.push(`taint ${quote(key)} is set and lifted by Kubernetes itself; it cannot be relabel's join taint`);
  return errors;
}

/** A taint's identity on a Node: `key:effect`. */
export function taintId(taint: Pick<Taint, 'key' | 'effect'>): string {
  return `${taint.key}:${taint.effect}`;
}

/** A taint as people write it: `key=value:effect`, or `key:effect` without a value. */
export function formatTaint(taint: Taint): string {
  return taint.value === undefined || taint.value === '' ? taintId(taint) : `${taint.key}=${taint.value}:${taint.effect}`;
}

/**
 * Reads a `key:effect` identity back; undefined when it is not one (the key
 * is not a valid taint key or the effect is unknown).
 */
export function parseTaintId(id: string): { key: string; effect: string } | undefined {
  const at = id.lastIndexOf(':');
  if (at < 0) return undefined;
  const key = id.slice(0, at);
  const effect = id.slice(at + 1);
  if (!(TAINT_EFFECTS as readonly string[]).includes(effect) || labelKeyErrors(key).length > 0) return undefined;
  return { key, effect };
}

/** Orders taints by key, then effect. */
export function byTaintId(a: Taint, b: Taint): number {
  const x = taintId(a);
  const y = taintId(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * What is wrong with a taint's key as a document sets it: the API server's
 * messages for its syntax (a qualified name, as a label key, case
 * included), and refusals of system taints and relabel's own join taint
 * (the default key, and `policy`'s when given). Empty when a taint may have
 * that key.
 */
export function taintKeyErrors(key: string, policy?: JoinTaintPolicy): string[] {
  const errors = labelKeyErrors(key).map((message) => `taint key ${invalidValue(key, message)}`);
  // Deliberate: the API server would take these two, but they are not the documents' to set.
  if (isSystemTaintKey(key)) errors.push(`taint ${quote(key)} is set and lifted by Kubernetes itself; documents may not set it`);
  if (isJoinTaintKey(key, policy)) errors.push(joinTaintRefusal(key));
  return errors;
}

/** Why a document may not set the join taint `key`. */
export function joinTaintRefusal(key: string): string {
  return `taint ${quote(key)} is relabel's own join taint, lifted by the label policy; documents may not set it`;
}

/** The API server's messages about a taint's value (label-value syntax; absent is empty); empty when it is valid. */
export function taintValueErrors(value: string | undefined): string[] {
  return labelValueErrors(value ?? '').map((message) => `taint value ${invalidValue(value ?? '', message)}`);
}

/**
 * What is wrong with a taint's key and value as a document sets them (see
 * {@link taintKeyErrors} and {@link taintValueErrors}), each with the field
 * it is about. Empty when the taint may be set.
 */
export function taintSyntaxErrors(key: string, value: string | undefined): { target: 'key' | 'value'; message: string }[] {
  return [
    ...taintKeyErrors(key).map((message) => ({ target: 'key' as const, message })),
    ...taintValueErrors(value).map((message) => ({ target: 'value' as const, message })),
  ];
}
