/**
 * Target node lists as operators give them: a list of names, or one
 * comma-separated string (`"a,b"`, as Shipyard's `target_nodes` allows).
 */

/** Either the normalised targets or the reason they are invalid. */
export type TargetsResult = { ok: true; targets: string[] } | { ok: false; message: string };

/**
 * Normalises and checks a target list. Accepts an array of strings or a
 * comma-separated string; trims names; rejects a missing or empty list,
 * non-string items, empty names and duplicates, naming the offending entry.
 * The order given is kept.
 */
export function normalizeTargets(value: unknown): TargetsResult {
  let items: unknown[];
  if (typeof value === 'string') items = value.split(',');
  else if (Array.isArray(value)) items = value;
  else if (value === undefined || value === null) return { ok: false, message: 'target nodes are missing: give at least one node name' };
  else return { ok: false, message: `target nodes must be a list of node names or a comma-separated string, not ${typeof value}` };
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
    if (seen.has(name)) return { ok: false, message: `target node ${name} is listed more than once` };
    seen.add(name);
    targets.push(name);
  }
  if (targets.length === 0) return { ok: false, message: 'target nodes are empty: give at least one node name' };
  return { ok: true, targets };
}
