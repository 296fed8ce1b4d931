/**
 * Multi-document YAML loading with positions kept, so every later error can
 * point at a file, line and column. Pure: the caller reads the files.
 */
import { Composer, isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, Parser, visit } from 'yaml';
import type { Document, Node as YamlNode, ParsedNode } from 'yaml';
import type { DocumentRef, PathSegment, SiteError } from '../plan/site-error.ts';
import { formatPath } from '../plan/site-error.ts';
import { PYYAML_OPTIONS } from './pyyaml-schema.ts';
import { RELABEL_SCHEMA_NAMESPACE, SchemaName } from './schema.ts';

/** One input file: its name (as shown in errors) and its text. */
export type SiteSource = {
  source: string;
  text: string;
};

/** Whether an error points at a mapping key or at its value. */
export type PositionTarget = 'key' | 'value';

/**
 * One YAML document read from a source. `value` is its plain JavaScript
 * reading; `broken` is true when the YAML itself had errors, in which case
 * `value` is only a best-effort reading and is not validated further.
 */
export type LoadedDocument = {
  source: string;
  index: number;
  value: unknown;
  broken: boolean;
  /**
   * The documents a rendered document was layered from (Deckhand's parents), nearest
   * first, itself first, each as written; absent for a document not layered onto a parent.
   */
  layeredFrom?: LayeredFrom[];
  /** 1-based position of the node at `path`, or of its nearest existing ancestor. */
  position(path: readonly PathSegment[], target: PositionTarget): { line: number; column: number };
};

/** A document another was layered from: its name, layer and whole value as written. */
export type LayeredFrom = { name: string; layer: string; value: unknown };

/** Documents and YAML-level errors of a set of sources. */
export type LoadResult = {
  documents: LoadedDocument[];
  errors: SiteError[];
};

type Located = { node: YamlNode | null; key: YamlNode | null };

/**
 * Most aliases (`*name`) a document relabel reads may use. Each alias costs
 * the YAML reader a walk of the whole document, and an alias of a large
 * anchor multiplies what later checks see (every label value is checked), so
 * a document with more is refused before it is read.
 */
export const MAX_ALIASES_PER_DOCUMENT = 100;

/**
 * Most aliases a document of another schema may use: relabel only renders
 * it (an alias is shared, never copied), so the bound is the reader's cost
 * alone. Real sites stay well within it (Airship's software versions
 * document uses some 550).
 */
export const MAX_ALIASES_PER_OTHER_DOCUMENT = 2000;

/** Each mapping's pairs by key text, built on first use, so locating an error is not a scan of the mapping. */
const pairIndexes = new WeakMap<object, Map<string, { key: unknown; value: unknown }>>();

function pairOf(map: { items: { key: unknown; value: unknown }[] }, key: string): { key: unknown; value: unknown } | undefined {
  let index = pairIndexes.get(map);
  if (index === undefined) {
    index = new Map();
    for (const item of map.items) {
      const text = keyText(item.key);
      // The first pair of a key wins, as a linear search would find it.
      if (text !== undefined && !index.has(text)) index.set(text, item);
    }
    pairIndexes.set(map, index);
  }
  return index.get(key);
}

function resolveAlias(document: Document, node: unknown): unknown {
  return isAlias(node) ? (node.resolve(document) ?? null) : node;
}

function keyText(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : undefined;
}

// Walks the syntax tree along `path`, stopping at the deepest node found.
function locate(document: Document, path: readonly PathSegment[]): Located {
  let located: Located = { node: document.contents ?? null, key: null };
  for (const segment of path) {
    const current = resolveAlias(document, located.node);
    if (isMap(current)) {
      const pair = pairOf(current, String(segment));
      if (pair === undefined) return located;
      const key = isScalar(pair.key) ? pair.key : null;
      const value = (pair.value as YamlNode | null) ?? null;
      located = { node: value ?? key, key };
    } else if (isSeq(current) && typeof segment === 'number') {
      const item = current.items[segment] as YamlNode | undefined;
      if (item === undefined) return located;
      located = { node: item, key: null };
    } else {
      return located;
    }
  }
  return located;
}

