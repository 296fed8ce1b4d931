/**
 * Which sites of a Pegleg repository a change reaches: every site rendered
 * and validated at a base (a git commit of the repository) and at a head
 * (its working tree, or another commit), then compared. A changed file
 * could reach, by layering alone, every site when it is under `global/`,
 * the sites of its type under `type/<type>/`, one site under
 * `site/<name>/`; whether it does is what the renderings say, since a
 * site's own document can override what it inherits. Reads only.
 */
import { stat } from 'node:fs/promises';
import { formatError, type SiteError } from '../core/plan/site-error.ts';
import { changedSourceDocuments, siteDiff, type ChangedSourceDocument, type SiteDiff } from '../core/site/site-reach.ts';
import { validateSite, type SiteValidation } from '../core/site/validate-site.ts';
import { RelabelError } from '../facade/relabel-error.ts';
import type { SourceFile } from '../store/revisions/revision-store.ts';
import { USAGE_ERROR } from './exit-codes.ts';
import { gitTree } from './pegleg-git.ts';
import { collectPeglegSite, directoryTree, peglegSites, type PeglegSite, type PeglegTree } from './pegleg-site.ts';

/** The Pegleg layers a repository's path belongs to. */
export const PeglegLayer = { global: 'global', type: 'type', site: 'site' } as const;
/** One of the {@link PeglegLayer} names. */
export type PeglegLayer = (typeof PeglegLayer)[keyof typeof PeglegLayer];

/** A file that differs from the base to the head, with the Pegleg layer its folder is. */
export type ChangedFile = { path: string; layer: PeglegLayer; change: 'added' | 'changed' | 'removed' };

/** How a site came out: its change reached it or not, it exists on one side only, or it did not validate at one side. */
export type SiteStatus = 'reached' | 'unchanged' | 'added' | 'removed' | 'failed';

/** One site's reach. */
export type SiteReach = {
  name: string;
  /** Its site type at the head (at the base for a removed site). */
  type: string;
  status: SiteStatus;
  /** Whether a changed file is one this site collects: what layering alone could reach. */
  inScope: boolean;
  /** The layers of the changed files it collects. */
  layers: PeglegLayer[];
  /** The changed source documents it collects. */
  changedSources: ChangedSourceDocument[];
  /** Absent for a failed site. */
  diff?: SiteDiff;
  /** For a failed site: where it failed and why, each error formatted as `docs validate` prints it. */
  failed?: { at: 'base' | 'head'; errors: string[] };
};

/** What a change to the repository reaches. */
export type PeglegReach = {
  repository: string;
  base: { ref: string; commit: string };
  /** `ref` null: the working tree. */
  head: { ref: string | null; commit?: string };
  changedFiles: ChangedFile[];
  /** The sites compared (every site, or those named), by name. */
  sites: SiteReach[];
  /** Every site of the repository at either side, by name. */
  repositorySites: string[];
};

/** The layer a repository path is in, or undefined when Pegleg collects it for no site. */
export function layerOf(path: string): PeglegLayer | undefined {
  const top = path.split('/')[0];
  return top === 'global' || top === 'type' || top === 'site' ? top : undefined;
}

/** One side of one site: collected (or why not), then validated. */
type Side = { site: PeglegSite; validation: SiteValidation } | { error: string } | undefined;

async function sideOf(tree: PeglegTree, repo: string, sites: ReadonlySet<string>, name: string): Promise<Side> {
  if (!sites.has(name)) return undefined;
  let site: PeglegSite;
  try {
    site = await collectPeglegSite(tree, repo, name);
  } catch (err) {
    if (err instanceof RelabelError) return { error: err.message };
    throw err;
  }
  return { site, validation: validateSite(site.files) };
}

const errorLines = (errors: readonly SiteError[]) => errors.map(formatError);

function failure(side: Side): string[] | undefined {
  if (side === undefined) return undefined;
  if ('error' in side) return [side.error];
  return side.validation.ok ? undefined : errorLines(side.validation.errors);
}

async function exists(repo: string): Promise<void> {
  try {
    if ((await stat(repo)).isDirectory()) return;
  } catch {
    // Named below.
  }
  throw new RelabelError(USAGE_ERROR, `--pegleg ${repo}: no such folder`);
}

