/**
 * A JSON Patch applier for unit tests' in-memory nodes, behaving as the API
 * server's does for the operations relabel sends: `test` compares JSON
 * values, passes for an absent member tested against `null` and fails under
 * a missing parent; `add` sets a member of an existing object; `remove`
 * needs the member. Applies all or nothing. Not product code.
 */
import type { JsonPatchOp } from '../node-guard.ts';

/** Why a patch was refused: `test` when a test failed, else the operation that did not apply. */
export class PatchRefused extends Error {
  readonly kind: 'test' | 'apply';
  constructor(kind: 'test' | 'apply', message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Whether two JSON values are equal, objects compared member by member whatever their order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k]));
}

function tokens(path: string): string[] {
  return path.split('/').slice(1).map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** `doc` (any JSON object) with `ops` applied, as a new object; throws {@link PatchRefused}. */
export function applyJsonPatch<T extends object>(doc: T, ops: readonly JsonPatchOp[]): T {
  const next = structuredClone(doc) as Record<string, unknown>;
  for (const op of ops) {
    const path = tokens(op.path);
    const key = path.pop() as string;
    let parent: unknown = next;
    for (const t of path) parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[t] : undefined;
    if (parent === null || typeof parent !== 'object') throw new PatchRefused(op.op === 'test' ? 'test' : 'apply', `missing path: ${op.path}`);
    const obj = parent as Record<string, unknown>;
    const present = Object.hasOwn(obj, key) && obj[key] !== undefined;
    if (op.op === 'test') {
      const ok = present ? sameJson(obj[key], op.value) : op.value === null;
      if (!ok) throw new PatchRefused('test', `testing value ${op.path} failed`);
    } else if (op.op === 'add') {
      obj[key] = structuredClone(op.value);
    } else {
      if (!present) throw new PatchRefused('apply', `remove of missing ${op.path}`);
      delete obj[key];
    }
  }
  return next as T;
}
