/**
 * One entry point that opens the right backend from a store URL, and the
 * default location of the embedded store.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Store } from './store.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';
import { openSqliteStore, SQLITE_MEMORY } from './sql/sqlite-store.ts';
import { openPostgresStore } from './sql/postgres-store.ts';
import { variableFromEnv } from '../settings/setting.ts';
import { VARIABLES } from '../settings/table.ts';

/** File name of the embedded store inside the data directory. */
export const SQLITE_FILE_NAME = 'revisions.db';

/** A parsed store URL. */
export type StoreLocation =
  { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly connectionString: string; readonly schema?: string };

/**
 * The data directory: `$RELABEL_DATA_DIR`, else `$XDG_DATA_HOME/relabel`, else
 * `~/.local/share/relabel`. Relative values are resolved against the current
 * directory. Pure apart from reading the home directory.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const dataDir = variableFromEnv(VARIABLES.dataDir, env);
  if (dataDir !== undefined) return resolve(dataDir);
  const xdg = variableFromEnv(VARIABLES.xdgDataHome, env);
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'relabel');
  return join(homedir(), '.local', 'share', 'relabel');
}

/** URL of the embedded store in the default data directory (`sqlite:<dir>/revisions.db`). */
export function defaultStoreUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `sqlite:${join(defaultDataDir(env), SQLITE_FILE_NAME)}`;
}

/**
 * Parse a store URL:
 * - `sqlite:/abs/file.db`, `sqlite:relative.db`, `sqlite:///abs/file.db`,
 *   `sqlite::memory:`, or a plain path → SQLite;
 * - `postgres://…` or `postgresql://…` → PostgreSQL; an optional `schema`
 *   query parameter (ours, removed before the URL reaches the driver) picks
 *   the schema.
 * Throws InvalidArgument for an empty URL or another scheme.
 */
export function parseStoreUrl(url: string): StoreLocation {
  if (url.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, 'store URL is empty');
  if (/^postgres(ql)?:\/\//.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new StoreError(StoreErrorCode.InvalidArgument, `invalid PostgreSQL URL: ${redact(url)}`);
    }
    const schema = parsed.searchParams.get('schema') ?? undefined;
    parsed.searchParams.delete('schema');
    const connectionString = parsed.toString();
    return schema === undefined ? { kind: 'postgres', connectionString } : { kind: 'postgres', connectionString, schema };
  }
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2);
    if (path.length === 0) throw new StoreError(StoreErrorCode.InvalidArgument, `store URL ${url} names no file`);
    return { kind: 'sqlite', path: path === SQLITE_MEMORY ? path : resolve(path) };
  }
  // A scheme other than ours (two or more letters, so Windows drive letters stay paths).
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(url);
  if (scheme) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `unsupported store URL scheme '${scheme[1]}:' in ${redact(url)}; use sqlite:<path> or postgres://…`);
  }
  return { kind: 'sqlite', path: resolve(url) };
}

/** Hide a password in a URL before it appears in a message. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
}

/**
 * Open the store a URL names (see {@link parseStoreUrl}); without a
 * URL, the embedded store in the default data directory. The caller owns the
 * store and must `close()` it.
 */
export async function openStore(url: string = defaultStoreUrl()): Promise<Store> {
  const location = parseStoreUrl(url);
  if (location.kind === 'sqlite') return openSqliteStore(location.path);
  return location.schema === undefined
    ? openPostgresStore(location.connectionString)
    : openPostgresStore(location.connectionString, { schema: location.schema });
}
