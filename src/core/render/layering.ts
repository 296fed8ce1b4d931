/**
 * Deckhand's layering: which document is whose parent, replacement pairs,
 * and the `merge`, `replace` and `delete` actions, as Deckhand's engine
 * (`deckhand/engine/layering.py`) decides and applies them. A child's
 * parent is the document of its schema whose labels hold every pair of its
 * parentSelector, in a layer above the child's; when several match, the one
 * in the nearest layer wins, and two in that layer are an error. A child
 * with no parent renders as itself, as in Deckhand. Pure.
 */
import { expandPath, findFirst, parsePath, PathError, updateAt } from './deckhand-path.ts';
import type { Action, DocMeta, RenderProblem } from './document-meta.ts';
import { describeDoc as describe } from './document-meta.ts';
import { isMapping, pyEqual, type Mapping, type Value } from './python-values.ts';

/** Each document's parent (by input index), and the replacement of each replaced document. */
export type Parents = { parent: Map<number, number>; replacedBy: Map<number, number> };

/**
 * Finds every document's parent as Deckhand does, with the errors Deckhand
 * raises: a parent of another schema, a parent not in a higher layer, two
 * parents in the nearest layer, and the replacement rules (a replacement
 * needs a parent of its schema and name; a non-replacement may not share
 * both with its parent, nor with any other non-replacement document).
 */
export function findParents(docs: readonly DocMeta[], layerOrder: readonly string[], problems: RenderProblem[]): Parents {
  const rank = new Map(layerOrder.map((layer, i) => [layer, i]));
  const bySelectorPair = new Map<string, DocMeta[]>();
  for (const doc of docs) {
    for (const [key, value] of Object.entries(doc.parentSelector)) {
      const pair = `${key}\u0000${value}`;
      bySelectorPair.set(pair, [...(bySelectorPair.get(pair) ?? []), doc]);
    }
  }
  const parent = new Map<number, number>();
  const found = new Map<number, number>();
  const reported = new Set<string>();
  for (const layer of layerOrder) {
    for (const doc of docs) {
      if (doc.layer !== layer) continue;
      const candidates = new Set<DocMeta>();
      for (const [key, value] of Object.entries(doc.labels)) for (const child of bySelectorPair.get(`${key}\u0000${value}`) ?? []) candidates.add(child);
      for (const child of [...candidates].sort((a, b) => a.index - b.index)) {
        if (child === doc || !Object.entries(child.parentSelector).every(([k, v]) => doc.labels[k] === v)) continue;
        const once = (message: string) => {
          const key = `${doc.index}\u0000${child.index}`;
          if (!reported.has(key)) problems.push({ document: child.index, path: ['metadata', 'layeringDefinition', 'parentSelector'], message });
          reported.add(key);
        };
        if (child.schema !== doc.schema) {
          once(`the parentSelector selects ${describe(doc)}, whose schema is not this document's: a parent must be of the same schema`);
          continue;
        }
        const childRank = rank.get(child.layer);
        if (childRank === undefined) {
          once('a document with a parentSelector needs a layer of the layering policy');
          continue;
        }
        if ((rank.get(doc.layer) ?? 0) >= childRank) {
          once(
            `the parentSelector selects ${describe(doc)}, which is not in a layer above ${JSON.stringify(child.layer)} (layerOrder ${layerOrder.join(', ')})`,
          );
          continue;
        }
        found.set(child.index, (found.get(child.index) ?? 0) + 1);
        const current = parent.get(child.index);
        if (current === undefined) parent.set(child.index, doc.index);
        else if ((rank.get(doc.layer) ?? 0) > (rank.get(docs[current]?.layer ?? '') ?? 0)) {
          parent.set(child.index, doc.index);
          found.set(child.index, (found.get(child.index) ?? 1) - 1);
        }
      }
    }
  }
  for (const [child, count] of found) {
    if (count > 1) {
      const doc = docs[child] as DocMeta;
      problems.push({
        document: child,
        path: ['metadata', 'layeringDefinition', 'parentSelector'],
        message: `the parentSelector selects ${count} parents where one is needed (${describeCandidates(docs, doc)})`,
      });
    }
  }
  return { parent, replacedBy: replacements(docs, parent, problems) };
}

/**
 * The replacement of each replaced document, with the errors of Deckhand's
 * replacement rules: a replacement needs a parent of its schema and name; a
 * non-replacement may not share both with its parent, nor with any other
 * non-replacement document.
 */
