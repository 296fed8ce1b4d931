/**
 * Site document files as given on the command line: files, or directories
 * searched (recursively) for `.yaml` / `.yml` files, read verbatim so errors
 * can point at lines.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { RelabelError } from '../facade/relabel-error.ts';
import type { SourceFile } from '../store/revisions/revision-store.ts';
import { USAGE_ERROR } from './exit-codes.ts';

/**
 * How files are named: `path` keeps the path as given (validate: errors read
 * `examples/site/nodes.yaml:3:1 …`); `stored` uses a file's base name, or its
 * path relative to the directory given (stage: names independent of the
 * current directory).
 */
export type SourceNaming = 'path' | 'stored';

const YAML_FILE = /\.ya?ml$/i;

async function yamlFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return (
    entries
      .filter((e) => e.isFile() && YAML_FILE.test(e.name))
      .map((e) => relative(dir, join(e.parentPath, e.name)))
      // Hidden files and directories (editor backups, .git) are not documents.
      .filter((rel) => !rel.split(sep).some((part) => part.startsWith('.')))
      .sort()
  );
}

/**
 * Reads every path. A path that does not exist, or a directory without YAML
 * files, is a usage error naming it. Reads only.
 */
export async function readSourceFiles(paths: readonly string[], naming: SourceNaming): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch (err) {
      throw new RelabelError(
        USAGE_ERROR,
        `cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`,
      );
    }
    if (!isDirectory) {
      files.push({ source: naming === 'path' ? path : basename(path), text: await readFile(path, 'utf8') });
      continue;
    }
    const found = await yamlFilesUnder(path);
    if (found.length === 0) throw new RelabelError(USAGE_ERROR, `no .yaml or .yml files in directory ${path}`);
    for (const rel of found) {
      const source = naming === 'path' ? join(path, rel) : rel.split(sep).join('/');
      files.push({ source, text: await readFile(join(path, rel), 'utf8') });
    }
  }
  return files;
}
