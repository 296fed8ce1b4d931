/**
 * Renders a site's documents as Deckhand renders them, before anything
 * else reads them: the `deckhand/LayeringPolicy/v1` orders the layers,
 * children layer onto their parents, substitutions copy values between
 * documents, replacements stand in for their parents; abstract and
 * replaced documents are left out. The order follows Deckhand's: a
 * document after its parent and after the sources of its substitutions.
 *
 * Where relabel parts from Deckhand it says so: a substitution whose
 * source document or value is absent or encrypted (secrets a document
 * repository does not hold) is made as Deckhand makes it when told not to
 * fail on missing sources, unless it writes into a field relabel reads,
 * where it is an error. A site with no layering policy and nothing layered
 * renders to itself. Pure: no I/O.
 */
import type { PathSegment } from '../plan/site-error.ts';
import { findParents, applyAction, ActionError, type Parents } from './layering.ts';
import { parsePath, PathError } from './deckhand-path.ts';
import { describeDoc as describe, isLayered, LAYERING_POLICY_SCHEMA, readMeta, type DocMeta, type RenderProblem, type Substitution } from './document-meta.ts';
import { isMapping, type Mapping, type Value } from './python-values.ts';
import { cutBySourcePattern, sourceValue, substituteOne, SubstitutionError } from './substitution.ts';

export type { RenderProblem } from './document-meta.ts';

/** One document of the rendered site. */
export type RenderedDocument = {
  /** The input it renders. */
  document: number;
  /** The whole document: its own schema and metadata, the rendered data. */
  value: Mapping;
  /** The inputs it was layered from, nearest first, itself first (one entry when not layered). */
  chain: number[];
};

/** A rendered site, or every problem found rendering it (then no documents). */
export type RenderResult = {
  /** Whether anything was layered, substituted, replaced or left out (otherwise `documents` are the inputs). */
  layered: boolean;
  documents: RenderedDocument[];
  problems: RenderProblem[];
};

/** Which paths of a schema's documents relabel reads (a substitution there may not lack its source). */
export type ReadFields = (schema: string) => readonly (readonly PathSegment[])[];

/**
 * What rendering needs to know from the caller: the fields relabel reads,
 * and, to answer documents as Deckhand's API does, how to hide the paths of
 * a substitution from an encrypted document (Deckhand answers the SHA-256
 * of each path's JSON text; the core holds no hash).
 */
export type RenderOptions = { readFields: ReadFields; redact?: (path: string) => string };

// A Barbican reference, which Deckhand exchanges for the secret; relabel holds no secret store.
const BARBICAN_REF = /^https?:\/\/\S+\/secrets\/[0-9a-fA-F-]{32,36}$/;

/**
 * Whether writing at `dest` (a data path) can reach a field of `reads`:
 * one path a prefix of the other. A path that does not parse, or uses `*`,
 * may reach any.
 */
function reaches(dest: string, reads: readonly (readonly PathSegment[])[]): boolean {
  let steps;
  try {
    steps = parsePath(dest).steps;
  } catch (err) {
    if (err instanceof PathError) return reads.length > 0;
    throw err;
  }
  if (steps.some((step) => 'field' in step && step.field === '*')) return reads.length > 0;
  const full: PathSegment[] = ['data', ...steps.map((step) => ('field' in step ? step.field : step.index))];
  return reads.some((read) => read.every((s, i) => i >= full.length || full[i] === s) || full.every((s, i) => i >= read.length || read[i] === s));
}

type State = {
  docs: DocMeta[];
  parents: Parents;
  /** Current data of each input (rendered once its turn has come). */
  data: Map<number, Value>;
  /** The source each (schema, name) substitutes from: a concrete document, or its replacement. */
  sources: Map<string, DocMeta>;
  failed: Set<number>;
  /** The documents encrypted: by their own storagePolicy, or once they took a value from one that is (as Deckhand marks them). */
  encrypted: Set<number>;
  /** Of each document, the substitutions it made from an encrypted document. */
  secretSubstitutions: Map<number, Set<number>>;
  problems: RenderProblem[];
  options: RenderOptions;
};

