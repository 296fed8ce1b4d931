/**
 * Nodes that leave management, against the real Temporal server and
 * kube-apiserver: after real update runs, a node set member whose selector
 * label is changed (as `kubectl label` would) to a value no set matches,
 * and a BaremetalNode taken out of the documents, are each reported
 * `orphaned` with the set or revision they were last written at, and a
 * member moved to another set `moved`, not drifted; under the policy's
 * default `keep` nothing is written (resourceVersions unchanged).
 * Under `orphans: release`, the next detection starts one release run that
 * takes back exactly relabel's labels, annotations, taints and records,
 * everyone else's keys left byte for byte; the run is audited (via
 * release) and listed by `relabel runs`. `relabel release --nodes` does the
 * same on demand, and refuses, writing nothing, a node it does not know or
 * one a BaremetalNode still names.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION, RECORD_ANNOTATIONS } from '../../src/core/plan/constants.ts';
import { readAppliedRun } from '../../src/core/plan/applied-run.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createDrift } from '../../src/facade/drift.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import type { SourceFile } from '../../src/store/revisions/revision-store.ts';
import { eventually } from '../api-support.ts';
import { adminCore, adminKubeconfigPath, createNode, exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { nodeSetDoc, prefixedSite, storeWithSite } from '../site.ts';

type Doc = Record<string, any>;
const POOL_KEY = 'karpenter.sh/nodepool';

/** `files` without the BaremetalNode `name`. */
function without(files: SourceFile[], name: string): SourceFile[] {
  return files.map(({ source, text }) => ({
    source,
    text: text
      .split(/^---\n/m)
      .filter((chunk) => chunk.trim() !== '' && (JSON.parse(chunk) as Doc).metadata?.name !== name)
      .map((chunk) => `---\n${chunk}`)
      .join(''),
  }));
}

/** What relabel's records say it owns on `node`: the keys of its labels, annotations and taints (`key:effect`). */
function owned(node: V1Node) {
  const list = (key: string) => (node.metadata?.annotations?.[key] ?? '').split(',').filter((k) => k !== '');
  return { labels: list(OWNED_LABELS_ANNOTATION), annotations: list(OWNED_ANNOTATIONS_ANNOTATION), taints: list(OWNED_TAINTS_ANNOTATION) };
}

/** `node` as it is with everything relabel's records name taken away: what a release must leave. */
function othersOf(node: V1Node) {
  const own = owned(node);
  const drop = (map: Record<string, string> | undefined, keys: readonly string[]) =>
    Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => !keys.includes(k)));
  return {
    labels: drop(node.metadata?.labels, own.labels),
    annotations: drop(node.metadata?.annotations, [...own.annotations, ...RECORD_ANNOTATIONS]),
    taints: (node.spec?.taints ?? []).filter((t) => !own.taints.includes(`${t.key}:${t.effect}`)),
  };
}

const shape = (node: V1Node) => ({ labels: node.metadata?.labels ?? {}, annotations: node.metadata?.annotations ?? {}, taints: node.spec?.taints ?? [] });

