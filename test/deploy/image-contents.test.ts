/**
 * What the image holds, read from the Dockerfile and .dockerignore (no Docker
 * engine runs here, so the image is never built by the tests): the files the
 * final stage's COPY lines take from the build context, less those
 * .dockerignore excludes, matched as Docker matches them. The image holds
 * the product and no test: no `*.test.ts`, nothing of test/ (the test kit
 * included), nor the local stack.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A .dockerignore pattern as a regular expression over a context path (`**` any depth, `*` and `?` within one segment). */
function patternRegex(pattern: string): RegExp {
  const clean = pattern.replace(/^\/+/, '').replace(/\/+$/, '');
  let source = '';
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i] ?? '';
    if (clean.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (clean.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The rules of a .dockerignore, in order: each a pattern and whether it excludes (`!` re-includes). */
function ignoreRules(text: string): { regex: RegExp; excludes: boolean }[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => ({ regex: patternRegex(line.replace(/^!/, '')), excludes: !line.startsWith('!') }));
}

/** Whether .dockerignore's `rules` leave `path` out of the build context: the last rule matching it or a folder above it decides. */
function ignored(rules: { regex: RegExp; excludes: boolean }[], path: string): boolean {
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let out = false;
  for (const rule of rules) if (prefixes.some((p) => rule.regex.test(p))) out = rule.excludes;
  return out;
}

/** The context paths the final stage copies from the build context (not `--from` another stage). */
function copiedSources(dockerfile: string): string[] {
  const lines = dockerfile.split('\n');
  const lastFrom = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  return lines
    .slice(lastFrom)
    .filter((line) => /^COPY\s/i.test(line) && !/--from=/.test(line))
    .flatMap((line) => {
      const args = line.trim().split(/\s+/).slice(1).filter((a) => !a.startsWith('--'));
      return args.slice(0, -1);
    });
}

/** Every file under `path` of the build context (the path itself when a file). */
function filesUnder(path: string): string[] {
  if (!statSync(join(ROOT, path)).isDirectory()) return [path];
  return readdirSync(join(ROOT, path), { recursive: true, encoding: 'utf8' })
    .map((f) => join(path, f))
    .filter((f) => statSync(join(ROOT, f)).isFile());
}

/** The files the image holds, by context path. */
function imageFiles(): string[] {
  const rules = ignoreRules(readFileSync(join(ROOT, '.dockerignore'), 'utf8'));
  return copiedSources(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))
    .flatMap(filesUnder)
    .filter((f) => !ignored(rules, f));
}

describe('the image (Dockerfile and .dockerignore)', () => {
  const files = imageFiles();

  it('holds the entry points, the product and the sample site', () => {
    for (const file of ['package.json', 'bin/relabel.js', 'src/worker.ts', 'src/client.ts', 'src/api/main.ts', 'src/workflows/index.ts'])
      assert.ok(files.includes(file), `${file} is in the image`);
    const product = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => join('src', f));
    assert.deepEqual(
      product.filter((f) => !files.includes(f)),
      [],
      'every module of src/ but the tests is in the image',
    );
    assert.ok(files.some((f) => f.startsWith('examples/')), 'the sample site is in the image');
  });

  it('holds no test: no *.test.ts, nothing of test/ (the test kit included), nor the local stack', () => {
    assert.ok(
      readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).some((f) => f.endsWith('.test.ts')),
      'src/ has unit tests beside the code for the image to leave out',
    );
    assert.deepEqual(
      files.filter((f) => f.endsWith('.test.ts') || /^(test|stack|bench)\//.test(f)),
      [],
    );
  });

  it('reads .dockerignore as Docker does', () => {
    const rules = ignoreRules('# a comment\ntest\n**/*.test.ts\nsrc/keep*\n!src/keep.test.ts\n');
    assert.ok(ignored(rules, 'test/kit/store/contract.ts'), 'a folder excludes what it holds');
    assert.ok(ignored(rules, 'src/core/plan/label-plan.test.ts'), '** spans folders');
    assert.ok(ignored(rules, 'top.test.ts'), '**/ matches no folder too');
    assert.ok(!ignored(rules, 'src/core/plan/label-plan.ts'));
    assert.ok(!ignored(rules, 'src/testimony.ts'), 'a pattern names a whole segment');
    assert.ok(!ignored(rules, 'src/keep.test.ts'), 'a later ! re-includes');
    assert.deepEqual(copiedSources('FROM a AS b\nCOPY x ./\nFROM c\nCOPY --from=b /y ./y\nCOPY --chown=node p q ./\n'), ['p', 'q']);
  });
});