function isEmptyDocument(document: Document.Parsed): boolean {
  const contents = document.contents;
  return contents === null || (isScalar(contents) && contents.value === null && contents.tag === undefined);
}

/**
 * Reads the schema and `metadata.name` of a document value when present, to
 * name the document in errors.
 */
export function documentRef(index: number, value: unknown): DocumentRef {
  const ref: DocumentRef = { index };
  if (typeof value !== 'object' || value === null) return ref;
  const record = value as Record<string, unknown>;
  if (typeof record['schema'] === 'string') ref.schema = record['schema'];
  const metadata = record['metadata'];
  if (typeof metadata === 'object' && metadata !== null) {
    const name = (metadata as Record<string, unknown>)['name'];
    if (typeof name === 'string') ref.name = name;
  }
  return ref;
}

/** Whether relabel interprets a document of this value's schema (its own namespace, or a Drydock schema it reads). */
function readsDocument(value: unknown): boolean {
  const schema = documentRef(0, value).schema;
  return schema === undefined || schema.startsWith(RELABEL_SCHEMA_NAMESPACE) || (Object.values(SchemaName) as string[]).includes(schema);
}

/** Builds a located error about the node at `path` of `document`. */
export function documentError(document: LoadedDocument, path: readonly PathSegment[], message: string, target: PositionTarget = 'value'): SiteError {
  const { line, column } = document.position(path, target);
  return {
    source: document.source,
    document: documentRef(document.index, document.value),
    path: formatPath(path),
    line,
    column,
    message,
  };
}

const quoteHint = "quote values that start with '!', e.g. '!ceph-osd'";

function yamlMessage(code: string, message: string): string {
  return code === 'TAG_RESOLVE_FAILED' ? `${message} (${quoteHint})` : message;
}

// Duplicate keys are found below in one pass per mapping; the parser's own check compares each key
// with every earlier one, which a mapping of 100,000 keys turns into minutes.
// Scalars are read as PyYAML reads them, since Airship's tools all do (`pyyaml-schema.ts`).
const YAML_OPTIONS = { prettyErrors: false, uniqueKeys: false, ...PYYAML_OPTIONS } as const;

/** 1-based line and column of an offset of a source. */
type At = (offset: number) => { line: number; column: number };

/** The one document of a source parsed again for positions, kept until another is asked for. */
type Reparsed = { start: number; tree: Document | undefined };

/**
 * The position finder of the document at `range` of `text`, which keeps
 * only the text and the range: a position parses the document again from
 * the start of its first line (so its indentation reads as it did) and moves
 * offsets back into `text`. The last document parsed again is kept in
 * `reparsed`, shared by the source's documents: a document's errors come one
 * after another, so it is parsed again once, and no more than one tree is
 * held whatever the number of documents with errors.
 */
function positionOf(text: string, range: readonly [number, number, number], at: At, reparsed: Reparsed): LoadedDocument['position'] {
  return (path, target) => {
    const lineStart = text.lastIndexOf('\n', range[0] - 1) + 1;
    if (reparsed.start !== lineStart || reparsed.tree === undefined) {
      reparsed.tree = parseDocument(text.slice(lineStart, range[2]), YAML_OPTIONS);
      reparsed.start = lineStart;
    }
    const found = locate(reparsed.tree, path);
    const node = target === 'key' && found.key !== null ? found.key : (found.node ?? found.key);
    const offset = node?.range?.[0];
    return at(offset === undefined ? range[0] : lineStart + offset);
  };
}