function replacements(docs: readonly DocMeta[], parent: ReadonlyMap<number, number>, problems: RenderProblem[]): Map<number, number> {
  const replacedBy = new Map<number, number>();
  const byIdentity = new Map<string, DocMeta[]>();
  for (const doc of docs) {
    const p = parent.get(doc.index);
    const parentDoc = p === undefined ? undefined : docs[p];
    if (doc.replacement) {
      if (parentDoc === undefined) {
        problems.push({
          document: doc.index,
          path: ['metadata', 'replacement'],
          message: 'a replacement document needs a parent (a parentSelector selecting the document it replaces)',
        });
      } else if (parentDoc.schema !== doc.schema || parentDoc.name !== doc.name) {
        problems.push({
          document: doc.index,
          path: ['metadata', 'replacement'],
          message: `a replacement must have the schema and name of its parent ${describe(parentDoc)}`,
        });
      } else {
        replacedBy.set(parentDoc.index, doc.index);
      }
      continue;
    }
    if (parentDoc !== undefined && parentDoc.schema === doc.schema && parentDoc.name === doc.name) {
      problems.push({
        document: doc.index,
        path: ['metadata', 'name'],
        message: `has the schema and name of its parent ${describe(parentDoc)}: add replacement: true, or give it another name`,
      });
    }
    if (doc.control) continue;
    const id = `${doc.schema}\u0000${doc.name}`;
    byIdentity.set(id, [...(byIdentity.get(id) ?? []), doc]);
  }
  // Every one of them is reported, so the errors do not depend on the order of the documents.
  for (const same of byIdentity.values()) {
    if (same.length < 2) continue;
    for (const doc of same) {
      const others = same.filter((d) => d !== doc).map(describe);
      problems.push({
        document: doc.index,
        path: ['metadata', 'name'],
        message: `another document has this schema and name (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}) and neither replaces the other (replacement: true on the one in the lower layer)`,
      });
    }
  }
  return replacedBy;
}

function describeCandidates(docs: readonly DocMeta[], child: DocMeta): string {
  const names = docs
    .filter((d) => d !== child && d.schema === child.schema && Object.entries(child.parentSelector).every(([k, v]) => d.labels[k] === v))
    .map(describe);
  return names.slice(0, 5).join(', ') + (names.length > 5 ? `, … ${names.length - 5} more` : '');
}

/** A copy of `value` with nested values copied too, shared parts kept shared (Python's `copy.deepcopy`). */
export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

/** Deckhand's `deep_merge`: `from` merged into `into` in place, `from` winning, mappings merged key by key. */
export function deepMerge(into: Mapping, from: Mapping): void {
  for (const [key, value] of Object.entries(from)) {
    const current = into[key];
    if (Object.hasOwn(into, key) && isMapping(current) && isMapping(value)) deepMerge(current, value);
    else into[key] = value;
  }
}

/** Deckhand's `deep_delete`: removes the first value equal to `target` found depth first under `value`. */
function deepDelete(target: Value, value: Value, parent: Value): boolean {
  if (pyEqual(value, target)) {
    if (Array.isArray(parent)) {
      const at = parent.findIndex((v) => pyEqual(v, value));
      parent.splice(at, 1);
      return true;
    }
    if (isMapping(parent)) {
      const key = Object.keys(parent).find((k) => pyEqual(parent[k], value));
      if (key !== undefined) delete parent[key];
      return key !== undefined;
    }
    return false;
  }
  const children = Array.isArray(value) ? value : isMapping(value) ? Object.values(value) : [];
  for (const child of children) if (deepDelete(target, child, value)) return true;
  return false;
}

/** Deckhand's `jsonpath_replace` without a pattern: `value` set at `path`, missing keys created; returns the new data. */
export function replaceAt(data: Value, value: Value, pathText: string): Value {
  const path = parsePath(pathText);
  // A shallow copy, as Deckhand's `copy.copy`: what is below stays shared with the source.
  const copy = Array.isArray(value) ? [...(value as Value[])] : isMapping(value) ? { ...value } : value;
  const top = isMapping(data) ? { ...data } : Array.isArray(data) ? [...(data as Value[])] : data;
  if (findFirst(top, path) === undefined) expandPath(top, pathText.startsWith('$') || pathText.startsWith('.') ? pathText : `$.${pathText}`);
  if (findFirst(top, path) === undefined) throw new PathError(`cannot reach ${pathText} in the data`);
  return updateAt(top, path, copy);
}

/** An action's path below `data`, as Deckhand reads it: a leading `.data` or `$.data` dropped, a leading `.` supplied. */
export function actionPath(path: string): string {
  let p = path;
  if (p.startsWith('.data')) p = p.slice(5);
  else if (p.startsWith('$.data')) p = p.slice(6);
  if (!(p.startsWith('.') || p.startsWith('$.'))) p = `.${p}`;
  return p;
}

/** Why an action cannot apply: Deckhand's MissingDocumentKey and the errors of its paths. */
export class ActionError extends Error {}

/**
 * Applies one action of a child to the data rendered so far (its parent's,
 * then each earlier action's), as Deckhand's `_apply_action`: returns the
 * new data; neither argument is changed.
 */
export function applyAction(action: Action, childData: Value, overall: Value): Value {
  const parentData = deepCopy(overall) ?? {};
  const child = deepCopy(childData) ?? {};
  const pathText = actionPath(action.path);
  const path = parsePath(pathText);
  if (action.method === 'delete') {
    if (pathText === '.') return {};
    const found = findFirst(parentData, path);
    if (found === undefined || found.value === null) throw new ActionError(`delete ${action.path}: the parent has nothing at that path`);
    deepDelete(found.value, parentData, null);
    return parentData;
  }
  const fromChild = findFirst(child, path);
  if (fromChild === undefined || fromChild.value === null) throw new ActionError(`${action.method} ${action.path}: this document has nothing at that path`);
  if (action.method === 'replace') return replaceAt(parentData, fromChild.value, pathText);
  const fromParent = findFirst(parentData, path)?.value;
  if (isMapping(fromParent) && isMapping(fromChild.value)) {
    deepMerge(fromParent, fromChild.value);
    return replaceAt(parentData, fromParent, pathText);
  }
  return replaceAt(parentData, fromChild.value, pathText);
}
