import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { peglegText, readPeglegSite } from './pegleg-site.ts';

async function repo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'pegleg-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const definition = '---\nschema: pegleg/SiteDefinition/v1\nmetadata: {schema: metadata/Document/v1, name: lab}\ndata:\n  site_type: foundry\n';

describe('readPeglegSite', () => {
  it("collects global/, the site type's folder and the site's, as Pegleg does", async () => {
    const root = await repo({
      'site/lab/site-definition.yaml': definition,
      'site/lab/nodes.yaml': 'a: 1\n',
      'site/other/nodes.yaml': 'b: 1\n',
      'global/profiles/cp.yaml': 'c: 1\n',
      'global/tools/helper.yaml': 'd: 1\n',
      'global/.hidden/x.yaml': 'e: 1\n',
      'global/.dot.yaml': 'f: 1\n',
      'global/notes.yml': 'g: 1\n',
      'type/foundry/charts/c.yaml': 'h: 1\n',
      'type/cruiser/charts/c.yaml': 'i: 1\n',
    });
    try {
      const files = await readPeglegSite(root, 'lab');
      assert.deepEqual(
        files.map((f) => f.source),
        ['global/profiles/cp.yaml', 'type/foundry/charts/c.yaml', 'site/lab/nodes.yaml', 'site/lab/site-definition.yaml'],
      );
    } finally {
      await rm(root, { recursive: true });
    }
  });

  it('ends each text with a `...` line as Pegleg does, onto a last line with no newline', () => {
    assert.equal(peglegText('a: 1\n'), 'a: 1\n...\n');
    assert.equal(peglegText('a: 1\n...\n'), 'a: 1\n...\n');
    assert.equal(peglegText('scope: false'), 'scope: false...\n');
  });

  it('names the file when the site or its type cannot be read', async () => {
    const root = await repo({ 'site/lab/site-definition.yaml': 'data: {}\n' });
    try {
      await assert.rejects(readPeglegSite(root, 'nope'), /no site "nope" in Pegleg repository .*site-definition\.yaml cannot be read/);
      await assert.rejects(readPeglegSite(root, 'lab'), /site-definition\.yaml: data\.site_type must name a folder of type\/ \(found nothing\)/);
      await assert.rejects(readPeglegSite(root, '../x'), /--site must name a folder of site\//);
    } finally {
      await rm(root, { recursive: true });
    }
  });
});
