/**
 * Rollouts in waves: how a run's changed nodes are split into waves (by
 * rack, by a label's value, by count or percentage, a canary first), and
 * the gates between waves (a health timeout, approvals, how many failed
 * nodes halt the run). Pure: the options as the CLI, the API and the label
 * policy write them, their checks, and the assignment of nodes to waves.
 */

/** What the gate after a wave waits for a person's approval on. */
export const ApprovalGate = {
  /** No approval: the run goes on once the health gate passes. */
  none: 'none',
  /** An approval after the first wave (the canary) only. */
  first: 'first',
  /** An approval after every wave but the last. */
  each: 'each',
} as const;
/** One of the {@link ApprovalGate} strings. */
export type ApprovalGate = (typeof ApprovalGate)[keyof typeof ApprovalGate];

/** How nodes are grouped into waves: by their rack in the design, or by the value a label key will have. */
export type WaveGrouping = 'rack' | { label: string };

/** The most nodes in one wave: a count, or a percentage of the run's changed nodes (rounded up). */
export type WaveSize = { count: number } | { percent: number };

/**
 * How a run is rolled out. Waves are on when any of `by`, `size` and
 * `canary` is set; the gates apply between waves only.
 */
export interface Rollout {
  /** Group nodes into waves; absent: one group (split by `size` only). `none` turns waves off. */
  by?: WaveGrouping | 'none';
  /** Split each group into waves of at most this many nodes. */
  size?: WaveSize;
  /** A first wave of this many nodes, taken from the first group, before any other. */
  canary?: number;
  /** Where the run waits for `approve` (default none). */
  approval?: ApprovalGate;
  /** Seconds a wave's DaemonSet pods get to become Ready (or go) before the run halts; 0: no health gate (default {@link DEFAULT_HEALTH_TIMEOUT_SECONDS}). */
  healthTimeoutSeconds?: number;
  /** Failed nodes a wave may have without halting the run (default 0). */
  maxFailedNodes?: number;
}

/** A rollout with every default filled in, as a run applies it. */
export interface EffectiveRollout {
  by?: WaveGrouping;
  size?: WaveSize;
  canary?: number;
  approval: ApprovalGate;
  healthTimeoutSeconds: number;
  maxFailedNodes: number;
}

/** Seconds a wave's DaemonSet pods get by default. */
export const DEFAULT_HEALTH_TIMEOUT_SECONDS = 300;
/** Longest health timeout accepted: a day. */
export const MAX_HEALTH_TIMEOUT_SECONDS = 86_400;
/** Most waves a run may have. */
export const MAX_WAVES = 5000;
/** Longest label key accepted by `label:<key>` (a prefix of 253 and a name of 63 characters). */
const MAX_KEY = 317;

/** One wave as assigned: its name and its nodes, in target order. */
export interface Wave {
  name: string;
  nodes: string[];
}

/** A changed node and its group key (its rack, or its label's value); absent: not in any group. */
export interface WaveMember {
  node: string;
  group?: string | null;
}

/** The result of a parse: the value, or what is wrong with it. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Parses `--waves`: `rack`, `label:<key>` or `none`. */
export function parseWaveGrouping(text: string): Parsed<WaveGrouping | 'none'> {
  if (text === 'rack' || text === 'none') return { ok: true, value: text };
  if (text.startsWith('label:')) {
    const label = text.slice('label:'.length);
    if (label.length > 0 && label.length <= MAX_KEY && !/\s/.test(label)) return { ok: true, value: { label } };
  }
  return { ok: false, message: `waves ${JSON.stringify(text.slice(0, 80))}: expected rack, label:<key> or none` };
}

/** Parses `--wave-size`: a positive count (`25`) or a percentage from 1 to 100 (`10%`). */
export function parseWaveSize(text: string | number): Parsed<WaveSize> {
  const s = String(text).trim();
  const percent = /^(\d{1,3})%$/.exec(s);
  if (percent) {
    const p = Number(percent[1]);
    if (p >= 1 && p <= 100) return { ok: true, value: { percent: p } };
  } else if (/^\d{1,9}$/.test(s) && Number(s) >= 1) {
    return { ok: true, value: { count: Number(s) } };
  }
  return { ok: false, message: `wave size ${JSON.stringify(s.slice(0, 40))}: expected a positive count (25) or a percentage from 1% to 100%` };
}

const isCount = (n: unknown, min: number, max: number) => typeof n === 'number' && Number.isSafeInteger(n) && n >= min && n <= max;

