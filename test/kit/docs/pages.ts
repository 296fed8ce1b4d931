/**
 * The pages a user's clone documents itself with: the README, the
 * benchmarks' README and every page of docs/. The tests of their commands
 * and links read the same list.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The clone's root. */
export const ROOT = new URL('../../../', import.meta.url).pathname;

/** The documentation pages, relative to {@link ROOT}. */
export const PAGES = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
