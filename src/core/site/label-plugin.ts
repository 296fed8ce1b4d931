/**
 * Label plugins, `relabel/LabelPlugin/v1`: one document per plugin, naming
 * where more node labels come from (a JSON file, or an executable printing
 * the same JSON) and the label key namespaces it may write. The worker polls
 * them (see `src/activities/plugins.ts`); this module is the pure part: the
 * schema, the checks made when documents are validated, and namespace globs.
 */
import { z } from 'zod';
import { labelKeyErrors } from '../plan/label-syntax.ts';
import { documentEnvelope, SchemaName } from './schema.ts';
import { quote } from '../plan/text.ts';
import { type PathSegment } from '../plan/site-error.ts';

/** Where a plugin's labels come from. */
export const PluginSource = { json: 'json', exec: 'exec' } as const;
/** One of the {@link PluginSource} strings. */
export type PluginSource = (typeof PluginSource)[keyof typeof PluginSource];

/**
 * File name endings an `exec` plugin may have (an empty string: no
 * extension). It is run directly, by its shebang for a script, never
 * through a shell.
 */
export const EXEC_EXTENSIONS = ['', '.sh', '.bash', '.py', '.js', '.mjs'] as const;

/** Time an `exec` plugin may run when its document does not say, in seconds. */
export const DEFAULT_PLUGIN_TIMEOUT_SECONDS = 30;
/** Longest time an `exec` plugin's document may allow, in seconds. */
export const MAX_PLUGIN_TIMEOUT_SECONDS = 300;

/** Largest output of a plugin (the JSON file's size, or what the executable prints) when its document does not say, in bytes. */
export const DEFAULT_PLUGIN_OUTPUT_BYTES = 16 * 1024 * 1024;
/** Largest output a plugin's document may allow, in bytes. */
export const MAX_PLUGIN_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Most arguments of an `exec` plugin. */
export const MAX_PLUGIN_ARGS = 32;
/** Longest argument of an `exec` plugin. */
export const MAX_PLUGIN_ARG_LENGTH = 1024;

/** Most namespaces one plugin declares. */
export const MAX_PLUGIN_NAMESPACES = 32;

/** Longest plugin path. */
export const MAX_PLUGIN_PATH_LENGTH = 4096;

/** `data` of a `relabel/LabelPlugin/v1`. */
export const LabelPluginData = z
  .object({
    source: z.enum([PluginSource.json, PluginSource.exec], { error: 'source must be "json" or "exec"' }),
    path: z.string({ error: 'path must be a string' }),
    args: z
      .array(z.string({ error: 'each argument must be a string' }))
      .max(MAX_PLUGIN_ARGS)
      .optional(),
    namespaces: z
      .array(z.string({ error: 'each namespace must be a string' }))
      .min(1, { error: 'namespaces must list at least one glob' })
      .max(MAX_PLUGIN_NAMESPACES),
    timeout_seconds: z.int().min(1).max(MAX_PLUGIN_TIMEOUT_SECONDS).optional(),
    max_output_bytes: z.int().min(2).max(MAX_PLUGIN_OUTPUT_BYTES).optional(),
  })
  .strict();
/** `data` of a label plugin document. */
export type LabelPluginData = z.infer<typeof LabelPluginData>;

/** A `relabel/LabelPlugin/v1` document; `metadata.name` names the plugin. */
export const LabelPlugin = documentEnvelope(SchemaName.LabelPlugin, LabelPluginData);
/** A label plugin document. */
export type LabelPlugin = z.infer<typeof LabelPlugin>;

/** A plugin as the rest of the code uses it: defaults filled in. Plain JSON. */
export type PluginSpec = {
  name: string;
  source: PluginSource;
  path: string;
  args: string[];
  namespaces: string[];
  timeoutSeconds: number;
  maxOutputBytes: number;
};

/** Converts a validated plugin document to a {@link PluginSpec}. */
export function pluginSpecFrom(doc: LabelPlugin): PluginSpec {
  const d = doc.data;
  return {
    name: doc.metadata.name,
    source: d.source,
    path: d.path,
    args: d.args ?? [],
    namespaces: [...d.namespaces],
    timeoutSeconds: d.timeout_seconds ?? DEFAULT_PLUGIN_TIMEOUT_SECONDS,
    maxOutputBytes: d.max_output_bytes ?? DEFAULT_PLUGIN_OUTPUT_BYTES,
  };
}

