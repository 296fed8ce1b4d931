/**
 * A JSON Patch applier for unit tests' in-memory nodes, behaving as the API
 * server's does for the operations relabel sends: `test` compares JSON
 * values, passes for an absent member tested against `null` and fails under
 * a missing parent; `add` sets a member of an existing object; `remove`
 * needs the member; array elements by index. Applies all or nothing. Not
 * product code.
 */
import type { JsonPatchOp } from '../../../src/core/plan/node-guard.ts';
import type { NodeLabelState } from '../../../src/core/plan/node-reconcile.ts';
import type { Taint } from '../../../src/core/plan/taints.ts';

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
  return path
    .split('/')
    .slice(1)
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** One operation on an element of an array, by index (`-` appends): a test or remove past the end fails as the API server's does. */
function applyToArray(list: unknown[], key: string, op: JsonPatchOp): void {
  const index = key === '-' ? list.length : /^(0|[1-9]\d*)$/.test(key) ? Number(key) : Number.NaN;
  if (Number.isNaN(index)) throw new PatchRefused(op.op === 'test' ? 'test' : 'apply', `not an array index: ${key}`);
  if (op.op === 'add') {
    if (index > list.length) throw new PatchRefused('apply', `add past the end: ${key}`);
    list.splice(index, 0, structuredClone(op.value));
  } else if (index >= list.length) {
    throw new PatchRefused(op.op === 'test' ? 'test' : 'apply', `unable to access invalid index: ${key}`);
  } else if (op.op === 'test') {
    if (!sameJson(list[index], op.value)) throw new PatchRefused('test', `testing value at index ${key} failed`);
  } else {
    list.splice(index, 1);
  }
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
    if (Array.isArray(parent)) {
      applyToArray(parent, key, op);
      continue;
    }
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
  // The API server validates the node as patched: taints are unique by key and effect ("Duplicate value"),
  // a refusal relabel reads as a stale write.
  const spec = (next as { spec?: { taints?: Taint[] } }).spec;
  const taints = spec?.taints;
  if (Array.isArray(taints) && new Set(taints.map((t) => `${t.key}:${t.effect}`)).size !== taints.length) {
    throw new PatchRefused('test', 'spec.taints: Duplicate value');
  }
  // And stores an empty list as none (omitempty).
  if (spec && Array.isArray(taints) && taints.length === 0) delete spec.taints;
  return next as T;
}

/** A node's JSON as the API server serializes it, as far as relabel's patches reach. */
export type StoredNode = { metadata: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec: { taints?: Taint[] } };

/** `state` as the API server serializes it: empty maps and lists left out. */
export function storedNode(state: NodeLabelState): StoredNode {
  const some = <T extends object>(field: string, value: T | undefined) => (value && Object.keys(value).length > 0 ? { [field]: value } : {});
  return {
    metadata: { ...(state.uid ? { uid: state.uid } : {}), ...some('labels', state.labels), ...some('annotations', state.annotations) },
    spec: some('taints', state.taints),
  };
}