function substitute(state: State, doc: DocMeta, sub: Substitution, i: number): void {
  const here = ['metadata', 'substitutions', i];
  const reads = state.options.readFields(doc.schema);
  const lenient = (why: string) => {
    const reached = sub.dest.find((d) => reaches(d.path, reads));
    if (reached === undefined) return true;
    state.problems.push({ document: doc.index, path: [...here, 'src'], message: `${why}, and it would write ${reached.path}, which relabel reads` });
    state.failed.add(doc.index);
    return false;
  };
  const source = state.sources.get(`${sub.src.schema}\u0000${sub.src.name}`);
  if (source === undefined) {
    lenient(`no concrete document [${sub.src.schema}] ${JSON.stringify(sub.src.name)} to substitute from`);
    return;
  }
  if (state.failed.has(source.index)) {
    state.failed.add(doc.index);
    return;
  }
  const secret = state.encrypted.has(source.index);
  if (secret) state.secretSubstitutions.set(doc.index, (state.secretSubstitutions.get(doc.index) ?? new Set()).add(i));
  const sourceData = state.data.get(source.index);
  let value: Value;
  let missing = false;
  try {
    const found = secret && typeof sourceData === 'string' && BARBICAN_REF.test(sourceData) ? undefined : sourceValue(sourceData, sub.src.path);
    value = found?.value ?? null;
    missing = found === undefined || found.value === null;
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    state.problems.push({ document: doc.index, path: [...here, 'src', 'path'], message: err.message });
    state.failed.add(doc.index);
    return;
  }
  if (missing && !lenient(`${describe(source)} has no value at ${sub.src.path}${secret ? ' (it is encrypted)' : ''}`)) return;
  for (const [j, dest] of sub.dest.entries()) {
    try {
      const cut = sub.src.pattern === undefined ? value : cutBySourcePattern(value, sub.src.pattern, sub.src.matchGroup);
      state.data.set(doc.index, substituteOne(state.data.get(doc.index), cut, dest, sub.src.deepcopy));
    } catch (err) {
      if (!(err instanceof SubstitutionError || err instanceof PathError)) throw err;
      // After a missing source Deckhand, told not to fail, only warns.
      if (missing) continue;
      state.problems.push({
        document: doc.index,
        path: sub.dest.length > 1 ? [...here, 'dest', j] : [...here, 'dest'],
        message: `substituting from ${describe(source)}: ${err.message}`,
      });
      state.failed.add(doc.index);
    }
  }
}

function renderOne(state: State, doc: DocMeta): void {
  const { parents, data } = state;
  const parentIndex = parents.parent.get(doc.index);
  if (parentIndex !== undefined && doc.actions.length > 0) {
    if (state.failed.has(parentIndex)) {
      state.failed.add(doc.index);
      return;
    }
    let rendered = data.get(parentIndex);
    for (const action of doc.actions) {
      try {
        rendered = applyAction(action, doc.raw['data'], rendered);
      } catch (err) {
        if (!(err instanceof ActionError || err instanceof PathError)) throw err;
        state.problems.push({
          document: doc.index,
          path: action.at,
          message: `${err.message} (layering onto ${describe(state.docs[parentIndex] as DocMeta)})`,
        });
        state.failed.add(doc.index);
        return;
      }
    }
    data.set(doc.index, rendered);
  }
  doc.substitutions.forEach((sub, i) => substitute(state, doc, sub, i));
  // Deckhand marks a document holding a substituted secret as encrypted, for the documents substituting from it in turn.
  if (state.secretSubstitutions.has(doc.index)) state.encrypted.add(doc.index);
  if (doc.replacement && parentIndex !== undefined) data.set(parentIndex, data.get(doc.index));
}

// Parents before children, sources before the documents that substitute from them; a cycle is an error.
function renderOrder(state: State): number[] | undefined {
  const { docs, parents, sources } = state;
  const dependsOn = (doc: DocMeta): number[] => {
    const out: number[] = [];
    const p = parents.parent.get(doc.index);
    if (p !== undefined && Object.keys(doc.parentSelector).length > 0) {
      const replacement = parents.replacedBy.get(p);
      out.push(replacement !== undefined && replacement !== doc.index ? replacement : p);
    }
    for (const sub of doc.substitutions) {
      const source = sources.get(`${sub.src.schema}\u0000${sub.src.name}`);
      if (source !== undefined) out.push(source.index);
    }
    return out;
  };
  const order: number[] = [];
  const mark = new Map<number, 'active' | 'done'>();
  for (const start of docs) {
    if (mark.has(start.index)) continue;
    const stack: { index: number; next: number[] }[] = [{ index: start.index, next: dependsOn(start) }];
    mark.set(start.index, 'active');
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { index: number; next: number[] };
      const next = top.next.shift();
      if (next === undefined) {
        stack.pop();
        mark.set(top.index, 'done');
        order.push(top.index);
      } else if (mark.get(next) === 'active') {
        const cycle = [...stack.slice(stack.findIndex((s) => s.index === next)).map((s) => s.index), next];
        state.problems.push({
          document: next,
          path: ['metadata'],
          message: `layering and substitution form a cycle: ${cycle.map((i) => describe(docs[i] as DocMeta)).join(' → ')}`,
        });
        return undefined;
      } else if (!mark.has(next)) {
        mark.set(next, 'active');
        stack.push({ index: next, next: dependsOn(docs[next] as DocMeta) });
      }
    }
  }
  return order;
}

/** `substitutions` as written, the src and dest paths of those at `secrets` replaced by `redact(path)`. */
function redacted(substitutions: Value, secrets: ReadonlySet<number>, redact: (path: string) => string): Value {
  if (!Array.isArray(substitutions)) return substitutions;
  const hide = (entry: Value): Value => (isMapping(entry) && typeof entry['path'] === 'string' ? { ...entry, path: redact(entry['path']) } : entry);
  return substitutions.map((sub: Value, i) => {
    if (!secrets.has(i) || !isMapping(sub)) return sub;
    const dest = sub['dest'];
    return { ...sub, src: hide(sub['src']), dest: Array.isArray(dest) ? dest.map(hide) : hide(dest) };
  });
}

