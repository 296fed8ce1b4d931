/**
 * Target node lists as operators give them: a list of names, or one
 * comma-separated string (`"a,b"`, as Shipyard's `target_nodes` allows).
 */
import { dns1123SubdomainErrors } from './label-syntax.ts';
import { quote } from './text.ts';

/**
 * Most nodes one run takes. The run and its per-node results are sized for
 * this many (payloads, history, result pages); a larger site is relabelled
 * in several runs, by rack or by filter.
 */
export const MAX_TARGETS = 50_000;

/** Either the normalised targets or the reason they are invalid. */
export type TargetsResult = { ok: true; targets: string[] } | { ok: false; message: string };

/**
 * Normalises and checks a target list. Accepts an array of strings or a
 * comma-separated string; trims names; rejects a missing or empty list,
 * more than {@link MAX_TARGETS} names, non-string items, empty names, names
 * that are not Kubernetes node names (DNS-1123 subdomains) and duplicates,
 * naming the offending entry. The order given is kept.
 */
export function normalizeTargets(value: unknown): TargetsResult {
  let items: unknown[];
  if (typeof value === 'string') items = value.split(',');
  else if (Array.isArray(value)) items = value;
  else if (value === undefined || value === null) return { ok: false, message: 'target nodes are missing: give at least one node name' };
  else return { ok: false, message: `target nodes must be a list of node names or a comma-separated string, not ${typeof value}` };
  if (items.length > MAX_TARGETS) {
    return {
      ok: false,
      message: `too many target nodes: ${items.length} given, a run takes at most ${MAX_TARGETS}; split the site into several runs (by rack or filter)`,
    };
  }
  const targets: string[] = [];
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (typeof item !== 'string') {
      return { ok: false, message: `target node #${i + 1} is not a string (${item === null ? 'null' : typeof item})` };
    }
    const name = item.trim();
    if (name === '') {
      if (typeof value === 'string' && items.length === 1) break;
      return { ok: false, message: `target node #${i + 1} is empty` };
    }
    const invalid = dns1123SubdomainErrors(name);
    if (invalid.length > 0) return { ok: false, message: `target node #${i + 1} ${quote(name)} is not a node name: ${invalid.join('; ')}` };
    if (seen.has(name)) return { ok: false, message: `target node ${name} is listed more than once` };
    seen.add(name);
    targets.push(name);
  }
  if (targets.length === 0) return { ok: false, message: 'target nodes are empty: give at least one node name' };
  return { ok: true, targets };
}
