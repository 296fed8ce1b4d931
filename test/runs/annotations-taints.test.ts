/**
 * Annotations and taints from the documents, against the real Temporal
 * server and kube-apiserver: with the labels in one patch per node, beside
 * annotations and taints others set (an administrator, the API server's
 * not-ready taint), removed exactly when the documents drop them, no write
 * on a second run; Longhorn's node configuration checked whole before any
 * node is touched; the API's run view shows the changes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_TAINTS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { LONGHORN_CREATE_DEFAULT_DISK, LONGHORN_DISKS_CONFIG, LONGHORN_NODE_TAGS } from '../../src/core/site/longhorn.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import { ActionView } from '../../src/api/http/response-schemas.ts';
import { encodeRunId } from '../../src/api/runs/run-ids.ts';
import type { RelabelError } from '../../src/facade/relabel-error.ts';
import type { NodeOutcome, RunStatusReport } from '../../src/facade/runs/runs.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { adminCore, adminKubeconfigPath, createNode, nodePatchCount, startRelabel, uniqueSuffix } from '../helpers.ts';
import { startTestApi } from '../api-support.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const DEDICATED = { key: 'example.com/dedicated', value: 'relabel', effect: 'NoSchedule' };
const BURN_IN = { key: 'example.com/burn-in', effect: 'PreferNoSchedule' };
const THEIR_TAINT = { key: 'ops.example.com/hold', value: 'audit', effect: 'NoSchedule' };
const THEIR_ANNOTATION = { 'ops.example.com/ticket': 'OPS-42' };

type Doc = Record<string, any>;

/** The site with every node given two annotations and two taints of its own, then `edit`. */
function siteWith(prefix: string, edit: (doc: Doc) => void = () => {}) {
  return prefixedSite(prefix, (doc) => {
    if (doc.schema === 'drydock/BaremetalNode/v1') {
      const metadata = doc.data.metadata;
      metadata.annotations = { ...metadata.annotations, 'example.com/asset-tag': `asset-${doc.metadata.name}`, 'example.com/rack-slot': 'u12' };
      metadata.taints = [...(metadata.taints ?? []), DEDICATED, BURN_IN];
    }
    edit(doc);
  });
}

function designOf(files: { source: string; text: string }[]): Design {
  const v = validateSite(files);
  assert.ok(v.ok, v.ok ? '' : JSON.stringify(v.errors.slice(0, 3)));
  return v.design;
}

/** Drops one annotation and one taint of the documents' from every node. */
function drop(doc: Doc): void {
  if (doc.schema !== 'drydock/BaremetalNode/v1') return;
  delete doc.data.metadata.annotations['example.com/rack-slot'];
  doc.data.metadata.taints = doc.data.metadata.taints.filter((t: { key: string }) => t.key !== BURN_IN.key);
}

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? null)) as T;