/** The extension of the last path segment (`.sh`), or `''` without one. */
function extensionOf(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot);
}

/** Problems with a plugin path: absolute, normalised, and of an allowed kind for its source. */
export function pluginPathErrors(source: PluginSource, path: string): string[] {
  if (path.length === 0) return ['path must be non-empty'];
  if (path.length > MAX_PLUGIN_PATH_LENGTH) return [`path must be at most ${MAX_PLUGIN_PATH_LENGTH} characters`];
  const errors: string[] = [];
  if (path.includes('\0')) errors.push('path may not contain a NUL character');
  if (!path.startsWith('/')) errors.push('path must be absolute (start with "/")');
  const segments = path.split('/').slice(1);
  if (path.endsWith('/')) errors.push('path must name a file, not a directory');
  else if (segments.some((s) => s === '' || s === '.' || s === '..')) errors.push('path must be normalised (no empty, "." or ".." segments)');
  const ext = extensionOf(path);
  if (source === PluginSource.json && ext !== '.json') errors.push('a json plugin\'s path must end in ".json"');
  if (source === PluginSource.exec && !(EXEC_EXTENSIONS as readonly string[]).includes(ext)) {
    errors.push(`an exec plugin must have no extension or one of ${EXEC_EXTENSIONS.filter((e) => e !== '').join(', ')} (got ${quote(ext)})`);
  }
  return errors;
}

/**
 * Problems with a namespace glob. A glob is a label key pattern in which
 * `*` stands for one or more characters other than `/`:
 * `feature.example.com/*`, `*.node.kubernetes.io/*`, `example.com/gpu-*`.
 * With every `*` replaced by a letter it must be a valid label key; `**` is
 * refused.
 */
export function namespaceGlobErrors(glob: string): string[] {
  if (glob.length === 0) return ['namespace glob must be non-empty'];
  if (glob.includes('**')) return ['"**" is not allowed; "*" already matches any run of characters other than "/"'];
  if (/[^A-Za-z0-9._\-/*]/.test(glob)) return ['namespace glob may hold only letters, digits, ".", "_", "-", "/" and "*"'];
  return labelKeyErrors(glob.replaceAll('*', 'x')).map((m) => `with "*" taken as a letter, ${m}`);
}

const globCache = new Map<string, RegExp>();

/** Whether label key `key` matches namespace glob `glob` (see {@link namespaceGlobErrors}). */
export function matchesNamespace(key: string, glob: string): boolean {
  let re = globCache.get(glob);
  if (re === undefined) {
    const body = glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\-]/g, '\\$&'))
      .join('[^/]+');
    re = new RegExp(`^${body}$`);
    if (globCache.size > 1000) globCache.clear();
    globCache.set(glob, re);
  }
  return re.test(key);
}

/** A problem inside a plugin's `data`, at a path relative to the document. */
export type PluginProblem = { path: PathSegment[]; message: string };

/** Checks what zod cannot: the path, the namespace globs, and arguments for exec plugins only. */
export function pluginProblems(data: LabelPluginData): PluginProblem[] {
  const problems: PluginProblem[] = [];
  for (const message of pluginPathErrors(data.source, data.path)) problems.push({ path: ['data', 'path'], message: `${quote(data.path)}: ${message}` });
  data.namespaces.forEach((glob, i) => {
    for (const message of namespaceGlobErrors(glob)) problems.push({ path: ['data', 'namespaces', i], message: `namespace ${quote(glob)}: ${message}` });
  });
  if (data.source === PluginSource.json) {
    if (data.args !== undefined) problems.push({ path: ['data', 'args'], message: 'args apply to exec plugins only' });
    if (data.timeout_seconds !== undefined) problems.push({ path: ['data', 'timeout_seconds'], message: 'timeout_seconds applies to exec plugins only' });
  }
  (data.args ?? []).forEach((arg, i) => {
    if (arg.length > MAX_PLUGIN_ARG_LENGTH)
      problems.push({ path: ['data', 'args', i], message: `an argument may be at most ${MAX_PLUGIN_ARG_LENGTH} characters` });
    if (arg.includes('\0')) problems.push({ path: ['data', 'args', i], message: 'an argument may not contain a NUL character' });
  });
  return problems;
}
