import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FailureType } from '../../core/plan/failure-types.ts';
import { formatError, type SiteError } from '../../core/plan/site-error.ts';
import { nodeSetDoc, profileDoc, source } from '../../../test/kit/site/documents.ts';
import { RelabelError } from '../relabel-error.ts';
import { withDocuments } from '../../../test/kit/site/document-store.ts';

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

const compute = source('profiles.yaml', profileDoc('compute', '  metadata:\n    owner_data:\n      workload-class: web'));
const selecting = (key: string) => source('sets.yaml', nodeSetDoc('md', `  selector:\n    matchLabels: {${JSON.stringify(key)}: a}`));
const owned =
  /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "md" data\.selector\.matchLabels\["?workload-class"?\]: selector reads label "workload-class", which relabel owns \(set by drydock\/HostProfile\/v1 "compute"\)/;

describe('documents facade: staging refuses a node set selecting on a label relabel owns', () => {
  it('against the committed site, the buffer, and in the staged bucket itself; nothing staged', () =>
    withDocuments(async (documents) => {
      await documents.stage('profiles', [compute]);
      // The profile is only staged: the site the bucket would make holds it.
      const refused = await refusal(documents.stage('sets', [selecting('workload-class')]));
      assert.equal(refused.length, 1, refused.join('\n'));
      assert.match(refused[0] ?? '', owned);
      await documents.commit({ message: 'profiles' });
      assert.match((await refusal(documents.stage('sets', [selecting('workload-class')])))[0] ?? '', owned, 'and once committed');
      const inOne = await refusal(
        documents.stage('sets', [
          source('sets.yaml', nodeSetDoc('md', '  selector:\n    matchLabels: {example.com/x: a}\n  metadata:\n    owner_data:\n      example.com/x: b')),
        ]),
      );
      assert.match(
        inOne[0] ?? '',
        /"md" data\.selector\.matchLabels\["example\.com\/x"\]: selector reads label "example\.com\/x", which relabel owns \(set by relabel\/NodeSet\/v1 "md"\)/,
      );
      assert.match((await refusal(documents.stage('sets', [selecting('relabel.airshipit.org/rack')])))[0] ?? '', /in the label domain/);
      assert.deepEqual(await documents.buffer(), [], 'nothing staged');
      await documents.stage('sets', [selecting('zone')]);
      assert.deepEqual(
        (await documents.buffer()).map((b) => b.bucket),
        ['sets'],
        'a selector on a label nobody of the site sets is staged',
      );
    }));

  it('refuses a bucket that makes a staged selector read what it now sets, through the Shipyard API too', () =>
    withDocuments(async (documents) => {
      await documents.stage('sets', [selecting('workload-class')]);
      const refused = await refusal(documents.stage('profiles', [compute]));
      assert.match(refused[0] ?? '', owned, 'the error is at the selector, in another bucket');
      assert.match((await refusal(documents.configdocs.stage('profiles', [compute], 'append')))[0] ?? '', owned);
      assert.deepEqual(
        (await documents.buffer()).map((b) => b.bucket),
        ['sets'],
      );
      // Replacing the buffer drops the staged set: the profile alone is fine.
      await documents.configdocs.stage('profiles', [compute], 'replace');
      assert.deepEqual(
        (await documents.buffer()).map((b) => b.bucket),
        ['profiles'],
      );
    }));

  it('warns at staging, commit and its dry run of a selector on a label Cluster API keeps on Machines only, refusing nothing', () =>
    withDocuments(async (documents) => {
      const staged = await documents.stage('sets', [selecting('cluster.x-k8s.io/deployment-name')]);
      assert.equal(staged.warnings.length, 1);
      const expected =
        /^sets\/sets\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "md" data\.selector\.matchLabels\["cluster\.x-k8s\.io\/deployment-name"\]: selector reads label "cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/;
      assert.match(formatError(staged.warnings[0] as SiteError), expected);
      const dryRun = await documents.checkCommit();
      assert.deepEqual([dryRun.errors, dryRun.warnings.map(formatError).length], [[], 1]);
      const committed = await documents.commit({ message: 'sets' });
      assert.deepEqual([committed.revision.id, committed.forced, committed.warnings.length], [1, 0, 1]);
      assert.match(formatError(committed.warnings[0] as SiteError), expected);
      const fixed = await documents.stage('sets', [selecting('node.cluster.x-k8s.io/deployment')]);
      assert.deepEqual(fixed.warnings, [], 'a node.cluster.x-k8s.io label is on the Node');
    }));
});
