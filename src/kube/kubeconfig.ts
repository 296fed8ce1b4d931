/**
 * Loading a kubeconfig so that a bad one is refused at start with a message
 * naming the file and its defect (invalid YAML with its line and column, a
 * missing file, no current context, a context naming a cluster or user the
 * file lacks, a certificate file that does not exist), instead of the
 * parser's bare message or a failure on the first request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { clip } from '../core/plan/text.ts';
import { settingFromEnv } from '../settings/setting.ts';
import { CONNECTION } from '../settings/table.ts';

/** Longest defect text kept in a message (names and parser reasons are cut). */
const MAX_DEFECT = 300;

/** The cluster name the client gives the in-cluster service account's configuration. */
const IN_CLUSTER = 'inCluster';

/** Names listed at most when a message shows what a file does define. */
const MAX_NAMES = 5;

/** A kubeconfig that cannot be used; the message names the file (or files) and the defect. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
  /** The file, or the KUBECONFIG list of files, loaded. */
  readonly file: string;
  /** What is wrong with it. */
  readonly defect: string;
  constructor(file: string, defect: string) {
    const cut = clip(defect, MAX_DEFECT);
    super(`kubeconfig ${file}: ${cut}`);
    this.file = file;
    this.defect = cut;
  }
}

/** `name` quoted, cut to a readable length. */
function quoted(name: unknown): string {
  const text = String(name);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 59)}…` : text);
}

/** `(kinds: a, b, …)`: the names a file defines, or that it defines none. */
function defined(kinds: string, names: readonly string[]): string {
  if (names.length === 0) return `(the file defines no ${kinds})`;
  const shown = names.slice(0, MAX_NAMES).map(quoted).join(', ');
  return `(${kinds}: ${shown}${names.length > MAX_NAMES ? ` and ${names.length - MAX_NAMES} more` : ''})`;
}

/** What a kubeconfig defines, as the client parsed it. */
export interface KubeconfigParts {
  currentContext: unknown;
  contexts: readonly Context[];
  clusters: readonly Cluster[];
  users: readonly User[];
}

/**
 * What makes a parsed kubeconfig unusable, or undefined when nothing does:
 * nothing defined at all, no current context, a current context, cluster or
 * user that is not defined, a server that is not an http(s) URL (or plain
 * HTTP, which the client refuses unless TLS verification is off), a
 * certificate or key file that does not exist (`exists` checks paths).
 */
export function kubeconfigDefect(parts: KubeconfigParts, exists: (path: string) => boolean): string | undefined {
  const { contexts, clusters, users } = parts;
  if (contexts.length === 0 && clusters.length === 0 && users.length === 0) {
    return 'defines no clusters, users or contexts (is it a kubeconfig?)';
  }
  const current = parts.currentContext;
  if (current === undefined || current === null || current === '') {
    return `no current-context is set ${defined(
      'contexts',
      contexts.map((c) => c.name),
    )}`;
  }
  const context = contexts.find((c) => c.name === String(current));
  if (!context)
    return `current-context ${quoted(current)} names no context in the file ${defined(
      'contexts',
      contexts.map((c) => c.name),
    )}`;
  const cluster = clusters.find((c) => c.name === context.cluster);
  if (!cluster)
    return `context ${quoted(context.name)} names cluster ${quoted(context.cluster)}, which is not defined ${defined(
      'clusters',
      clusters.map((c) => c.name),
    )}`;
  // A context without a user is anonymous; one naming a user must find it.
  const userName = context.user as string | undefined;
  const user = userName ? users.find((u) => u.name === userName) : undefined;
  if (userName && !user)
    return `context ${quoted(context.name)} names user ${quoted(userName)}, which is not defined ${defined(
      'users',
      users.map((u) => u.name),
    )}`;
  let url: URL | undefined;
  try {
    url = new URL(cluster.server);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    return `cluster ${quoted(cluster.name)}: server ${quoted(cluster.server)} is not an https:// URL`;
  }
  if (url.protocol === 'http:' && !cluster.skipTLSVerify) {
    return `cluster ${quoted(cluster.name)}: server ${quoted(cluster.server)} is plain HTTP, which the Kubernetes client refuses unless insecure-skip-tls-verify is true`;
  }
  const files: [string, string | undefined][] = [
    [`cluster ${quoted(cluster.name)}: certificate-authority`, cluster.caFile],
    [`user ${quoted(user?.name)}: client-certificate`, user?.certFile],
    [`user ${quoted(user?.name)}: client-key`, user?.keyFile],
  ];
  for (const [what, path] of files) {
    if (path && !exists(path)) return `${what} ${path} does not exist`;
  }
  return undefined;
}

