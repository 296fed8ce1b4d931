/**
 * `npm run bench:render`: rendering Deckhand's layers, in the pure core. A
 * generated layered site (global, type and site layers; `--profiles` host
 * profiles of each; `--nodes` nodes; substitutions into profiles and nodes)
 * is validated as committed, rendering first, against the same site
 * pre-rendered (what Drydock reads from Deckhand), median of `--runs`.
 * With `--pegleg REPO --site NAME`, a real site too (collected as Pegleg
 * collects it). With `--deckhand-python PY`, Deckhand's own engine renders
 * the same documents beside it (`bench/deckhand-timer.py`, run by PY).
 * Exits non-zero when a site does not validate.
 *
 *   npm run bench:render -- --nodes 5000 --profiles 200
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readPeglegSite } from '../src/cli/pegleg-site.ts';
import { loadSources, type SiteSource } from '../src/core/site/yaml-source.ts';
import { validateSite } from '../src/core/site/validate-site.ts';
import { layeredSite, preRendered } from './layered-site.ts';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '5000' },
    profiles: { type: 'string', default: '200' },
    runs: { type: 'string', default: '5' },
    pegleg: { type: 'string' },
    site: { type: 'string' },
    'deckhand-python': { type: 'string' },
  },
});
const runs = Number(values.runs);

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 10) / 10;
}

// Median time of `f` over `runs` after a warm-up; fails the bench when the site is refused.
function timed(name: string, sources: readonly SiteSource[]): { ms: number; loadMs: number; nodes: number } {
  const once = () => {
    const start = performance.now();
    const result = validateSite(sources);
    const ms = performance.now() - start;
    if (!result.ok) {
      console.error(`${name}: refused: ${result.errors.length} error(s), first: ${result.errors[0]?.message ?? ''}`);
      process.exit(1);
    }
    return { ms, nodes: Object.keys(result.design.nodes).length };
  };
  const { nodes } = once();
  const times = Array.from({ length: runs }, () => once().ms);
  const loads = Array.from({ length: runs }, () => {
    const start = performance.now();
    loadSources(sources);
    return performance.now() - start;
  });
  return { ms: median(times), loadMs: median(loads), nodes };
}

function deckhand(sources: readonly SiteSource[]): unknown {
  const python = values['deckhand-python'];
  if (python === undefined) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'bench-render-'));
  try {
    const file = join(dir, 'site.yaml');
    writeFileSync(file, sources.map((s) => (s.text.startsWith('---') ? s.text : `---\n${s.text}`)).join('\n'));
    const out = execFileSync(python, [new URL('./deckhand-timer.py', import.meta.url).pathname, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
    return JSON.parse(out.trim().split('\n').pop() ?? '{}');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const layered = layeredSite(Number(values.nodes), Number(values.profiles));
const plain = preRendered(layered);
const a = timed('layered site', layered);
const b = timed('pre-rendered site', plain);
console.log(
  JSON.stringify({
    site: 'generated',
    nodes: a.nodes,
    profiles: Number(values.profiles),
    layeredMs: a.ms,
    preRenderedMs: b.ms,
    ratio: Math.round((a.ms / b.ms) * 100) / 100,
    layeredReadMs: a.loadMs,
    preRenderedReadMs: b.loadMs,
    layeredAfterReadMs: Math.round((a.ms - a.loadMs) * 10) / 10,
    deckhand: deckhand(layered),
  }),
);
if (values.pegleg !== undefined) {
  if (values.site === undefined) throw new Error('--pegleg needs --site');
  const files = await readPeglegSite(values.pegleg, values.site);
  const real = timed(values.site, files);
  console.log(
    JSON.stringify({
      site: values.site,
      files: files.length,
      nodes: real.nodes,
      ms: real.ms,
      readMs: real.loadMs,
      afterReadMs: Math.round((real.ms - real.loadMs) * 10) / 10,
      deckhand: deckhand(files),
    }),
  );
}
