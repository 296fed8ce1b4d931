import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FailureType } from '../../core/plan/failure-types.ts';
import { nodeDoc, profileDoc, source } from '../../../test/kit/site/documents.ts';
import { SiteActionTag } from '../../store/revisions/revision-store.ts';
import { RelabelError } from '../relabel-error.ts';
import { withDocuments } from '../../../test/kit/site/document-store.ts';

const profiles = [source('profiles.yaml', profileDoc('base', ''))];
const nodes = [source('nodes.yaml', nodeDoc('n1', '  host_profile: base'))];
const nodes2 = [source('nodes.yaml', nodeDoc('n1', '  host_profile: base'), nodeDoc('n2', '  host_profile: base'))];

/** The failure type a call was refused with. */
async function refusedWith(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof RelabelError, String(err));
  return err.type;
}

const statuses = (list: { collection_name: string; base_status: string; new_status: string }[]) =>
  list.map((c) => [c.collection_name, c.base_status, c.new_status]);

describe("configdocs facade: Shipyard's versions, collection status and buffer modes", () => {
  it('compares committed with buffer per collection: created, modified, deleted, unmodified', () =>
    withDocuments(async (documents) => {
      const { configdocs } = documents;
      assert.equal(await refusedWith(configdocs.documentsOf('buffer')), FailureType.RevisionNotFound, 'nothing committed or staged');
      assert.deepEqual(await configdocs.status(), []);
      await configdocs.stage('profiles', profiles, 'rejectoncontents');
      assert.equal(await refusedWith(configdocs.stage('nodes', nodes, 'rejectoncontents')), FailureType.Conflict, 'the buffer holds a change');
      assert.equal(await configdocs.stage('nodes', nodes, 'append'), 'created');
      assert.equal(await refusedWith(configdocs.stage('nodes', nodes2, 'append')), FailureType.Conflict, 'the collection is already in the buffer');
      const before = await configdocs.status();
      assert.deepEqual(statuses(before), [
        ['nodes', 'not present', 'created'],
        ['profiles', 'not present', 'created'],
      ]);
      assert.deepEqual([before[0]?.base_version, before[0]?.base_revision, before[0]?.new_version, before[0]?.new_revision], ['committed', 0, 'buffer', null]);
      await documents.commit();
      assert.equal(await configdocs.hasChanges(), false);
      assert.deepEqual(statuses(await configdocs.status(['buffer', 'committed'])), [
        ['nodes', 'present', 'unmodified'],
        ['profiles', 'present', 'unmodified'],
      ]);
      assert.equal(await refusedWith(configdocs.stage('nodes', nodes, 'replace')), FailureType.Invalid, 'the same documents as committed add nothing');
      assert.deepEqual(await documents.buffer(), [], 'nothing staged by a refusal');

      await configdocs.stage('nodes', nodes2, 'rejectoncontents');
      await configdocs.stage('profiles', null, 'append');
      const after = await configdocs.status();
      assert.deepEqual(statuses(after), [
        ['nodes', 'present', 'modified'],
        ['profiles', 'present', 'deleted'],
      ]);
      assert.equal(after[0]?.base_revision, 1);
      // replace empties the buffer first: only the new collection stays staged.
      assert.equal(await configdocs.stage('extra', profiles, 'replace'), 'created');
      assert.deepEqual(
        (await documents.buffer()).map((b) => b.bucket),
        ['extra'],
      );
      // As Shipyard, append refuses a collection the buffer already changes, even to empty it.
      assert.equal(await refusedWith(configdocs.stage('extra', null, 'append')), FailureType.Conflict);
      // Emptying a collection only in the buffer leaves it as the committed site has it: absent.
      assert.equal(await configdocs.stage('extra', null, 'bucket'), 'unmodified');
      assert.equal(await configdocs.hasChanges(), false);
    }));

  it('names versions as Shipyard: site actions, committed, buffer; a missing site action is RevisionNotFound', () =>
    withDocuments(async (documents) => {
      const { configdocs } = documents;
      await configdocs.stage('profiles', profiles, 'rejectoncontents');
      await configdocs.stage('nodes', nodes, 'append');
      const first = (await documents.commit()).revision;
      assert.equal(await refusedWith(configdocs.status(['committed', 'successful_site_action'])), FailureType.RevisionNotFound);
      assert.equal(await refusedWith(configdocs.documentsOf('last_site_action')), FailureType.RevisionNotFound);
      await documents.tag(first.id, SiteActionTag.failure);
      assert.equal((await configdocs.documentsOf('last_site_action')).revision, first.id);
      assert.equal(await refusedWith(configdocs.documentsOf('successful_site_action')), FailureType.RevisionNotFound);
      await documents.tag(first.id, SiteActionTag.success);
      await configdocs.stage('nodes', nodes2, 'rejectoncontents');
      const buffer = await configdocs.documentsOf('buffer');
      assert.equal(buffer.revision, null, 'a buffer with changes has no revision yet');
      assert.deepEqual(
        buffer.files.map((f) => f.bucket),
        ['nodes', 'profiles'],
        'the committed site with the staged bucket laid over it',
      );
      // The order given does not matter: the older version is the base.
      const compared = await configdocs.status(['buffer', 'successful_site_action']);
      assert.deepEqual([compared[0]?.base_version, compared[0]?.new_version], ['successful_site_action', 'buffer']);
      assert.deepEqual(statuses(compared), [
        ['nodes', 'present', 'modified'],
        ['profiles', 'present', 'unmodified'],
      ]);
      assert.equal(await refusedWith(configdocs.status(['buffer', 'buffer'])), FailureType.Invalid);
    }));
});
