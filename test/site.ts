/**
 * Test sites built from the sample site in examples/site, with node names
 * prefixed so that each test works on Nodes of its own in the shared cluster.
 */
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { openStore } from '../src/store/open-store.ts';
import type { SourceFile } from '../src/store/revisions/revision-store.ts';
import type { Store } from '../src/store/store.ts';

/** Directory of the sample site. */
export const SAMPLE_SITE_DIR = new URL('../examples/site/', import.meta.url).pathname;

/** The sample site's files as read. */
export function sampleSiteFiles(dir = SAMPLE_SITE_DIR): SourceFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ source: f, text: readFileSync(join(dir, f), 'utf8') }));
}

/**
 * The sample site with every BaremetalNode renamed `${prefix}-${name}`, and
 * `edit` applied to each document (as a plain object) before it is written
 * back. Returns the files and the renamed node names in document order.
 */
export function prefixedSite(prefix: string, edit?: (doc: Record<string, any>) => void): { files: SourceFile[]; nodes: string[] } {
  const nodes: string[] = [];
  const files = sampleSiteFiles().map(({ source, text }) => {
    const docs = parseAllDocuments(text).map((d) => d.toJS() as Record<string, any> | null);
    const out: string[] = [];
    for (const doc of docs) {
      if (!doc) continue;
      // A site of its own, so one test's run never blocks another's.
      if (doc.schema === 'drydock/Region/v1') doc.metadata.name = `${prefix}-site`;
      if (doc.schema === 'drydock/BaremetalNode/v1') {
        doc.metadata.name = `${prefix}-${doc.metadata.name}`;
        nodes.push(doc.metadata.name);
      }
      edit?.(doc);
      out.push(`---\n${JSON.stringify(doc, null, 1)}\n`);
    }
    return { source, text: out.join('') };
  });
  return { files, nodes };
}

/** A fresh SQLite store holding `files` committed as revision 1, tagged as a site action unless told not to. */
export async function storeWithSite(files: SourceFile[], options: { siteAction?: boolean } = {}): Promise<{ store: Store; url: string }> {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-store-')), 'revisions.db')}`;
  const store = await openStore(url);
  await store.revisions.stage('site', files);
  const revision = await store.revisions.commit({ message: 'test site' });
  if (options.siteAction !== false) await store.revisions.tag(revision.id, 'site-action-success');
  return { store, url };
}

/**
 * A site of `count` nodes built from the sample site's profiles, racks,
 * region and policy: node i takes the sample nodes' profiles and racks in
 * turn. Node names are `${prefix}-n0001`…; the site is `${prefix}-site`.
 */
export function scaledSite(prefix: string, count: number): { files: SourceFile[]; nodes: string[] } {
  const templates: Record<string, any>[] = [];
  const base = prefixedSite(prefix, (doc) => {
    if (doc.schema === 'drydock/BaremetalNode/v1') templates.push(structuredClone(doc));
  });
  const nodes: string[] = [];
  const docs: string[] = [];
  for (let i = 0; i < count; i++) {
    const doc = structuredClone(templates[i % templates.length] as Record<string, any>);
    doc.metadata.name = `${prefix}-n${String(i + 1).padStart(4, '0')}`;
    nodes.push(doc.metadata.name);
    docs.push(`---\n${JSON.stringify(doc)}\n`);
  }
  const files = base.files.filter((f) => f.source !== 'nodes.yaml');
  files.push({ source: 'nodes.yaml', text: docs.join('') });
  return { files, nodes };
}

/** A `relabel/NodeSet/v1` document of `data` (JSON is YAML). */
export function nodeSetDoc(name: string, data: Record<string, unknown>): string {
  return `---\n${JSON.stringify({ schema: 'relabel/NodeSet/v1', metadata: { schema: 'metadata/Document/v1', name }, data }, null, 1)}\n`;
}
