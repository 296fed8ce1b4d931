import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FailureType } from '../../core/plan/failure-types.ts';
import { formatError, type SiteError } from '../../core/plan/site-error.ts';
import { nodeDoc, nodeSetDoc, profileDoc, source } from '../../../test/kit/site/documents.ts';
import { designFormat } from '../../store/designs/design-format.ts';
import { createDesignCache, decodeDesign } from '../../store/designs/design-cache.ts';
import { openStore } from '../../store/open-store.ts';
import { createDocuments } from './documents.ts';
import { RelabelError } from '../relabel-error.ts';
import { withDocuments } from '../../../test/kit/site/document-store.ts';

const profiles = [source('profiles.yaml', profileDoc('base', ''), profileDoc('compute', '  host_profile: base'))];
const nodes = [source('nodes.yaml', nodeDoc('n1', '  host_profile: compute'))];
const dangling =
  'nodes/nodes.yaml:7:17 drydock/BaremetalNode/v1 "n1" data.host_profile: host profile "compute" is not defined (no drydock/HostProfile/v1 document named "compute")';

/** The errors a facade call was refused with (DocumentValidationFailed), formatted. */
async function refusal(call: Promise<unknown>): Promise<string[]> {
  const err = await call.then(
    () => assert.fail('expected DocumentValidationFailed'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RelabelError, String(err));
  assert.equal(err.type, FailureType.DocumentValidationFailed, err.message);
  return (err.details as SiteError[]).map(formatError);
}

describe('documents facade: stage checks each document, commit the whole site', () => {
  it('stages a bucket referring to another not yet staged; commit refuses until both are, keeping the buffer', () =>
    withDocuments(async (documents) => {
      await documents.stage('nodes', nodes);
      assert.deepEqual(await refusal(documents.commit({ message: 'half' })), [dangling]);
      assert.deepEqual(await documents.list(), []);
      assert.deepEqual(
        (await documents.buffer()).map((b) => b.bucket),
        ['nodes'],
      );
      const dryRun = await documents.checkCommit();
      assert.deepEqual([dryRun.buckets, dryRun.errors.map(formatError)], [['nodes'], [dangling]]);

      await documents.stage('profiles', profiles);
      assert.deepEqual(await documents.checkCommit(), { buckets: ['nodes', 'profiles'], errors: [], warnings: [] });
      const { revision, warnings } = await documents.commit({ message: 'whole' });
      assert.deepEqual([revision.id, revision.buckets, warnings], [1, ['nodes', 'profiles'], []]);
      assert.deepEqual(await documents.buffer(), []);
    }));

  it('refuses a bucket with a per-document error, listing each, staging nothing', () =>
    withDocuments(async (documents) => {
      const errors = await refusal(
        documents.stage('nodes', [...nodes, source('bad.yaml', nodeDoc('n2', '  metadata:\n    rack: 42')), source('worse.yaml', 'a: [1\n')]),
      );
      assert.deepEqual(errors, [
        'nodes/bad.yaml:8:11 drydock/BaremetalNode/v1 "n2" data.metadata.rack: rack must be a string',
        'nodes/worse.yaml:2:1 document 1: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ]);
      assert.deepEqual(await documents.buffer(), []);
    }));

  it('refuses node sets with a malformed selector or an unknown operator at staging, naming document and field; a missing host profile at commit', () =>
    withDocuments(async (documents) => {
      await documents.stage('profiles', profiles);
      await documents.commit({ message: 'profiles' });
      const bad = source(
        'sets.yaml',
        nodeSetDoc('bad-op', '  selector:\n    matchExpressions:\n      - {key: zone, operator: Gt, values: ["1"]}'),
        nodeSetDoc('no-values', '  selector:\n    matchExpressions:\n      - {key: zone, operator: In}'),
        nodeSetDoc('bad-key', '  selector:\n    matchLabels: {"-zone": a}'),
      );
      const errors = await refusal(documents.stage('sets', [bad]));
      assert.equal(errors.length, 3, errors.join('\n'));
      assert.match(
        errors[0] ?? '',
        /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "bad-op" data\.selector\.matchExpressions\[0\]\.operator: unknown operator "Gt"/,
      );
      assert.match(
        errors[1] ?? '',
        /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "no-values" data\.selector\.matchExpressions\[0\]\.operator: operator In needs at least one value/,
      );
      assert.match(errors[2] ?? '', /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "bad-key" data\.selector\.matchLabels\["-zone"\]: Invalid value: "-zone"/);
      assert.deepEqual(await documents.buffer(), [], 'nothing staged');
      // A host profile lives in another bucket, so staging cannot tell it is missing: the commit does, committing nothing.
      await documents.stage('sets', [source('sets.yaml', nodeSetDoc('no-profile', '  selector:\n    matchLabels: {zone: a}\n  host_profile: missing'))]);
      const refused = await refusal(documents.commit({ message: 'sets' }));
      assert.equal(refused.length, 1, refused.join('\n'));
      assert.match(refused[0] ?? '', /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "no-profile" data\.host_profile: host profile "missing" is not defined/);
      assert.deepEqual(
        (await documents.list()).map((r) => r.id),
        [1],
        'nothing committed',
      );
    }));

  it('commits an invalid site with force, returning its errors as warnings; the next commit still sees them', () =>
    withDocuments(async (documents) => {
      await documents.stage('nodes', nodes);
      const forced = await documents.commit({ message: 'forced', force: true });
      assert.equal(forced.revision.id, 1);
      assert.deepEqual(forced.warnings.map(formatError), [dangling]);
      assert.deepEqual((await documents.rendered(1)).validation.ok, false);

      await documents.stage('other', [source('x.yaml', profileDoc('unrelated', ''))]);
      assert.deepEqual(await refusal(documents.commit()), [dangling], 'the committed bucket is part of the site validated');
      assert.deepEqual(await documents.discard(), ['other']);
      await assert.rejects(documents.checkCommit(), (e: unknown) => e instanceof RelabelError && e.type === FailureType.EmptyBuffer);
    }));

  it('keeps the design it validated with the revision it commits, so no process validates that revision again', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      const remembered: number[] = [];
      const documents = createDocuments(store, { remember: (r) => void remembered.push(r) });
      await documents.stage('profiles', profiles);
      await documents.stage('nodes', nodes);
      const { revision } = await documents.commit();
      assert.deepEqual(remembered, [revision.id], "the facade's own cache is told the design");
      const stored = await store.designs.get(revision.id, designFormat());
      assert.ok(stored, 'the design is stored at commit');
      const design = await decodeDesign(stored);
      assert.deepEqual(Object.keys(design.nodes), ['n1']);
      const read = store.revisions.documents.bind(store.revisions);
      let reads = 0;
      store.revisions.documents = (id) => (reads++, read(id));
      assert.deepEqual(await createDesignCache(store).get(revision.id), { ok: true, design });
      assert.equal(reads, 0, 'the design was read back, not validated');

      await documents.stage('nodes', [source('nodes.yaml', nodeDoc('n2', '  host_profile: missing'))]);
      const forced = await documents.commit({ force: true });
      assert.equal(await store.designs.get(forced.revision.id, designFormat()), null, 'an invalid site keeps no design');
      assert.deepEqual(remembered, [revision.id]);
    } finally {
      await store.close();
    }
  });
});