describe('annotations and taints managed with labels', () => {
  const prefix = `at${uniqueSuffix()}`;
  const site = siteWith(prefix);
  const [first, second] = site.nodes as [string, string];
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  let removal: RunStatusReport | undefined;
  const taintsAtCreation = new Map<string, { key: string }[]>();

  async function run(files?: { source: string; text: string }[]): Promise<{ done: RunStatusReport; patches: number; outcomes: NodeOutcome[] }> {
    if (files) {
      await relabel.store.revisions.stage('site', files);
      await relabel.store.revisions.commit({ message: 'documents changed' });
    }
    const before = await nodePatchCount();
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    const outcomes = (await relabel.runs.nodes(done.result?.run ?? 0, { limit: 5000 })).items;
    return { done, patches: (await nodePatchCount()) - before, outcomes };
  }

  before(async () => {
    ({ url: storeUrl } = await storeWithSite(site.files));
    relabel = await startRelabel(storeUrl);
    const core = adminCore();
    for (const name of site.nodes) {
      const created = await createNode(core, name);
      taintsAtCreation.set(name, plain(created.spec?.taints ?? []));
    }
    // An administrator's own annotation and taint (the taint list is written whole, as kubectl does).
    const admin = createNodeApi(loadKubeConfig(adminKubeconfigPath()));
    const current = (await core.readNode({ name: first })).spec?.taints ?? [];
    await admin.patchNode(first, { metadata: { annotations: THEIR_ANNOTATION }, spec: { taints: [...plain(current), THEIR_TAINT] } });
  });
  after(async () => relabel.stop());

  it('applies labels, annotations and taints to every node in one patch each, keeping everyone else’s', async () => {
    const design = designOf(site.files);
    assert.ok(site.nodes.length >= 20);
    const notReady = [...taintsAtCreation.values()].every((taints) => taints.some((t) => t.key === 'node.kubernetes.io/not-ready'));
    assert.ok(notReady, 'the API server gives every new node its not-ready taint');
    const { done, patches, outcomes } = await run();
    assert.equal(done.result?.counts.written, site.nodes.length);
    assert.equal(patches, site.nodes.length, 'one PATCH per node, as counted by the API server');
    for (const name of site.nodes) {
      const node = await adminCore().readNode({ name });
      const want = design.nodes[name];
      assert.ok(want);
      for (const [key, value] of Object.entries(want.labels)) assert.equal(node.metadata?.labels?.[key], value, `${name} label ${key}`);
      for (const [key, value] of Object.entries(want.annotations)) assert.equal(node.metadata?.annotations?.[key], value, `${name} annotation ${key}`);
      assert.equal(node.metadata?.annotations?.[OWNED_ANNOTATIONS_ANNOTATION], Object.keys(want.annotations).sort().join(','));
      assert.equal(
        node.metadata?.annotations?.[OWNED_TAINTS_ANNOTATION],
        want.taints
          .map((t) => `${t.key}:${t.effect}`)
          .sort()
          .join(','),
      );
      const theirs = [...(taintsAtCreation.get(name) ?? []), ...(name === first ? [THEIR_TAINT] : [])];
      assert.deepEqual(plain(node.spec?.taints), [...theirs, ...want.taints], `taints of ${name}`);
      if (name === first) assert.equal(node.metadata?.annotations?.['ops.example.com/ticket'], 'OPS-42');
    }
    const one = outcomes.find((o) => o.node === second);
    assert.deepEqual(one?.annotations?.set, Object.keys(design.nodes[second]?.annotations ?? {}));
    assert.deepEqual(one?.taints?.added, ['example.com/burn-in:PreferNoSchedule', 'example.com/dedicated=relabel:NoSchedule']);
  });

  it('writes nothing when run again at once', async () => {
    const { done, patches } = await run();
    assert.equal(done.result?.counts.written, 0);
    assert.equal(patches, 0);
  });

  it('removes exactly the annotation and the taint dropped from the documents, and nothing of anyone else', async () => {
    const dropped = siteWith(prefix, drop);
    const design = designOf(dropped.files);
    const before = new Map(await Promise.all(site.nodes.map(async (name) => [name, await adminCore().readNode({ name })] as const)));
    const { done, patches, outcomes } = await run(dropped.files);
    removal = done;
    assert.equal(patches, site.nodes.length);
    for (const name of site.nodes) {
      const node = await adminCore().readNode({ name });
      const was = before.get(name);
      const expectedAnnotations = { ...was?.metadata?.annotations };
      delete expectedAnnotations['example.com/rack-slot'];
      const want = design.nodes[name];
      expectedAnnotations[OWNED_ANNOTATIONS_ANNOTATION] = Object.keys(want?.annotations ?? {})
        .sort()
        .join(',');
      expectedAnnotations[OWNED_TAINTS_ANNOTATION] = (want?.taints ?? [])
        .map((t) => `${t.key}:${t.effect}`)
        .sort()
        .join(',');
      const { 'relabel.airshipit.org/applied': _a, ...after } = node.metadata?.annotations ?? {};
      delete expectedAnnotations['relabel.airshipit.org/applied'];
      assert.deepEqual(after, expectedAnnotations, `annotations of ${name}`);
      assert.deepEqual(
        plain(node.spec?.taints),
        plain(was?.spec?.taints ?? []).filter((t: { key: string }) => t.key !== BURN_IN.key),
        `taints of ${name}`,
      );
      assert.deepEqual(node.metadata?.labels, was?.metadata?.labels, `labels of ${name}`);
    }
    const one = outcomes.find((o) => o.node === first);
    assert.deepEqual(one?.annotations, { set: [], removed: ['example.com/rack-slot'] });
    assert.deepEqual(one?.taints, { added: [], removed: ['example.com/burn-in:PreferNoSchedule'] });
  });

  it('shows annotation and taint changes in the API run view', async () => {
    assert.ok(removal);
    const api = await startTestApi({ storeUrl, taskQueue: relabel.taskQueue });
    try {
      const answer = await api.call('GET', `/api/v1.0/actions/${encodeRunId({ workflowId: removal.workflowId, runId: removal.runId })}`);
      assert.equal(answer.status, 200, answer.text);
      const view = ActionView.parse(answer.json);
      const node = view.node_results.find((n) => n.node === first);
      assert.deepEqual(node?.annotations, { set: [], removed: ['example.com/rack-slot'] });
      assert.deepEqual(node?.taints, { added: [], removed: ['example.com/burn-in:PreferNoSchedule'] });
    } finally {
      await api.close();
    }
  });

  it("Longhorn's test plan: valid tags and disks land as written; the invalid example is refused whole, naming every defect; the corrected one applies", async () => {
    const disks =
      '[{"path":"/var/lib/longhorn/disk1","allowScheduling":false},{"path":"/var/lib/longhorn/disk2","allowScheduling":true,"storageReserved":1024,"tags":["ssd","fast"]}]';
    const longhorn = (target: string, annotations: Record<string, string>) => (doc: Doc) => {
      if (doc.schema !== 'drydock/BaremetalNode/v1' || doc.metadata.name !== target) return;
      doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, [LONGHORN_CREATE_DEFAULT_DISK]: 'config' };
      doc.data.metadata.annotations = { ...doc.data.metadata.annotations, ...annotations };
    };
    const valid = { [LONGHORN_DISKS_CONFIG]: disks, [LONGHORN_NODE_TAGS]: '["fast","storage"]' };
    const { patches } = await run(
      siteWith(prefix, (doc) => {
        drop(doc);
        longhorn(first, valid)(doc);
      }).files,
    );
    assert.equal(patches, 1);
    const landed = (await adminCore().readNode({ name: first })).metadata;
    assert.equal(landed?.labels?.[LONGHORN_CREATE_DEFAULT_DISK], 'config');
    assert.equal(landed?.annotations?.[LONGHORN_DISKS_CONFIG], disks);
    assert.equal(landed?.annotations?.[LONGHORN_NODE_TAGS], '["fast","storage"]');

    const invalid = {
      [LONGHORN_DISKS_CONFIG]: '[{"path":"/var/lib/longhorn/missing","allowScheduling":false},',
      [LONGHORN_NODE_TAGS]: '["slow",".*invalid-tag"]',
    };
    const both = (doc: Doc) => {
      drop(doc);
      longhorn(first, valid)(doc);
      longhorn(second, invalid)(doc);
    };
    await relabel.store.revisions.stage('site', siteWith(prefix, both).files);
    await relabel.store.revisions.commit({ message: 'invalid Longhorn configuration' });
    const rvs = await Promise.all(site.nodes.map(async (name) => (await adminCore().readNode({ name })).metadata?.resourceVersion));
    const beforePatches = await nodePatchCount();
    await assert.rejects(relabel.runs.start({ targets: site.nodes }), (e: RelabelError) => {
      assert.equal(e.type, 'DocumentValidationFailed');
      assert.match(e.message, /3 document error/);
      assert.match(
        e.message,
        new RegExp(`"node\\.longhorn\\.io/default-node-tags": tags\\[1\\]: tag "\\.\\*invalid-tag" is not a valid Longhorn tag.* on node "${second}"`),
      );
      assert.match(e.message, new RegExp(`"node\\.longhorn\\.io/default-disks-config": is not valid JSON .* on node "${second}"`));
      assert.match(e.message, new RegExp(`"node\\.longhorn\\.io/create-default-disk": is "config" but the node has an invalid .* on node "${second}"`));
      return true;
    });
    assert.equal((await nodePatchCount()) - beforePatches, 0, 'no node written');
    assert.deepEqual(await Promise.all(site.nodes.map(async (name) => (await adminCore().readNode({ name })).metadata?.resourceVersion)), rvs);

    const corrected = { [LONGHORN_DISKS_CONFIG]: '[{"path":"/var/lib/longhorn/data","allowScheduling":false}]', [LONGHORN_NODE_TAGS]: '["slow","storage"]' };
    const fixed = await run(
      siteWith(prefix, (doc) => {
        drop(doc);
        longhorn(first, valid)(doc);
        longhorn(second, corrected)(doc);
      }).files,
    );
    assert.equal(fixed.patches, 1);
    const applied = (await adminCore().readNode({ name: second })).metadata;
    assert.equal(applied?.annotations?.[LONGHORN_DISKS_CONFIG], corrected[LONGHORN_DISKS_CONFIG]);
    assert.equal(applied?.annotations?.[LONGHORN_NODE_TAGS], '["slow","storage"]');
    assert.equal(applied?.labels?.[LONGHORN_CREATE_DEFAULT_DISK], 'config');
  });
});
