/**
 * Validation errors with their location: file, document, JSON path, line and
 * column. Every problem found in a site is reported as one of these.
 */
import { clip, ECHO_MAX_CHARS, quote } from './text.ts';

/** One step of a path into a document: a mapping key or a sequence index. */
export type PathSegment = string | number;

/**
 * The document an error belongs to: its 1-based position in its file, and
 * its schema and `metadata.name` when they could be read.
 */
export type DocumentRef = {
  index: number;
  schema?: string;
  name?: string;
};

/**
 * A validation error. `path` is a JSON path into the document such as
 * `data.metadata.owner_data["ceph-osd"]` (empty for the document as a
 * whole); `line` and `column` are 1-based and point at the offending key or
 * value in `source`.
 */
export type SiteError = {
  source: string;
  document: DocumentRef;
  path: string;
  line: number;
  column: number;
  message: string;
};

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `value` cut after {@link ECHO_MAX_CHARS} characters with `…`, as {@link quote} cuts a string. */
function cut(value: string): string {
  return clip(value, ECHO_MAX_CHARS + 1);
}

/**
 * Renders a path as JSON path text: `data.metadata.tags[2]`; keys that are
 * not plain identifiers are bracketed and quoted:
 * `owner_data["node-role.kubernetes.io/worker"]`.
 */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (identifier.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${quote(segment)}]`;
  }
  return text;
}

/** Renders the document part of an error: `drydock/BaremetalNode/v1 "n1"`, or `document 3`. */
export function formatDocumentRef(document: DocumentRef): string {
  if (document.schema !== undefined && document.name !== undefined) {
    return `${cut(document.schema)} ${quote(document.name)}`;
  }
  if (document.schema !== undefined) return `${cut(document.schema)} (document ${document.index})`;
  return `document ${document.index}`;
}

/**
 * Renders an error on one line for people and editors:
 * `file:line:col document path: message` (the path is omitted when empty).
 */
export function formatError(error: SiteError): string {
  const path = error.path === '' ? '' : ` ${error.path}`;
  return `${error.source}:${error.line}:${error.column} ${formatDocumentRef(error.document)}${path}: ${error.message}`;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Total order on errors (file, line, column, path, message), used so error
 * lists do not depend on the order in which files or checks ran.
 */
export function compareErrors(a: SiteError, b: SiteError): number {
  return compareText(a.source, b.source) || a.line - b.line || a.column - b.column || compareText(a.path, b.path) || compareText(a.message, b.message);
}

/** Sorts errors with {@link compareErrors} and drops exact duplicates. */
export function sortErrors(errors: readonly SiteError[]): SiteError[] {
  const sorted = [...errors].sort(compareErrors);
  return sorted.filter((error, i) => {
    const previous = sorted[i - 1];
    return previous === undefined || compareErrors(previous, error) !== 0;
  });
}

/** Most errors any one answer lists (a message, a Status body, the CLI's text); the count is always of all. */
export const MAX_LISTED_ERRORS = 100;

/** The line that stands for the `unlisted` errors a list leaves out. */
export function unlistedLine(unlisted: number): string {
  return `… and ${unlisted} more error(s), not listed (at most ${MAX_LISTED_ERRORS} are)`;
}

/** Errors rendered one per line, at most {@link MAX_LISTED_ERRORS}, then a line counting the rest. */
export function listedErrors(errors: readonly SiteError[]): string[] {
  const lines = errors.slice(0, MAX_LISTED_ERRORS).map(formatError);
  if (errors.length > MAX_LISTED_ERRORS) lines.push(unlistedLine(errors.length - MAX_LISTED_ERRORS));
  return lines;
}

/**
 * The one message of documents that do not validate: what was checked, how
 * many errors, then one line per error, at most {@link MAX_LISTED_ERRORS}.
 */
export function documentErrorsMessage(what: string, errors: readonly SiteError[]): string {
  return `${what}: ${errors.length} document error(s):\n${listedErrors(errors).join('\n')}`;
}