function layerOrderOf(docs: readonly DocMeta[], problems: RenderProblem[]): string[] | undefined {
  const policies = docs.filter((d) => d.schema.startsWith(LAYERING_POLICY_SCHEMA));
  for (const extra of policies.slice(1)) {
    problems.push({
      document: extra.index,
      path: ['schema'],
      message: `a second layering policy (the first is ${describe(policies[0] as DocMeta)}): a site has one`,
    });
  }
  const policy = policies[0];
  if (policy === undefined) return undefined;
  const order = isMapping(policy.raw['data']) ? policy.raw['data']['layerOrder'] : undefined;
  if (!Array.isArray(order) || !order.every((l) => typeof l === 'string')) {
    problems.push({ document: policy.index, path: ['data', 'layerOrder'], message: 'layerOrder must be a list of layer names' });
    return [];
  }
  return order;
}

/**
 * Renders `inputs` (whole documents as read, each a mapping) as Deckhand
 * does. Every problem found is returned with the input and field it is at;
 * with any, no documents are.
 */
export function renderDocuments(inputs: readonly Mapping[], options: RenderOptions): RenderResult {
  const problems: RenderProblem[] = [];
  const docs = inputs.map((value, index) => readMeta(value, index, problems));
  const policyOrder = layerOrderOf(docs, problems);
  const anyLayered = docs.some(isLayered);
  const unchanged = (): RenderResult => ({
    layered: false,
    documents: docs.map((d) => ({ document: d.index, value: d.raw, chain: [d.index] })),
    problems,
  });
  if (policyOrder === undefined) {
    // Deckhand needs a layering policy for any site; relabel, only to find parents.
    const child = docs.find((d) => Object.keys(d.parentSelector).length > 0);
    if (child !== undefined)
      problems.push({
        document: child.index,
        path: ['metadata', 'layeringDefinition', 'parentSelector'],
        message: 'has a parentSelector, but the site has no deckhand/LayeringPolicy/v1 to order its layers',
      });
  }
  for (const doc of docs) {
    if (policyOrder !== undefined && doc.layer !== '' && !policyOrder.includes(doc.layer)) {
      problems.push({
        document: doc.index,
        path: ['metadata', 'layeringDefinition', 'layer'],
        message: `layer ${JSON.stringify(doc.layer)} is not in the layering policy's layerOrder (${policyOrder.join(', ')})`,
      });
    }
  }
  if (problems.length > 0) return { ...unchanged(), documents: [] };
  if (!anyLayered) return unchanged();
  const layerOrder = (policyOrder ?? []).filter((layer) => docs.some((d) => d.layer === layer));
  const parents = findParents(docs, layerOrder, problems);
  const sources = new Map<string, DocMeta>();
  for (const doc of docs) {
    if (doc.abstract) continue;
    let source = doc;
    const replacement = parents.replacedBy.get(doc.index);
    if (replacement !== undefined) {
      if (doc.replacement)
        problems.push({
          document: doc.index,
          path: ['metadata', 'replacement'],
          message: 'a replacement document is itself replaced: one level of replacement only',
        });
      source = docs[replacement] as DocMeta;
    }
    sources.set(`${source.schema}\u0000${source.name}`, source);
  }
  if (problems.length > 0) return { ...unchanged(), documents: [] };
  const state: State = {
    docs,
    parents,
    data: new Map(docs.map((d) => [d.index, d.raw['data']])),
    sources,
    failed: new Set(),
    encrypted: new Set(docs.filter((d) => d.encrypted).map((d) => d.index)),
    secretSubstitutions: new Map(),
    problems,
    options,
  };
  const order = renderOrder(state);
  if (order === undefined) return { ...unchanged(), documents: [] };
  for (const index of order) {
    const doc = docs[index] as DocMeta;
    if (!doc.control) renderOne(state, doc);
  }
  if (problems.length > 0) return { ...unchanged(), documents: [] };
  const chainOf = (index: number): number[] => {
    const chain = [index];
    for (let p = parents.parent.get(index); p !== undefined && !chain.includes(p); p = parents.parent.get(p)) chain.push(p);
    return chain;
  };
  const documents = docs
    .filter((d) => !d.abstract && !parents.replacedBy.has(d.index))
    .map((d): RenderedDocument => {
      const rendered = state.data.get(d.index);
      const value: Mapping = rendered === d.raw['data'] ? d.raw : { ...d.raw, data: rendered };
      const secrets = state.secretSubstitutions.get(d.index);
      const metadata = value['metadata'];
      if (secrets === undefined || !isMapping(metadata)) return { document: d.index, value, chain: chainOf(d.index) };
      const hidden: Mapping = { ...metadata, ...(d.encrypted ? {} : { storagePolicy: 'encrypted' }) };
      if (options.redact !== undefined) hidden['substitutions'] = redacted(metadata['substitutions'], secrets, options.redact);
      return { document: d.index, value: { ...value, metadata: hidden }, chain: chainOf(d.index) };
    });
  return { layered: true, documents, problems };
}
