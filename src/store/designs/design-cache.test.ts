import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { validateSite } from '../../core/site/validate-site.ts';
import { createDesignCache, decodeDesign, encodeDesign, keepCommittedDesign } from './design-cache.ts';
import { designFormat } from './design-format.ts';
import type { Store } from '../store.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../sql/sqlite-store.ts';

const SAMPLE = new URL('../../../examples/site/', import.meta.url).pathname;
const sample = readdirSync(SAMPLE)
  .filter((f) => f.endsWith('.yaml'))
  .map((source) => ({ source, text: readFileSync(join(SAMPLE, source), 'utf8') }));

/** A store holding the sample site as revision 1, counting the reads of its documents. */
async function sampleStore(t: { after(fn: () => Promise<void>): void }): Promise<{ store: Store; reads: () => number }> {
  const store = await openSqliteStore(SQLITE_MEMORY);
  t.after(() => store.close());
  await store.revisions.stage('site', sample);
  await store.revisions.commit();
  let reads = 0;
  const documents = store.revisions.documents.bind(store.revisions);
  store.revisions.documents = (id) => (reads++, documents(id));
  return { store, reads: () => reads };
}

test('the first process to need a design validates and stores it; the next reads it back, equal, without the documents', async (t) => {
  const { store, reads } = await sampleStore(t);
  const expected = validateSite(sample.map((f) => ({ source: `site/${f.source}`, text: f.text })));
  assert.ok(expected.ok);
  const first = await createDesignCache(store).get(1);
  assert.equal(reads(), 1);
  assert.deepEqual(first, { ok: true, design: expected.design });
  assert.ok(await store.designs.get(1, designFormat()), 'stored under the running code’s format');
  const second = await createDesignCache(store).get(1);
  assert.equal(reads(), 1, 'a second cache did not read the documents');
  assert.deepEqual(second, { ok: true, design: expected.design });
});

test('a design stored by other code, or one that cannot be read back, is validated again', async (t) => {
  const { store, reads } = await sampleStore(t);
  const v = validateSite(sample.map((f) => ({ source: `site/${f.source}`, text: f.text })));
  assert.ok(v.ok);
  await store.designs.save(1, 'design-other-code', await encodeDesign({ ...v.design, site: 'stale' }));
  const fromOther = await createDesignCache(store).get(1);
  assert.equal(reads(), 1, 'another format is not read');
  assert.equal(fromOther.ok && fromOther.design.site, v.design.site);

  const broken = await openSqliteStore(SQLITE_MEMORY);
  t.after(() => broken.close());
  await broken.revisions.stage('site', sample);
  await broken.revisions.commit();
  await broken.designs.save(1, designFormat(), 'not a stored design');
  const again = await createDesignCache(broken).get(1);
  assert.deepEqual(again, { ok: true, design: v.design });
  assert.deepEqual(await decodeDesign((await broken.designs.get(1, designFormat())) ?? ''), v.design, 'the unreadable design was replaced');
  await assert.rejects(decodeDesign(Buffer.from('{}').toString('base64')));
});

test('an invalid revision is not stored', async (t) => {
  const store = await openSqliteStore(SQLITE_MEMORY);
  t.after(() => store.close());
  await store.revisions.stage('site', [{ source: 'bad.yaml', text: 'schema: drydock/BaremetalNode/v1\nmetadata: {name: n1}\ndata: {}\n' }]);
  await store.revisions.commit();
  const result = await createDesignCache(store).get(1);
  assert.equal(result.ok, false);
  assert.equal(await store.designs.get(1, designFormat()), null);
});

test('the format names the core code: stable in one process, a digest', () => {
  assert.match(designFormat(), /^design-[0-9a-f]{24}$/);
  assert.equal(designFormat(), designFormat());
});

test('a design validated before a commit is kept only when the revision holds exactly the files validated', async (t) => {
  const { store } = await sampleStore(t);
  const files = sample.map((f) => ({ bucket: 'site', source: f.source, text: f.text }));
  const v = validateSite(files.map((f) => ({ source: `site/${f.source}`, text: f.text })));
  assert.ok(v.ok);
  await keepCommittedDesign(store, 1, files.slice(1), v.design);
  assert.equal(await store.designs.get(1, designFormat()), null, 'a file missing: another site');
  await keepCommittedDesign(
    store,
    1,
    files.map((f, i) => (i === 0 ? { ...f, text: `${f.text}\n` } : f)),
    v.design,
  );
  assert.equal(await store.designs.get(1, designFormat()), null, 'a file changed: another site');
  await keepCommittedDesign(store, 1, [...files].reverse(), v.design);
  assert.deepEqual(await decodeDesign((await store.designs.get(1, designFormat())) ?? ''), v.design, 'the same files in any order');
});
