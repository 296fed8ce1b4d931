/**
 * A git commit of a Pegleg repository read as a {@link PeglegTree}: its
 * files listed with `git ls-tree` and their text read with one
 * `git cat-file --batch`, straight from the object store. Nothing is
 * checked out and nothing is written: not the user's work tree, not the
 * index, not a temporary folder.
 */
import { spawn } from 'node:child_process';
import { RelabelError } from '../facade/relabel-error.ts';
import { clip } from '../core/plan/text.ts';
import { USAGE_ERROR } from './exit-codes.ts';
import { peglegCollects, type PeglegTree } from './pegleg-site.ts';

/** Longest git ref taken (git's own limit is far above any real one). */
const MAX_REF = 200;

/** What git printed, or why it failed. */
type GitRun = { code: number; stdout: Buffer; stderr: string };

function git(repo: string, args: readonly string[], input?: string): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    // GIT_OPTIONAL_LOCKS=0: nothing git does here may refresh the index.
    const child = spawn('git', ['-C', repo, ...args], {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (err) => reject(new RelabelError(USAGE_ERROR, `git cannot be run (${err.message}): reading a git ref needs git on the PATH`)));
    child.once('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr }));
    // A git that exits before reading all of its input says why on stderr; the broken pipe adds nothing.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}

const firstLine = (text: string) => clip(text.trim().split('\n')[0] ?? '', 200);

/** Splits `git cat-file --batch` output into each object's content, in the order asked. */
function batchContents(out: Buffer, count: number): string[] {
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const eol = out.indexOf(0x0a, at);
    const header = out.subarray(at, eol).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (eol < 0 || header[1] !== 'blob' || !Number.isSafeInteger(size)) throw new Error(`unexpected git cat-file output: ${clip(header.join(' '), 120)}`);
    texts.push(out.subarray(eol + 1, eol + 1 + size).toString('utf8'));
    at = eol + 1 + size + 1;
  }
  return texts;
}

/**
 * The Pegleg repository at `repo` as commit `ref` holds it. A usage error
 * naming the repository when it is not in a git repository, or naming the
 * ref (as given to `flag`) when it names no commit; nothing is written
 * either way.
 */
export async function gitTree(repo: string, ref: string, flag = '--base'): Promise<PeglegTree & { commit: string }> {
  if (ref === '' || ref.length > MAX_REF || ref.startsWith('-') || /[\s\0]/.test(ref)) {
    throw new RelabelError(USAGE_ERROR, `${flag} ${JSON.stringify(clip(ref, 80))}: expected a git ref (a branch, tag or commit) of the repository`);
  }
  const inside = await git(repo, ['rev-parse', '--git-dir']);
  if (inside.code !== 0)
    throw new RelabelError(USAGE_ERROR, `${repo} is not in a git repository, so it has no ${ref} to compare with (git: ${firstLine(inside.stderr)})`);
  const resolved = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (resolved.code !== 0) throw new RelabelError(USAGE_ERROR, `${flag} ${JSON.stringify(ref)} names no commit of the git repository at ${repo}`);
  const commit = resolved.stdout.toString('utf8').trim();
  // Paths come relative to `repo`, which may be a folder inside the git repository.
  const listed = await git(repo, ['ls-tree', '-r', '-z', commit, '--', 'global', 'type', 'site']);
  if (listed.code !== 0) throw new RelabelError(USAGE_ERROR, `git ls-tree ${ref} in ${repo}: ${firstLine(listed.stderr)}`);
  const blobs = new Map<string, string>();
  for (const entry of listed.stdout.toString('utf8').split('\0')) {
    const tab = entry.indexOf('\t');
    const [, type, oid] = entry.slice(0, tab).split(' ');
    if (tab > 0 && type === 'blob' && oid !== undefined) blobs.set(entry.slice(tab + 1), oid);
  }
  let texts: Promise<Map<string, string>> | undefined;
  // Every collected file is read in one batch on the first read: sites share global/ and their type's folder.
  const readAll = async (): Promise<Map<string, string>> => {
    const paths = [...blobs.keys()].filter(peglegCollects);
    const run = await git(repo, ['cat-file', '--batch'], paths.map((p) => `${blobs.get(p) ?? ''}\n`).join(''));
    if (run.code !== 0) throw new RelabelError(USAGE_ERROR, `git cat-file in ${repo}: ${firstLine(run.stderr)}`);
    const contents = batchContents(run.stdout, paths.length);
    return new Map(paths.map((p, i) => [p, contents[i] ?? '']));
  };
  return {
    commit,
    where: (path) => `${ref}:${path} of ${repo}`,
    async files(dir) {
      return [...blobs.keys()].filter((p) => p.startsWith(`${dir}/`));
    },
    async read(path) {
      texts ??= readAll();
      const all = await texts;
      if (all.has(path)) return all.get(path);
      const oid = blobs.get(path);
      if (oid === undefined) return undefined;
      const run = await git(repo, ['cat-file', 'blob', oid]);
      return run.code === 0 ? run.stdout.toString('utf8') : undefined;
    },
  };
}