/** What is wrong with `rollout` (a list of messages; empty when it is valid). */
export function rolloutErrors(rollout: Rollout): string[] {
  const errors: string[] = [];
  const { by, size, canary, approval, healthTimeoutSeconds, maxFailedNodes } = rollout;
  if (by !== undefined && by !== 'rack' && by !== 'none' && !(typeof by === 'object' && by !== null && parseWaveGrouping(`label:${String(by.label)}`).ok)) {
    errors.push('waves: expected rack, label:<key> or none');
  }
  if (size !== undefined) {
    const ok =
      typeof size === 'object' && size !== null && ('count' in size ? isCount(size.count, 1, 1e9) : 'percent' in size && isCount(size.percent, 1, 100));
    if (!ok) errors.push('wave size: expected a positive count or a percentage from 1 to 100');
  }
  if (canary !== undefined && !isCount(canary, 1, 1e9)) errors.push('canary: expected a positive number of nodes');
  if (approval !== undefined && !Object.values(ApprovalGate).includes(approval))
    errors.push(`approval: expected one of ${Object.values(ApprovalGate).join(', ')}`);
  if (healthTimeoutSeconds !== undefined && !isCount(healthTimeoutSeconds, 0, MAX_HEALTH_TIMEOUT_SECONDS)) {
    errors.push(`health timeout: expected whole seconds from 0 to ${MAX_HEALTH_TIMEOUT_SECONDS}`);
  }
  if (maxFailedNodes !== undefined && !isCount(maxFailedNodes, 0, 1e9)) errors.push('max failed nodes: expected a non-negative number');
  return errors;
}

/**
 * The rollout a run applies: the policy's, with the run's own options over
 * it, defaults filled in; undefined when the result has no waves (no
 * grouping, size or canary, or `by: 'none'`).
 */
export function effectiveRollout(policy: Rollout | undefined, run: Rollout | undefined): EffectiveRollout | undefined {
  const merged: Rollout = { ...policy, ...run };
  const by = merged.by === 'none' ? undefined : merged.by;
  if (merged.by === 'none' || (by === undefined && merged.size === undefined && merged.canary === undefined)) return undefined;
  return {
    ...(by !== undefined ? { by } : {}),
    ...(merged.size !== undefined ? { size: merged.size } : {}),
    ...(merged.canary !== undefined ? { canary: merged.canary } : {}),
    approval: merged.approval ?? ApprovalGate.none,
    healthTimeoutSeconds: merged.healthTimeoutSeconds ?? DEFAULT_HEALTH_TIMEOUT_SECONDS,
    maxFailedNodes: merged.maxFailedNodes ?? 0,
  };
}

/** The most nodes per wave under `size` for a run of `total` changed nodes. */
function chunkSize(size: WaveSize | undefined, total: number): number {
  if (size === undefined) return Number.POSITIVE_INFINITY;
  return 'count' in size ? size.count : Math.max(1, Math.ceil((size.percent * total) / 100));
}

/**
 * Splits the changed nodes into waves: a canary of the first `canary`
 * nodes of the first group, then each group (sorted by name; nodes in no
 * group last, as `(no rack)` or `(no <key>)`) in chunks of at most the
 * size. Nodes keep their target order within a wave; every node is in
 * exactly one wave; no wave is empty.
 */
export function assignWaves(members: readonly WaveMember[], rollout: EffectiveRollout): Wave[] {
  const what = rollout.by === undefined ? undefined : rollout.by === 'rack' ? 'rack' : rollout.by.label;
  const groups = new Map<string, string[]>();
  const none: string[] = [];
  for (const { node, group } of members) {
    if (what === undefined) none.push(node);
    else if (group === undefined || group === null) none.push(node);
    else {
      const list = groups.get(group);
      if (list) list.push(node);
      else groups.set(group, [node]);
    }
  }
  const ordered: { name: string; nodes: string[] }[] = [...groups.keys()]
    .sort()
    .map((name) => ({ name: `${what === 'rack' ? 'rack' : what} ${name}`, nodes: groups.get(name) ?? [] }));
  if (none.length > 0) ordered.push({ name: what === undefined ? 'nodes' : `(no ${what})`, nodes: none });

  const waves: Wave[] = [];
  let canary = Math.min(rollout.canary ?? 0, members.length);
  if (canary > 0) {
    const taken: string[] = [];
    for (const group of ordered) {
      const take = group.nodes.splice(0, canary - taken.length);
      taken.push(...take);
      if (taken.length === canary) break;
    }
    waves.push({ name: 'canary', nodes: taken });
    canary = 0;
  }
  const max = chunkSize(rollout.size, members.length);
  for (const group of ordered) {
    const parts = Number.isFinite(max) ? Math.ceil(group.nodes.length / max) : 1;
    for (let k = 0; k < parts; k++) {
      const nodes = group.nodes.slice(k * max, (k + 1) * max);
      waves.push({ name: parts > 1 ? `${group.name} (${k + 1}/${parts})` : group.name, nodes });
    }
  }
  return waves.filter((w) => w.nodes.length > 0);
}

/** Whether the gate after wave `index` (from 0) of `count` waits for an approval. */
export function approvalAfter(rollout: EffectiveRollout, index: number, count: number): boolean {
  if (index >= count - 1) return false;
  return rollout.approval === ApprovalGate.each || (rollout.approval === ApprovalGate.first && index === 0);
}
