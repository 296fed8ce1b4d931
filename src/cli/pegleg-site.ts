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

async function yamlFiles(root: string, dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.yaml') && !e.name.startsWith('.'))
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((rel) => {
      const folders = rel.split('/').slice(0, -1);
      return !folders.some((part) => part.startsWith('.') || part === 'tools');
    })
    .sort();
}

/** A file's text as Pegleg writes it into the collected site: a `...` line appended unless the last line is one. */
export function peglegText(text: string): string {
  const lines = text.split(/(?<=\n)/);
  const last = lines[lines.length - 1] ?? '';
  return text === '' || last === '...\n' ? text : `${text}...\n`;
}

/** The site type `site/<name>/site-definition.yaml` of `repo` names; a usage error naming the file when it cannot be read. */
async function siteType(repo: string, site: string): Promise<string> {
  const file = join(repo, 'site', site, 'site-definition.yaml');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new RelabelError(USAGE_ERROR, `no site ${JSON.stringify(site)} in Pegleg repository ${repo}: ${file} cannot be read`);
  }
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

/** Collects `site` of the Pegleg repository at `repo`: its global, type and site files, named by their path in the repository. */
export async function readPeglegSite(repo: string, site: string): Promise<SourceFile[]> {
  if (site === '' || site.includes('/') || site.startsWith('.'))
    throw new RelabelError(USAGE_ERROR, `--site must name a folder of site/ (got ${JSON.stringify(site)})`);
  const type = await siteType(repo, site);
  const files: SourceFile[] = [];
  for (const dir of ['global', join('type', type), join('site', site)]) {
    for (const source of await yamlFiles(repo, dir)) files.push({ source, text: peglegText(await readFile(join(repo, source), 'utf8')) });
  }
  return files;
}
