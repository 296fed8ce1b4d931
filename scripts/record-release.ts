/**
 * The recording of a drift detection that releases an orphaned node, for
 * `scripts/record-histories.ts` (`--only detect-drift-release`): two nodes
 * relabelled, one of them taken out of the documents under a policy with
 * `drift: {orphans: release}`, released by one run. Recorded last: its
 * revision leaves a node out of the design, which later recordings must not
 * meet.
 */
import type { Client } from '@temporalio/client';
import { createDrift } from '../src/facade/drift.ts';
import type { Runs } from '../src/facade/runs/runs.ts';
import type { DesignCache } from '../src/store/designs/design-cache.ts';
import type { Store } from '../src/store/store.ts';
import { prefixedSite } from '../test/site.ts';

/** The parts of a recording this one uses. */
export interface ReleaseRecording {
  store: Store;
  designs: DesignCache;
  runs: Runs;
  client: Client;
  taskQueue: string;
  present: string[];
  save(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** Records `detect-drift-release`. */
export async function recordDriftRelease(rec: ReleaseRecording): Promise<void> {
  const { store, designs, runs, client, present, taskQueue, save } = rec;
  const relabelled = present.slice(3, 5);
  const done = await runs.wait(await runs.start({ targets: relabelled }));
  if (done.result?.status !== 'success') throw new Error(`the run before the detection ended ${JSON.stringify(done.result ?? done.failure)}`);
  const gone = relabelled[0];
  const releasing = prefixedSite('rec', (doc) => {
    if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.drift = { action: 'report', orphans: 'release' };
  });
  // The first node's BaremetalNode taken out: each file's documents are `---\n<JSON>\n`.
  const files = releasing.files.map(({ source, text }) => ({
    source,
    text: text
      .split(/^---\n/m)
      .filter((doc) => doc.trim() !== '' && (JSON.parse(doc) as { metadata?: { name?: string } }).metadata?.name !== gone)
      .map((doc) => `---\n${doc}`)
      .join(''),
  }));
  await store.revisions.stage('site', files);
  await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
  const detected = await createDrift({ client, store, designs, taskQueue, namespace: 'default' }).detect({ site: 'rec-site' });
  if (detected.counts.orphaned !== 1 || detected.release?.run?.status !== 'success')
    throw new Error(`the detection should find and release one node: ${JSON.stringify(detected)}`);
  await save('detect-drift-release', detected.workflowId, detected.runId);
}
