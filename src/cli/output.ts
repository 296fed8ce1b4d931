/**
 * How commands write: readable text by default, stable JSON with `-o json`;
 * aligned tables; errors with their failure type and, for invalid documents,
 * every error on its own `file:line:col document path: message` line.
 */
import { Option } from 'commander';
import { formatError, unlistedLine, type SiteError } from '../core/plan/site-error.ts';
import { RelabelError } from '../facade/relabel-error.ts';
import { isStoreError } from '../store/store-error.ts';
import { variableFromEnv } from '../settings/setting.ts';
import { VARIABLES } from '../settings/table.ts';
import { USAGE_ERROR } from './exit-codes.ts';

/** Output formats. */
export const OutputFormat = { text: 'text', json: 'json' } as const;
export type OutputFormat = (typeof OutputFormat)[keyof typeof OutputFormat];

/** The `-o, --output` option every command takes. */
export function outputOption(): Option {
  return new Option('-o, --output <format>', 'output: text for people, json for scripts').choices(Object.values(OutputFormat)).default(OutputFormat.text);
}

/** Writes a line (or lines) to stdout. */
export function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes a line to stderr. */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Writes `value` as pretty JSON to stdout (Dates as ISO strings). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Renders rows as columns separated by two spaces; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Renders `[label, value]` pairs as an aligned two-column block, skipping absent values. */
export function fields(pairs: readonly (readonly [string, string | number | undefined])[]): string {
  const present = pairs.filter((p): p is readonly [string, string | number] => p[1] !== undefined);
  const width = Math.max(...present.map(([k]) => k.length));
  return present.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** An error as the CLI reports it: failure type, message, details. */
export interface ReportedError {
  type: string;
  message: string;
  details?: unknown;
  /** How many problems there were in all, when `details` lists only some. */
  problemCount?: number;
}

function isSiteErrorList(details: unknown): details is SiteError[] {
  return Array.isArray(details) && details.every((d) => typeof d === 'object' && d !== null && 'source' in d && 'line' in d && 'message' in d);
}

/** The failure type, message and details of anything thrown; `undefined` type when unknown. */
export function describeError(err: unknown): ReportedError & { known: boolean } {
  if (err instanceof RelabelError) {
    return {
      type: err.type,
      message: err.message,
      details: err.details,
      ...(err.problemCount !== undefined ? { problemCount: err.problemCount } : {}),
      known: true,
    };
  }
  if (isStoreError(err)) return { type: err.code, message: err.message, known: true };
  return { type: 'Error', message: err instanceof Error ? err.message : String(err), known: false };
}

/**
 * Reports an error: as `{"error": {type, message, details?}}` on stdout in
 * JSON mode (so scripts read one document whatever happened), else on stderr.
 * Document validation errors are listed one per line with `formatError`.
 */
export function reportError(err: unknown, format: OutputFormat): void {
  const { type, message, details, problemCount, known } = describeError(err);
  if (format === OutputFormat.json) {
    printJson({ error: { type, message, ...(details !== undefined ? { details } : {}), ...(problemCount !== undefined ? { problemCount } : {}) } });
    return;
  }
  if (isSiteErrorList(details)) {
    // The facade's message already embeds the list; print its headline and
    // render the structured details ourselves so the format is the core's.
    note(`relabel: ${type}: ${message.split('\n')[0]}`);
    for (const d of details) note(formatError(d));
    if (problemCount !== undefined && problemCount > details.length) note(unlistedLine(problemCount - details.length));
    return;
  }
  if (!known) {
    note(`relabel: unexpected error: ${message}`);
    if (variableFromEnv(VARIABLES.debug) && err instanceof Error && err.stack) note(err.stack);
    return;
  }
  note(type === USAGE_ERROR ? `relabel: ${message}` : `relabel: ${type}: ${message}`);
}