describe('nodes that leave management: orphaned, kept, released', () => {
  const prefix = `or${uniqueSuffix()}`;
  const siteName = `${prefix}-site`;
  const pool = `${prefix}-pool`;
  const base = prefixedSite(prefix);
  const wanted = validateSite(base.files);
  assert.ok(wanted.ok);
  // A storage node: it carries annotations and a taint from its profile as well as labels.
  const gone = base.nodes.find((n) => (wanted.design.nodes[n]?.taints.length ?? 0) > 0) as string;
  const kept = base.nodes.find((n) => n !== gone) as string;
  const [m1, m2, m3] = [`${prefix}-pool-a`, `${prefix}-pool-b`, `${prefix}-pool-c`];
  const theirs = {
    label: ['example.org/team', 'a'],
    annotation: ['example.org/owner', '{"who": "ops", "n": 1}'],
    taint: { key: 'example.org/theirs', effect: 'NoExecute' },
  };
  /** The site with its node set; `gone` left out from revision 2 on; `release` sets the policy's orphans. */
  const files = (withGone: boolean, release = false): SourceFile[] => {
    const site = prefixedSite(prefix, (doc) => {
      if (release && doc.schema === 'relabel/LabelPolicy/v1') doc.data.drift = { action: 'report', orphans: 'release' };
    }).files;
    return [
      ...(withGone ? site : without(site, gone)),
      {
        source: 'node-sets.yaml',
        text:
          nodeSetDoc('pool', { selector: { matchLabels: { [POOL_KEY]: pool } }, metadata: { owner_data: { 'workload-class': 'batch' } } }) +
          nodeSetDoc('gpu', { selector: { matchLabels: { [POOL_KEY]: `${prefix}-gpu` } }, metadata: { owner_data: { 'workload-class': 'gpu' } } }),
      },
    ];
  };
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  let drift: ReturnType<typeof createDrift>;
  const env = () => ({ RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue });
  const read = (name: string) => adminCore().readNode({ name });
  const commit = async (next: SourceFile[], message: string) => {
    await relabel.store.revisions.stage('site', next);
    return (await relabel.store.revisions.commit({ message })).id;
  };
  const admin = () => createNodeApi(loadKubeConfig(adminKubeconfigPath()));
  /** Gives `name` a label, an annotation and a taint of someone else's. */
  const addTheirs = async (name: string) => {
    const node = await read(name);
    await admin().patchNode(name, {
      metadata: { labels: { [theirs.label[0] as string]: theirs.label[1] }, annotations: { [theirs.annotation[0] as string]: theirs.annotation[1] } },
      spec: { taints: [...(node.spec?.taints ?? []), theirs.taint] },
    });
  };

  before(async () => {
    ({ url: storeUrl } = await storeWithSite(files(true)));
    relabel = await startRelabel(storeUrl);
    drift = createDrift({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    const core = adminCore();
    for (const name of [gone, kept]) await createNode(core, name);
    for (const name of [m1, m2, m3]) await createNode(core, name, { [POOL_KEY]: pool });
    // One run of the site at a time: the named nodes, then the set's members.
    for (const options of [{ targets: [gone, kept] }, { targets: undefined, select: { nodeSets: ['pool'] } }]) {
      const done = await relabel.runs.wait(await relabel.runs.start(options));
      assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    }
    for (const name of [gone, m1, m2]) await addTheirs(name);
  });
  after(async () => {
    await relabel?.stop();
  });

  it('reports the member whose selector label matches no set and the BaremetalNode taken out as orphaned; with keep, writes nothing', async () => {
    const goneNode = await read(gone);
    assert.ok(owned(goneNode).annotations.length > 0 && owned(goneNode).taints.length > 0, 'the storage node carries owned annotations and taints');
    assert.deepEqual(readAppliedRun((await read(m1)).metadata?.annotations ?? {}), { revision: 1, run: 2, site: siteName, set: 'pool' });
    await admin().patchNode(m1, { metadata: { labels: { [POOL_KEY]: `${prefix}-retired` } } });
    // m3 moves to the other set: as its own set wants, not drifted.
    await admin().patchNode(m3, { metadata: { labels: { [POOL_KEY]: `${prefix}-gpu` } } });
    assert.equal(await commit(files(false), `${gone} taken out`), 2);
    const versions = async () => Promise.all([gone, m1, m2, m3, kept].map(async (n) => (await read(n)).metadata?.resourceVersion));
    const before = await versions();

    const run = exits(await relabelCli(['drift', '--site', siteName, '--state', 'drifted,moved,orphaned', '-o', 'json'], env(), { timeoutMs: 120_000 }), 0);
    const { report, nodes: page } = JSON.parse(run.stdout);
    assert.deepEqual([report.counts.orphaned, report.counts.moved, report.counts.drifted], [2, 1, 0], JSON.stringify(report.counts));
    assert.deepEqual(
      page.items.map((r: any) => [r.node, r.state, r.revision, r.nodeSet, r.detail.lastSet]).sort(),
      [
        [gone, 'orphaned', 1, undefined, undefined],
        [m1, 'orphaned', 1, undefined, 'pool'],
        [m3, 'moved', 1, 'gpu', 'pool'],
      ].sort(),
      'the listing shows moved and orphaned nodes',
    );
    assert.equal(report.heal, null, 'keep: no release started');
    assert.deepEqual(await versions(), before, 'keep: nothing written');
    const text = exits(await relabelCli(['drift', '--latest', '--state', 'orphaned'], env()), 0).stdout;
    assert.match(text, / 2 orphaned, /);
    assert.match(text, new RegExp(`${m1}\\s+-\\s+orphaned\\s+1\\s+last written by run 2 as node set pool`));
    const moved = exits(await relabelCli(['drift', '--latest', '--state', 'moved'], env()), 0).stdout;
    assert.match(moved, new RegExp(`${m3}\\s+gpu\\s+moved\\s+1\\s+written as node set pool; 1 key\\(s\\) to change at the latest revision`));
  });

  it("with orphans: release, one run takes back exactly relabel's labels, annotations, taints and records, others' keys byte for byte", async () => {
    const expected = new Map<string, ReturnType<typeof othersOf>>();
    for (const name of [gone, m1]) expected.set(name, othersOf(await read(name)));
    assert.equal(await commit(files(false, true), 'release orphans'), 3);
    const result = await drift.detect({ site: siteName });
    assert.equal(result.counts.orphaned, 2);
    const release = result.release?.run;
    assert.deepEqual(release && { nodes: release.nodes, status: release.status, written: release.written }, { nodes: 2, status: 'success', written: 2 });
    for (const name of [gone, m1]) {
      const after = shape(await read(name));
      assert.deepEqual(after, expected.get(name), name);
      assert.equal(after.labels[theirs.label[0] as string], theirs.label[1]);
      assert.equal(after.annotations[theirs.annotation[0] as string], theirs.annotation[1], 'byte for byte');
      assert.ok(after.taints.some((t) => t.key === theirs.taint.key));
      for (const record of RECORD_ANNOTATIONS) assert.equal(after.annotations[record], undefined, `${name}: ${record}`);
    }
    // Audited, a numbered run like any other, and listed.
    const status = await relabel.runs.status(release?.workflowId ?? '', release?.runId);
    assert.equal(status.workflowId, `update-labels/${siteName}`);
    assert.equal(status.action, 'release_nodes');
    assert.deepEqual([status.startedBy, status.startedVia], [`workflow:relabel-drift/${siteName}`, 'release']);
    const listed = await eventually(
      async () => JSON.parse(exits(await relabelCli(['runs', '--site', siteName, '-o', 'json'], env()), 0).stdout) as { run?: number; startedVia?: string }[],
      (rows) => rows.some((r) => r.run === release?.run),
      30_000,
      500,
    );
    assert.equal(listed.find((r) => r.run === release?.run)?.startedVia, 'release');
    const shown = exits(await relabelCli(['drift', '--report', String(result.report)], env()), 0).stdout;
    assert.match(shown, new RegExp(`\\nrelease: run ${release?.run} \\(update-labels/${siteName}\\), 2 node\\(s\\): success, 2 written\\n`));
    assert.doesNotMatch(shown, /heal:/, 'no heal section when nothing was healed');
    const again = await drift.detect();
    assert.equal(again.counts.orphaned, 0, 'released nodes are nobody’s');
    assert.equal(again.release, undefined);
  });

  it('relabel release --nodes: refuses an unknown node or one the design names, writing nothing; releases an orphan on demand', async () => {
    const version = async (name: string) => (await read(name)).metadata?.resourceVersion;
    const [keptBefore, m2Before] = [await version(kept), await version(m2)];
    const ghost = `${prefix}-ghost`;
    const refused = exits(await relabelCli(['release', '--nodes', `${m2},${ghost},${kept}`], env(), { timeoutMs: 120_000 }), 2);
    assert.match(refused.stdout + refused.stderr, new RegExp(`node ${ghost} is not in the cluster`));
    assert.match(refused.stdout + refused.stderr, new RegExp(`node ${kept} is named by a BaremetalNode`));
    assert.deepEqual([await version(kept), await version(m2)], [keptBefore, m2Before], 'nothing written');
    exits(await relabelCli(['release', '--nodes', 'Not_A_Node'], env()), 2);

    // m2 leaves its set too; the policy's release would take it at the next detection, the operator does it now.
    await admin().patchNode(m2, { metadata: { labels: { [POOL_KEY]: `${prefix}-retired` } } });
    const expected = othersOf(await read(m2));
    const done = JSON.parse(exits(await relabelCli(['release', '--nodes', m2, '-o', 'json'], env(), { timeoutMs: 120_000 }), 0).stdout);
    assert.equal(done.result.status, 'success', JSON.stringify(done.result));
    assert.equal(done.result.counts.written, 1);
    assert.deepEqual(shape(await read(m2)), expected);
    const stored = await relabel.store.runs.get(done.result.run);
    assert.deepEqual([stored.startedBy, stored.startedVia], [userInfo().username, 'release']);
  });
});