/**
 * Renders and validates every site of the Pegleg repository at `repo` (or
 * the `sites` named) at `base` and at `head` (the working tree when
 * absent) and compares them. Usage errors, before anything is compared:
 * no folder, no git repository, a ref naming no commit, no site at the
 * head, a named site in neither version. Reads only.
 */
export async function peglegReach(options: { repo: string; base: string; head?: string; sites?: readonly string[] }): Promise<PeglegReach> {
  const { repo } = options;
  await exists(repo);
  const baseTree = await gitTree(repo, options.base);
  const headCommit = options.head === undefined ? undefined : await gitTree(repo, options.head, '--head');
  const headTree = headCommit ?? directoryTree(repo);
  const headSites = new Set(await peglegSites(headTree));
  const baseSites = new Set(await peglegSites(baseTree));
  if (headSites.size === 0) {
    throw new RelabelError(
      USAGE_ERROR,
      `${repo} is not a Pegleg repository${options.head === undefined ? '' : ` at ${options.head}`}: no site/<name>/site-definition.yaml in it`,
    );
  }
  const all = [...new Set([...headSites, ...baseSites])].sort();
  const unknown = (options.sites ?? []).filter((s) => !all.includes(s));
  if (unknown.length > 0) {
    throw new RelabelError(USAGE_ERROR, `--sites: no site ${unknown.map((s) => JSON.stringify(s)).join(', ')} in ${repo} (its sites: ${all.join(', ')})`);
  }
  const names = options.sites === undefined ? all : all.filter((s) => options.sites?.includes(s));
  const sides = [];
  for (const name of names) sides.push({ name, base: await sideOf(baseTree, repo, baseSites, name), head: await sideOf(headTree, repo, headSites, name) });

  // Every file any compared site collects, at each side, compared once: sites share global/ and their type's folder.
  const baseFiles = new Map<string, SourceFile>();
  const headFiles = new Map<string, SourceFile>();
  for (const s of sides) {
    if (s.base && 'site' in s.base) for (const f of s.base.site.files) baseFiles.set(f.source, f);
    if (s.head && 'site' in s.head) for (const f of s.head.site.files) headFiles.set(f.source, f);
  }
  const changedFiles: ChangedFile[] = [];
  for (const path of [...new Set([...baseFiles.keys(), ...headFiles.keys()])].sort()) {
    const was = baseFiles.get(path)?.text;
    const is = headFiles.get(path)?.text;
    if (was === is) continue;
    changedFiles.push({ path, layer: layerOf(path) ?? PeglegLayer.site, change: was === undefined ? 'added' : is === undefined ? 'removed' : 'changed' });
  }
  const changedDocs = changedSourceDocuments(
    changedFiles.flatMap((f) => baseFiles.get(f.path) ?? []),
    changedFiles.flatMap((f) => headFiles.get(f.path) ?? []),
  );

  const sites = sides.map(({ name, base, head }): SiteReach => {
    const collected = new Set([base, head].flatMap((side) => (side && 'site' in side ? side.site.files.map((f) => f.source) : [])));
    const changedHere = changedFiles.filter((f) => collected.has(f.path));
    const layers = Object.values(PeglegLayer).filter((layer) => changedHere.some((f) => f.layer === layer));
    const changedSources = changedDocs.filter((d) => collected.has(d.source));
    const type = head && 'site' in head ? head.site.type : base && 'site' in base ? base.site.type : '';
    const common = { name, type, inScope: changedHere.length > 0, layers, changedSources };
    const headErrors = failure(head);
    if (headErrors) return { ...common, status: 'failed', failed: { at: 'head', errors: headErrors } };
    const baseErrors = failure(base);
    if (baseErrors) return { ...common, status: 'failed', failed: { at: 'base', errors: baseErrors } };
    const valid = (side: Side) => (side && 'site' in side && side.validation.ok ? side.validation : undefined);
    const diff = siteDiff(valid(base), valid(head), changedSources);
    const status: SiteStatus = base === undefined ? 'added' : head === undefined ? 'removed' : diff.reached ? 'reached' : 'unchanged';
    return { ...common, status, diff };
  });
  return {
    repository: repo,
    base: { ref: options.base, commit: baseTree.commit },
    head: headCommit === undefined || options.head === undefined ? { ref: null } : { ref: options.head, commit: headCommit.commit },
    changedFiles,
    sites,
    repositorySites: all,
  };
}