function loadOne(source: SiteSource, documents: LoadedDocument[], errors: SiteError[]): void {
  const lineCounter = new LineCounter();
  const at: At = (offset) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  // One document at a time: each syntax tree is dropped once its value is read (the trees of a
  // 50,000-node file weigh some 600 MiB, their values a sixth of that). An error's position parses
  // its document again.
  const parsed = new Composer(YAML_OPTIONS).compose(new Parser(lineCounter.addNewLine).parse(source.text));
  const reparsed: Reparsed = { start: -1, tree: undefined };
  let i = 0;
  for (const yamlDocument of parsed) {
    const index = ++i;
    if (isEmptyDocument(yamlDocument) && yamlDocument.errors.length === 0) continue;
    const problems: { offset: number; message: string }[] = [];
    for (const problem of [...yamlDocument.errors, ...yamlDocument.warnings]) {
      problems.push({ offset: problem.pos[0], message: yamlMessage(problem.code, problem.message) });
    }
    // A bare `!` is YAML's non-specific tag: `rack: !` silently reads as an
    // empty string, never as Drydock's unset marker. Report it instead.
    const bareTag = (node: YamlNode) => {
      if (node.tag !== '!') return;
      const start = (node as ParsedNode).range[0];
      const bang = source.text.lastIndexOf('!', start);
      problems.push({ offset: bang >= 0 ? bang : start, message: `a bare '!' is a YAML tag, not a value (${quoteHint}, or '!' to unset)` });
    };
    let aliases = 0;
    const schema = yamlDocument.get('schema');
    const maxAliases = typeof schema === 'string' && !readsDocument({ schema }) ? MAX_ALIASES_PER_OTHER_DOCUMENT : MAX_ALIASES_PER_DOCUMENT;
    const duplicateKeys: number[] = [];
    visit(yamlDocument, {
      Map(_, map) {
        bareTag(map);
        const seen = new Set<unknown>();
        for (const { key } of map.items) {
          if (!isScalar(key)) continue;
          if (seen.has(key.value)) duplicateKeys.push(key.range?.[0] ?? yamlDocument.range[0]);
          seen.add(key.value);
        }
      },
      Seq: (_, seq) => bareTag(seq),
      Scalar: (_, scalar) => bareTag(scalar),
      Alias(_, alias) {
        aliases++;
        if (aliases === maxAliases + 1) {
          problems.push({
            offset: alias.range?.[0] ?? yamlDocument.range[0],
            message: `too many YAML aliases: a document ${maxAliases === MAX_ALIASES_PER_DOCUMENT ? 'relabel reads ' : ''}may use at most ${maxAliases} (this one is refused unread)`,
          });
        }
      },
    });
    let value: unknown = null;
    if (aliases <= maxAliases) {
      try {
        // The reader's own bound on nested expansion (aliases of collections holding aliases).
        value = yamlDocument.toJS({ maxAliasCount: 10 * maxAliases });
      } catch (err) {
        // An alias before its anchor, or aliases of aliases expanding too far.
        if (yamlDocument.errors.length === 0) problems.push({ offset: yamlDocument.range[0], message: `cannot read the document: ${(err as Error).message}` });
      }
    }
    // A key given twice is refused in the documents relabel reads (which of the two is meant decides
    // what is removed); elsewhere the last is kept, as PyYAML keeps it for Deckhand and Armada.
    if (duplicateKeys.length > 0 && (value === null || readsDocument(value))) {
      for (const offset of duplicateKeys) problems.push({ offset, message: 'Map keys must be unique' });
    }
    const broken = problems.length > 0;
    const document: LoadedDocument = {
      source: source.source,
      index,
      value,
      broken,
      position: positionOf(source.text, yamlDocument.range, at, reparsed),
    };
    for (const problem of problems) {
      errors.push({
        source: source.source,
        document: documentRef(index, value),
        path: '',
        ...at(problem.offset),
        message: problem.message,
      });
    }
    if (!broken && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      errors.push(documentError(document, [], 'a document must be a mapping with schema, metadata and data'));
      continue;
    }
    documents.push(document);
  }
}

/**
 * Parses every source as multi-document YAML (1.2 core schema, unique keys).
 * Empty documents (a trailing `---`) are skipped. YAML syntax errors and
 * warnings (such as unresolved `!tags`) are collected for every file rather
 * than stopping at the first; a document with one is returned `broken`.
 */
export function loadSources(sources: readonly SiteSource[]): LoadResult {
  const documents: LoadedDocument[] = [];
  const errors: SiteError[] = [];
  for (const source of sources) loadOne(source, documents, errors);
  return { documents, errors };
}
