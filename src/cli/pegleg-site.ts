/**
 * A site of a Pegleg repository, collected as `pegleg site collect` collects
 * it: `site/<name>/site-definition.yaml` names the site's `site_type`, and
 * every `.yaml` file under `global/`, `type/<site_type>/` and `site/<name>/`
 * is taken (not hidden ones, nor any under a `tools` folder). Pegleg ends
 * each file's text with a `...` line when it has none, straight after the
 * last line even when that line has no newline, which can change that
 * line's value; it is done here the same way, so relabel reads what
 * Shipyard uploads. Reads only.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parse } from 'yaml';
import { RelabelError } from '../facade/relabel-error.ts';
import type { SourceFile } from '../store/revisions/revision-store.ts';
import { USAGE_ERROR } from './exit-codes.ts';

/** One version of a Pegleg repository's files: its working tree, or a git commit of it. */
export interface PeglegTree {
  /** Where a path of this version is, for messages (`<repo>/<path>`, or `<ref>:<path> of <repo>`). */
  where(path: string): string;
  /** Every file under folder `dir`, recursively, named by its path in the repository (`/`-separated); none when `dir` is absent. */
  files(dir: string): Promise<string[]>;
  /** A file's text; undefined when this version has no such file. */
  read(path: string): Promise<string | undefined>;
}

/** The repository's working tree at `root`, read as it is on disk. */
export function directoryTree(root: string): PeglegTree {
  return {
    where: (path) => join(root, path),
    async files(dir) {
      let entries;
      try {
        entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
      } catch {
        return [];
      }
      return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
    },
    async read(path) {
      try {
        return await readFile(join(root, path), 'utf8');
      } catch {
        return undefined;
      }
    },
  };
}

/** Whether Pegleg collects the file at `path`: a `.yaml` file, not hidden, in no hidden folder nor any named `tools`. */
export function peglegCollects(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1) ?? '';
  return name.endsWith('.yaml') && !name.startsWith('.') && !parts.slice(0, -1).some((part) => part.startsWith('.') || part === 'tools');
}

async function yamlFiles(tree: PeglegTree, dir: string): Promise<string[]> {
  return (await tree.files(dir)).filter(peglegCollects).sort();
}

/** The sites of a version of a Pegleg repository: the folders of `site/` holding a `site-definition.yaml`, sorted. */
export async function peglegSites(tree: PeglegTree): Promise<string[]> {
  const definition = /^site\/([^/]+)\/site-definition\.yaml$/;
  return (await tree.files('site'))
    .flatMap((path) => definition.exec(path)?.slice(1, 2) ?? [])
    .filter((name) => !name.startsWith('.'))
    .sort();
}

/** A file's text as Pegleg writes it into the collected site: a `...` line appended unless the last line is one. */
export function peglegText(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const last = lines[lines.length - 1] ?? '';
  return text === '' || last === '...\n' ? text : `${text}...\n`;
}

/** The site type `site/<name>/site-definition.yaml` names; a usage error naming the file when it cannot be read. */
async function siteType(tree: PeglegTree, repo: string, site: string): Promise<string> {
  const path = `site/${site}/site-definition.yaml`;
  const file = tree.where(path);
  const text = await tree.read(path);
  if (text === undefined) throw new RelabelError(USAGE_ERROR, `no site ${JSON.stringify(site)} in Pegleg repository ${repo}: ${file} cannot be read`);
  let type: unknown;
  try {
    type = (parse(text, { version: '1.1' }) as { data?: { site_type?: unknown } } | null)?.data?.site_type;
  } catch (err) {
    throw new RelabelError(USAGE_ERROR, `${file}: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  if (typeof type !== 'string' || type === '' || type.includes('/') || type.startsWith('.')) {
    throw new RelabelError(USAGE_ERROR, `${file}: data.site_type must name a folder of type/ (found ${JSON.stringify(type)?.slice(0, 80) ?? 'nothing'})`);
  }
  return type;
}

/** A site of a Pegleg repository as Pegleg collects it: its type, and its global, type and site files, named by their path in the repository. */
export type PeglegSite = { type: string; files: SourceFile[] };

/** Collects `site` of one version of a Pegleg repository (`repo` names the repository in messages). */
export async function collectPeglegSite(tree: PeglegTree, repo: string, site: string): Promise<PeglegSite> {
  if (site === '' || site.includes('/') || site.startsWith('.'))
    throw new RelabelError(USAGE_ERROR, `--site must name a folder of site/ (got ${JSON.stringify(site)})`);
  const type = await siteType(tree, repo, site);
  const files: SourceFile[] = [];
  for (const dir of ['global', `type/${type}`, `site/${site}`]) {
    for (const source of await yamlFiles(tree, dir)) files.push({ source, text: peglegText((await tree.read(source)) ?? '') });
  }
  return { type, files };
}

/** Collects `site` of the Pegleg repository at `repo`: its global, type and site files, named by their path in the repository. */
export async function readPeglegSite(repo: string, site: string): Promise<SourceFile[]> {
  return (await collectPeglegSite(directoryTree(repo), repo, site)).files;
}
