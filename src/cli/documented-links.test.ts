/**
 * Every link between the README, bench/README.md and docs/ leads somewhere:
 * a relative link names a file of the clone, and its `#anchor`, when it has
 * one, a heading of that page (as GitHub makes anchors of headings). A
 * user's clone holds nothing else, so no page may link outside it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { PAGES, ROOT } from '../../test/kit/docs/pages.ts';

/** The text of `page` outside its fenced code blocks. */
function prose(page: string): string {
  let inBlock = false;
  return readFileSync(join(ROOT, page), 'utf8')
    .split('\n')
    .filter((line) => {
      if (/^\s*```/.test(line)) inBlock = !inBlock;
      return !inBlock && !/^\s*```/.test(line);
    })
    .join('\n');
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, text] of prose(page).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = (text ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    found.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return found;
}

/** The relative links of a page's prose: `[text](target)`, web addresses and mail aside. */
function links(page: string): { target: string; anchor?: string }[] {
  return [...prose(page).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((t) => !/^[a-z]+:/.test(t))
    .map((t) => {
      const [path = '', anchor] = t.split('#');
      return { target: path === '' ? page : normalize(join(dirname(page), path)), ...(anchor !== undefined ? { anchor } : {}) };
    });
}

describe('the links of the README, bench/README.md and docs/', () => {
  it('finds the links it checks', () => {
    const all = PAGES.flatMap((page) => links(page));
    assert.ok(all.length > 50, `only ${all.length} links found`);
    assert.ok(links('README.md').some((l) => l.target === 'docs/development.md'));
  });

  it('leads only to files of the clone, and to headings those pages have', () => {
    const wrong: string[] = [];
    for (const page of PAGES) {
      for (const { target, anchor } of links(page)) {
        if (relative(ROOT, join(ROOT, target)).startsWith('..')) wrong.push(`${page}: ${target} is outside the clone`);
        else if (!existsSync(join(ROOT, target))) wrong.push(`${page}: ${target} does not exist`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) wrong.push(`${page}: ${target}#${anchor} has no such heading`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('makes anchors as GitHub does (the check bites)', () => {
    assert.ok(anchors('README.md').has('two-commands'));
    assert.ok(anchors('bench/README.md').has('node-set-members---passes-membersmembers-noopseed-members'));
    assert.ok(!anchors('README.md').has('no-such-heading'));
  });
});