/** A parse or read error of the client as the defect it reveals. */
export function loadErrorDefect(err: unknown, file: string): string {
  const e = err as { name?: unknown; reason?: unknown; mark?: { line?: unknown; column?: unknown }; code?: unknown; path?: unknown; message?: unknown } | null;
  if (e?.name === 'YAMLException' && typeof e.reason === 'string') {
    const line = typeof e.mark?.line === 'number' ? e.mark.line + 1 : undefined;
    const column = typeof e.mark?.column === 'number' ? e.mark.column + 1 : undefined;
    return `invalid YAML${line !== undefined ? ` at line ${line}${column !== undefined ? `, column ${column}` : ''}` : ''}: ${e.reason}`;
  }
  if (typeof e?.code === 'string') {
    // A file the kubeconfig names (token-file) is not the kubeconfig itself.
    const which = typeof e.path === 'string' && e.path !== file ? `${e.path} (named in it) ` : '';
    switch (e.code) {
      case 'ENOENT':
        return which ? `${which}does not exist` : 'no such file';
      case 'EACCES':
      case 'EPERM':
        return `${which || 'the file '}cannot be read: permission denied`;
      case 'EISDIR':
        return `${which || 'the path '}is a directory, not a file`;
    }
  }
  // An empty file, or YAML that is not a mapping, leaves the client nothing to read.
  if (err instanceof TypeError) return 'is not a kubeconfig: expected a YAML mapping with clusters, users, contexts and current-context';
  return err instanceof Error ? err.message : String(err);
}

/** One file, parsed by the client; a {@link KubeconfigError} naming it when it cannot be read or parsed. */
function loadFile(file: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new KubeconfigError(file, loadErrorDefect(err, file));
  }
  return kc;
}

/** The files merged as kubectl merges a KUBECONFIG list: the first to define a name (or the current context) wins. */
function merged(files: readonly string[]): KubeConfig {
  const [first, ...rest] = files.map(loadFile);
  const kc = first as KubeConfig;
  if (rest.length === 0) return kc;
  const clusters = [...kc.getClusters()];
  const users = [...kc.getUsers()];
  const contexts = [...kc.getContexts()];
  let currentContext = kc.getCurrentContext();
  for (const other of rest) {
    for (const c of other.getClusters()) if (!clusters.some((x) => x.name === c.name)) clusters.push(c);
    for (const u of other.getUsers()) if (!users.some((x) => x.name === u.name)) users.push(u);
    for (const c of other.getContexts()) if (!contexts.some((x) => x.name === c.name)) contexts.push(c);
    currentContext ||= other.getCurrentContext();
  }
  kc.loadFromOptions({ clusters, users, contexts, currentContext });
  return kc;
}

/**
 * Kubeconfigs whose current cluster wants answers uncompressed: its
 * `disable-compression: true` (the kubeconfig field kubectl honours, which
 * the client does not read), or the in-cluster service account.
 */
const uncompressed = new WeakSet<KubeConfig>();

/**
 * Whether the API server's answers to `kc` should come uncompressed. The
 * server gzips any answer over 128 KB that a client accepts gzipped, so a
 * LIST of thousands of Nodes costs it (and the worker, inflating) CPU that a
 * fast network does not need: Kubernetes' own controller manager and
 * scheduler ask for none. relabel does the same in the cluster, and with a
 * kubeconfig when its cluster says `disable-compression: true`.
 */
export function compressionDisabled(kc: KubeConfig): boolean {
  return uncompressed.has(kc);
}

/** `disable-compression` of cluster `name` in the first of `files` that defines it (as merging picks the cluster). */
function disablesCompression(files: readonly string[], name: string | undefined): boolean {
  for (const file of files) {
    let doc: unknown;
    try {
      doc = parse(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    const clusters = (doc as { clusters?: unknown } | null)?.clusters;
    const entry = Array.isArray(clusters) ? (clusters as { name?: unknown; cluster?: Record<string, unknown> }[]).find((c) => c?.name === name) : undefined;
    if (entry) return entry.cluster?.['disable-compression'] === true;
  }
  return false;
}

/**
 * Loads a kubeconfig: the file at `path` when given (a KUBECONFIG-style
 * list of files separated by `:` is merged as kubectl does), else the files
 * of `KUBECONFIG`, else ~/.kube/config; without any of them, the in-cluster
 * service account (the client's default). Throws a {@link KubeconfigError}
 * naming the file and its defect when it cannot be read, is not valid YAML,
 * or cannot be used (see {@link kubeconfigDefect}).
 */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const home = join(homedir(), '.kube', 'config');
  const list = path || (settingFromEnv(CONNECTION.kubeconfig, env) ?? (existsSync(home) ? home : undefined));
  if (list === undefined) {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    if (kc.getCurrentCluster()?.name === IN_CLUSTER) uncompressed.add(kc);
    return kc;
  }
  const files = list.split(delimiter).filter((f) => f !== '');
  if (files.length === 0) throw new KubeconfigError(JSON.stringify(list), 'names no file');
  const kc = merged(files);
  const defect = kubeconfigDefect(
    { currentContext: kc.getCurrentContext(), contexts: kc.getContexts(), clusters: kc.getClusters(), users: kc.getUsers() },
    existsSync,
  );
  if (defect) throw new KubeconfigError(files.join(delimiter), defect);
  if (disablesCompression(files, kc.getCurrentCluster()?.name)) uncompressed.add(kc);
  return kc;
}
