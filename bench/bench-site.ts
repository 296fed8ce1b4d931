/**
 * Sites of any size for the benchmarks: the sample site's profiles, racks and
 * policy, with `count` nodes generated from its node documents in turn; and
 * committing one as an operator does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Design } from '../src/core/site/validate-site.ts';
import { createDocuments } from '../src/facade/documents/documents.ts';
import type { DesignMemory } from '../src/store/designs/design-cache.ts';
import type { SourceFile } from '../src/store/revisions/revision-store.ts';
import type { Store } from '../src/store/store.ts';

const SAMPLE = new URL('../examples/site/', import.meta.url).pathname;

type NodeDoc = { metadata: { name: string }; data: { metadata: { owner_data?: Record<string, string> } } };

/** The generated node documents of a bench site, kept to regenerate variants. */
const templates = new WeakMap<SourceFile[], { docs: NodeDoc[] }>();

function nodesText(docs: readonly NodeDoc[], changed: ReadonlySet<string>, round: string, others?: string): string {
  return docs
    .map((doc) => {
      const value = changed.has(doc.metadata.name) ? round : others;
      if (value === undefined) return `---\n${JSON.stringify(doc)}\n`;
      const copy = structuredClone(doc);
      copy.data.metadata.owner_data = { ...copy.data.metadata.owner_data, 'bench-round': value };
      return `---\n${JSON.stringify(copy)}\n`;
    })
    .join('');
}

/**
 * The sample site with `count` nodes named `${prefix}00000` on, and
 * `joiners` more named `${prefix}j0001` on: nodes the design names that are
 * not registered at the start (`nodes` lists only the first), for nodes
 * that join.
 */
export function benchSite(prefix: string, count: number, joiners = 0): { files: SourceFile[]; nodes: string[]; joiners: string[] } {
  const files = readdirSync(SAMPLE)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ source: f, text: readFileSync(join(SAMPLE, f), 'utf8') }));
  const sample = parseAllDocuments(files.find((f) => f.source === 'nodes.yaml')?.text ?? '')
    .map((d) => d.toJS() as NodeDoc | null)
    .filter((d): d is NodeDoc => d !== null);
  const docs = Array.from({ length: count + joiners }, (_, i) => {
    const doc = structuredClone(sample[i % sample.length] as NodeDoc);
    doc.metadata.name = i < count ? `${prefix}${String(i).padStart(5, '0')}` : `${prefix}j${String(i - count + 1).padStart(4, '0')}`;
    return doc;
  });
  const out = [...files.filter((f) => f.source !== 'nodes.yaml'), { source: 'nodes.yaml', text: nodesText(docs, new Set(), '') }];
  templates.set(out, { docs });
  const names = docs.map((d) => d.metadata.name);
  return { files: out, nodes: names.slice(0, count), joiners: names.slice(count) };
}

/**
 * `files` (from {@link benchSite}) with a node-level label `bench-round: round`
 * on the `changed` nodes (and `bench-round: others` on the rest, if given).
 */
export function withChangedNodes(files: SourceFile[], changed: ReadonlySet<string>, round: string, others?: string): SourceFile[] {
  const t = templates.get(files);
  if (!t) throw new Error('withChangedNodes takes the files benchSite made');
  return files.map((f) => (f.source === 'nodes.yaml' ? { source: f.source, text: nodesText(t.docs, changed, round, others) } : f));
}

/**
 * Stages and commits `files` as an operator does through the API server
 * (its documents facade validates them, keeps the design with the revision
 * and tells the facade's own cache, `designs`); the design.
 */
export async function commitSite(store: Store, designs: DesignMemory, files: SourceFile[], message: string): Promise<Design> {
  const documents = createDocuments(store, designs);
  await documents.stage('site', files);
  const { revision } = await documents.commit({ message });
  const read = await designs.get(revision.id);
  if (!read.ok) throw new Error(`bench site does not validate: ${read.errors.length} errors`);
  return read.design;
}
