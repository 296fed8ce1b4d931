/**
 * `npm run bench`: the pure core at site scale. Validates a generated site of
 * N nodes (host profiles, racks, policy from the sample site) and plans every
 * node against a current state, reporting time and heap. No servers needed.
 *
 *   npm run bench -- 5000
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { planLabels } from '../src/core/plan/label-plan.ts';
import { validateSite } from '../src/core/site/validate-site.ts';

const count = Number(process.argv[2] ?? 5000);
const dir = new URL('../examples/site/', import.meta.url).pathname;
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => ({ source: f, text: readFileSync(join(dir, f), 'utf8') }));
const templates = parseAllDocuments(files.find((f) => f.source === 'nodes.yaml')?.text ?? '')
  .map((d) => d.toJS())
  .filter(Boolean);
const nodes = Array.from({ length: count }, (_, i) => {
  const doc = structuredClone(templates[i % templates.length]);
  doc.metadata.name = `node-${String(i).padStart(5, '0')}`;
  return `---\n${JSON.stringify(doc)}\n`;
}).join('');
const site = [...files.filter((f) => f.source !== 'nodes.yaml'), { source: 'nodes.yaml', text: nodes }];

const mb = () => Math.round(process.memoryUsage().heapUsed / 1e6);
let t0 = performance.now();
const result = validateSite(site);
const validateMs = performance.now() - t0;
if (!result.ok) throw new Error(`generated site invalid: ${result.errors[0]?.message}`);
const heapAfterValidate = mb();

t0 = performance.now();
let sets = 0;
for (const node of Object.values(result.design.nodes)) {
  const current = { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'linux', 'example.com/team': 'ops' };
  const plan = planLabels({ labels: current, annotations: {}, desired: node.labels, policy: result.design.policy });
  sets += Object.keys(plan.set).length;
}
const planMs = performance.now() - t0;

console.log(
  JSON.stringify({
    nodes: count,
    validateMs: Math.round(validateMs),
    planMs: Math.round(planMs),
    planPerNodeUs: Math.round((planMs * 1000) / count),
    labelsToSet: sets,
    heapMB: heapAfterValidate,
  }),
);
