/**
 * Node sets against the real Temporal server and kube-apiserver: nodes with
 * generated names in two fleets, labelled as Cluster API's machine
 * controller labels a MachineDeployment's Nodes (only what its
 * GetManagedLabels copies: a `node.cluster.x-k8s.io/` label of the
 * template, a node role, and the kubelet's own) and as Karpenter's NodePool
 * labels its, managed by two
 * `relabel/NodeSet/v1` documents: a run labels, annotates and taints
 * exactly the members; a revision moving a key between the sets changes
 * exactly those nodes; a node matched by both sets fails naming both while
 * the others succeed; a selector reading a key relabel owns is refused at
 * commit; a selector on the Machine-only `cluster.x-k8s.io/deployment-name`
 * draws a warning at staging and in the plan, where its set matches no
 * node; a named node a set matches too keeps `matchedSets` in its written
 * result; and the pure selector matcher agrees with the API server's
 * `labelSelector` on random selectors.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { selectorMatches, selectorString } from '../../src/core/plan/label-selector.ts';
import { labelsArb, selectorArb } from '../kit/plan/selector-arbitraries.ts';
import { formatLabelSource } from '../../src/core/site/label-provenance.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import { createDocuments } from '../../src/facade/documents/documents.ts';
import { createPlans } from '../../src/facade/plan.ts';
import { createDrift } from '../../src/facade/drift.ts';
import { createJoins } from '../../src/facade/joins.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { eventually } from '../api-support.ts';
import type { RelabelError } from '../../src/facade/relabel-error.ts';
import { adminCore, adminKubeconfigPath, createNode, exits, nodePatchCount, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { nodeSetDoc, prefixedSite, storeWithSite } from '../site.ts';

/** As a MachineDeployment's spec.template.metadata.labels sets it: the machine controller copies it to the Node. */
const MD_KEY = 'node.cluster.x-k8s.io/deployment';
/** What Cluster API keeps on the Machine only: no Node of the fleet carries it. */
const MACHINE_ONLY_KEY = 'cluster.x-k8s.io/deployment-name';
const POOL_KEY = 'karpenter.sh/nodepool';
const FLEET = 100;

/** A name as a controller generates it: `base-` and five random characters. */
const generated = (base: string) => `${base}-${Math.random().toString(36).slice(2, 7)}`;

describe('node sets', () => {
  const prefix = `ns${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const md = `${prefix}-md-0`;
  const pool = `${prefix}-general`;
  const tier = `${prefix}.example.com/tier`;
  const sets = (moved: boolean) =>
    nodeSetDoc('md', {
      selector: { matchLabels: { [MD_KEY]: md } },
      host_profile: 'compute',
      metadata: {
        owner_data: { 'workload-class': 'web', ...(moved ? {} : { [tier]: 'gold' }) },
        annotations: { 'example.com/fleet': 'cluster-api' },
        taints: [{ key: 'example.com/fleet', value: 'capi', effect: 'PreferNoSchedule' }],
      },
    }) +
    nodeSetDoc('pool', {
      selector: { matchExpressions: [{ key: POOL_KEY, operator: 'In', values: [pool] }] },
      metadata: {
        owner_data: { 'workload-class': 'batch', ...(moved ? { [tier]: 'gold' } : {}) },
        annotations: { 'example.com/fleet': 'karpenter' },
        taints: [{ key: 'example.com/spot', effect: 'NoSchedule' }],
      },
    });
  const files = (moved: boolean) => [...site.files, { source: 'node-sets.yaml', text: sets(moved) }];
  const mdNodes = Array.from({ length: FLEET }, () => generated(`${prefix}-md-0`));
  const poolNodes = Array.from({ length: FLEET }, () => generated(`${prefix}-general`));
  const loose = [generated(`${prefix}-other`), generated(`${prefix}-other`)];
  const both = generated(`${prefix}-both`);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  /** The last run over both sets (the node in both failed in it). */
  let lastSetsRun: { workflowId: string; runId: string } | undefined;

  const designOf = (moved: boolean): Design => {
    const v = validateSite(files(moved));
    assert.ok(v.ok, v.ok ? '' : JSON.stringify(v.errors.slice(0, 3)));
    return v.design;
  };
  const read = (name: string) => adminCore().readNode({ name });
  const runSets = async () => {
    const before = await nodePatchCount({ code: 200 });
    const started = await relabel.runs.start({ targets: undefined, select: { nodeSets: ['md', 'pool'] } });
    lastSetsRun = started;
    const done = await relabel.runs.wait(started);
    return { done, patches: (await nodePatchCount({ code: 200 })) - before };
  };
  /** Asserts `node` carries exactly what `set` of `design` wants (labels, annotations, taints). */
  const assertMember = (design: Design, set: string, node: V1Node) => {
    const want = design.nodeSets?.[set];
    assert.ok(want);
    const name = node.metadata?.name;
    for (const [k, v] of Object.entries(want.labels)) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
    assert.deepEqual(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION]?.split(',').sort(), Object.keys(want.labels).sort(), `${name} owns its labels`);
    for (const [k, v] of Object.entries(want.annotations)) assert.equal(node.metadata?.annotations?.[k], v, `${name} annotation ${k}`);
    for (const t of want.taints)
      assert.ok(
        node.spec?.taints?.some((x) => x.key === t.key && x.effect === t.effect && (x.value ?? undefined) === t.value),
        `${name} taint ${t.key}`,
      );
  };

  before(async () => {
    const { url } = await storeWithSite(files(false));
    storeUrl = url;
    relabel = await startRelabel(url);
    const core = adminCore();
    const create = async (names: string[], labels: Record<string, string>) => {
      for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((n) => createNode(core, n, labels)));
    };
    // Only what the machine controller copies: the template's node.cluster.x-k8s.io label and a node role.
    await create(mdNodes, { [MD_KEY]: md, 'node-role.kubernetes.io/worker': '' });
    await create(poolNodes, { [POOL_KEY]: pool, 'node.kubernetes.io/instance-type': 'm5.large' });
    await create(loose, { [POOL_KEY]: `${prefix}-other` });
    await create([both], { [MD_KEY]: md, [POOL_KEY]: pool });
  });
  after(async () => relabel.stop());

  it('a revision with two sets labels, annotates and taints exactly the members; a node in both sets fails naming both', async () => {
    const design = designOf(false);
    const { done, patches } = await runSets();
    assert.equal(done.result?.status, 'partial_success', JSON.stringify(done.result));
    assert.deepEqual(done.result?.counts, { total: 2 * FLEET + 1, success: 2 * FLEET, failure: 1, written: 2 * FLEET });
    assert.equal(patches, 2 * FLEET, 'one write per member, none elsewhere');
    const failed = done.result?.failures ?? [];
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.node, both);
    assert.equal(failed[0]?.error.type, 'NodeInTwoSets');
    assert.match(failed[0]?.error.message ?? '', /md, pool/);
    for (const name of mdNodes) assertMember(design, 'md', await read(name));
    for (const name of poolNodes) assertMember(design, 'pool', await read(name));
    for (const name of [...loose, both]) {
      const node = await read(name);
      assert.equal(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], undefined, `${name} is left alone`);
    }
  });

  it('relabel plan counts the members with their set as source', async () => {
    const plan = await createPlans(relabel.runs).plan({ targets: undefined, select: { nodeSets: ['md', 'pool'] } });
    assert.equal(plan.targets, 2 * FLEET + 1);
    const workload = plan.labels['workload-class'];
    assert.equal(workload?.desired, 2 * FLEET);
    assert.deepEqual(workload?.sources.map((s) => [formatLabelSource(s.source), s.nodes]).sort(), [
      ['node set md', FLEET],
      ['node set pool', FLEET],
    ]);
    assert.equal(plan.labels[tier]?.desired, FLEET);
    assert.equal(plan.failureTypes['NodeInTwoSets'], 1);
    assert.deepEqual(plan.nodeSets, { md: FLEET, pool: FLEET });
    // relabel plan's per-node table names each member's set.
    const env = { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const shown = exits(await relabelCli(['plan', '--node-set', 'pool', '--nodes-detail', '--limit', '5'], env, { timeoutMs: 120_000 }), 0).stdout;
    assert.match(shown, /^NODE +NODE SET +STATUS +SET +REMOVED +ADOPTED +DETAIL$/m);
    const nodeTable = (shown.split('desired labels and their sources:')[0] ?? '').split('\n');
    const rows = nodeTable.slice(nodeTable.findIndex((line) => line.startsWith('NODE ')) + 1).filter((line) => line !== '');
    assert.equal(rows.length, 5, shown);
    // A member names its set; the node in both sets is in none.
    for (const row of rows) assert.match(row, row.startsWith(`${both} `) ? /^\S+ +- +failure +.*NodeInTwoSets/ : /^\S+ +pool +success /);
    assert.ok(
      rows.some((row) => poolNodes.some((n) => row.startsWith(`${n} `))),
      shown,
    );
  });

  it('a second revision moving a key between the sets changes exactly the nodes it should', async () => {
    await relabel.store.revisions.stage('site', files(true));
    const revision = await relabel.store.revisions.commit({ message: 'tier moves from md to pool' });
    await relabel.store.revisions.tag(revision.id, 'site-action-success');
    const design = designOf(true);
    const { done, patches } = await runSets();
    assert.equal(done.result?.revision, revision.id);
    assert.deepEqual(done.result?.counts, { total: 2 * FLEET + 1, success: 2 * FLEET, failure: 1, written: 2 * FLEET });
    assert.equal(patches, 2 * FLEET);
    const outcomes = (await relabel.runs.nodes(done.result?.run ?? 0, { limit: 5000 })).items;
    for (const o of outcomes) {
      if (o.node === both) continue;
      if (mdNodes.includes(o.node)) assert.deepEqual([o.set, o.removed], [{}, [tier]], o.node);
      else assert.deepEqual([o.set, o.removed], [{ [tier]: 'gold' }, []], o.node);
    }
    for (const name of mdNodes) {
      const node = await read(name);
      assertMember(design, 'md', node);
      assert.equal(node.metadata?.labels?.[tier], undefined);
    }
    for (const name of poolNodes) assertMember(design, 'pool', await read(name));
  });

  it('drift finds set members changed behind relabel, a run naming them restores them; a retry picks up a node now in one set', async () => {
    const design = designOf(true);
    const admin = createNodeApi(loadKubeConfig(adminKubeconfigPath()));
    const [m1, p1] = [mdNodes[0] as string, poolNodes[0] as string];
    await admin.patchNode(m1, { metadata: { labels: { 'workload-class': 'other' } } });
    await admin.patchNode(p1, { metadata: { labels: { [tier]: null } } });
    const drift = createDrift({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    const found = await drift.detect({ site: `${prefix}-site` });
    assert.equal(found.counts.drifted, 2, JSON.stringify(found.counts));
    assert.deepEqual(
      found.sample
        .filter((n) => n.state === 'drifted')
        .map((n) => n.node)
        .sort(),
      [m1, p1].sort(),
    );
    assert.equal(found.counts.in_sync, 2 * FLEET - 2);
    assert.deepEqual(
      found.sample
        .filter((n) => n.state === 'drifted')
        .map((n) => [n.node, n.nodeSet])
        .sort(),
      [
        [m1, 'md'],
        [p1, 'pool'],
      ].sort(),
    );
    // The CLI lists one set's members, naming each member's set.
    const env = { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const text = exits(await relabelCli(['drift', '--latest', '--node-set', 'md'], env), 0).stdout;
    assert.match(text, new RegExp(`${m1}\\s+md\\s+drifted\\s+\\d+\\s+label workload-class changed \\(wants web, has other\\)`));
    assert.doesNotMatch(text, new RegExp(p1));
    assert.match(text, /nodes 1-1 of 1 drifted of node set md/);
    const json = JSON.parse(exits(await relabelCli(['drift', '--latest', '--node-set', 'pool', '-o', 'json'], env), 0).stdout);
    assert.deepEqual(
      [json.nodes.nodeSet, json.nodes.total, json.nodes.items.map((r: { node: string; nodeSet: string }) => [r.node, r.nodeSet])],
      ['pool', 1, [[p1, 'pool']]],
    );
    // An unknown set is refused, naming it, before any detection starts.
    const latest = await relabel.store.drift.latestReport(`${prefix}-site`);
    const refused = exits(await relabelCli(['drift', '--node-set', 'capi-md-7'], env), 2);
    assert.match(refused.stderr, /has no node set "capi-md-7" \(its node sets: md, pool\)/);
    assert.equal((await relabel.store.drift.latestReport(`${prefix}-site`))?.id, latest?.id, 'no detection started');
    const healed = await relabel.runs.wait(await relabel.runs.start({ targets: [m1, p1] }));
    assert.equal(healed.result?.status, 'success', JSON.stringify(healed.result));
    assertMember(design, 'md', await read(m1));
    assertMember(design, 'pool', await read(p1));
    // The node in both sets leaves one of them: a retry of the run it failed in labels it as the other's member.
    await admin.patchNode(both, { metadata: { labels: { [POOL_KEY]: null } } });
    assert.ok(lastSetsRun, 'the run the node failed in');
    const retried = await relabel.runs.wait(await relabel.runs.retry(lastSetsRun.workflowId, lastSetsRun.runId));
    assert.equal(retried.result?.status, 'success', JSON.stringify(retried.result));
    assert.deepEqual(retried.result?.counts, { total: 1, success: 1, failure: 0, written: 1 });
    assertMember(design, 'md', await read(both));
  });

  it('a node joining with a set’s labels is labelled as a member of that set', async () => {
    const joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    try {
      await joins.enable({ site: `${prefix}-site`, by: 'test', watch: { batchDelayMs: 50 } });
      await eventually(
        () => joins.status(`${prefix}-site`),
        (s) => s.enabled && s.watcher !== undefined,
      );
      const joining = generated(`${prefix}-general`);
      await createNode(adminCore(), joining, { [POOL_KEY]: pool }, [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
      const node = await eventually(
        () => read(joining),
        (n) => n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
        30_000,
        50,
      );
      assertMember(designOf(true), 'pool', node);
    } finally {
      await joins.disable({ site: `${prefix}-site` }).catch(() => undefined);
    }
  });

  it('the brake refuses a set over the policy bound; allowed, members roll out in waves', async () => {
    const bounded = files(true).map((f) =>
      f.source === 'policy.yaml'
        ? { ...f, text: f.text.replace('"default_concurrency": 8', '"default_concurrency": 8,\n  "max_node_set_members": 50') }
        : f.source === 'node-sets.yaml'
          ? { ...f, text: f.text.replace('"batch"', '"batch-2"') }
          : f,
    );
    await relabel.store.revisions.stage('site', bounded);
    const revision = await relabel.store.revisions.commit({ message: 'a bound on node sets; pool members change' });
    await relabel.store.revisions.tag(revision.id, 'site-action-success');
    const before = await nodePatchCount({ code: 200 });
    const refused = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['pool'] } }));
    assert.equal(refused.failure?.type, 'MassRemovalRefused', JSON.stringify(refused.failure));
    assert.match(refused.failure?.message ?? '', /node set\(s\) pool \(\d+ nodes\) match more nodes than the label policy's max_node_set_members \(50\)/);
    assert.equal((await nodePatchCount({ code: 200 })) - before, 0, 'nothing written');
    const rolled = await relabel.runs.wait(
      await relabel.runs.start({
        targets: undefined,
        select: { nodeSets: ['pool'] },
        allowMassRemoval: true,
        rollout: { by: { label: 'workload-class' }, size: { count: 40 }, healthTimeoutSeconds: 0 },
      }),
    );
    assert.equal(rolled.result?.status, 'success', JSON.stringify(rolled.result));
    assert.equal(rolled.result?.waves, 3);
    for (const name of poolNodes) assert.equal((await read(name)).metadata?.labels?.['workload-class'], 'batch-2', name);
  });

  it('refuses at staging and at commit a selector reading a key relabel owns, naming the document and key', async () => {
    const documents = createDocuments(relabel.store);
    const bad = nodeSetDoc('greedy', { selector: { matchLabels: { 'workload-class': 'web' } } });
    const refused = (err: RelabelError) => {
      assert.equal(err.type, 'DocumentValidationFailed');
      const text = `${err.message} ${JSON.stringify(err.details ?? null)}`;
      assert.match(text, /relabel\/NodeSet\/v1/);
      assert.match(text, /greedy/);
      assert.match(text, /selector reads label .{1,2}workload-class.{1,2}, which relabel owns/);
      return true;
    };
    const greedy = [...files(true), { source: 'greedy.yaml', text: bad }];
    await assert.rejects(documents.stage('site', greedy), refused);
    assert.deepEqual(await documents.buffer(), [], 'nothing staged');
    // Staged behind the facade's back, the commit still refuses it.
    await relabel.store.revisions.stage('site', greedy);
    await assert.rejects(documents.commit({ message: 'greedy' }), refused);
    await documents.discard();
  });

  it('a selector on a label Cluster API keeps on Machines warns at staging and in the plan, matching no node; a named node keeps matchedSets', async () => {
    const env = { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const dir = mkdtempSync(join(tmpdir(), 'relabel-sets-'));
    const old = nodeSetDoc('old-md', { selector: { matchLabels: { [MACHINE_ONLY_KEY]: md } } });
    for (const f of [...files(true), { source: 'old-md.yaml', text: old }]) writeFileSync(join(dir, f.source), f.text);
    const staged = exits(await relabelCli(['docs', 'stage', 'site', dir], env), 0);
    assert.match(
      staged.stderr,
      /relabel: warning: site\/old-md\.yaml:\d+:\d+ relabel\/NodeSet\/v1 "old-md" data\.selector\.matchLabels\["cluster\.x-k8s\.io\/deployment-name"\]: selector reads label "cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/,
    );
    const committed = exits(await relabelCli(['docs', 'commit', '-m', 'the old selector'], env), 0);
    assert.match(committed.stderr, /relabel: warning: .*"old-md".*keeps on Machines only/);
    assert.doesNotMatch(committed.stderr, /--force/, 'a warning, not a forced error');
    const revision = (await relabel.store.revisions.latest())?.id ?? 0;
    await relabel.store.revisions.tag(revision, 'site-action-success');
    const shown = exits(await relabelCli(['plan', '--node-set', 'old-md,md'], env, { timeoutMs: 120_000 }), 0).stdout;
    assert.match(shown, new RegExp(`^node sets: md ${FLEET + 1} member\\(s\\), old-md matches no node$`, 'm'), shown);
    assert.match(shown, /^warning: node set "old-md" matches no node/m);
    assert.match(shown, /^warning: node set "old-md": selector reads label "cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/m);
    // A BaremetalNode's node carrying the md label: written as itself, the set it wins over kept in its result.
    const named = site.nodes[0] as string;
    await createNode(adminCore(), named, { [MD_KEY]: md });
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: [named] }));
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    const [outcome] = (await relabel.runs.nodes(done.result?.run ?? 0, {})).items;
    assert.deepEqual([outcome?.node, outcome?.written, outcome?.matchedSets], [named, true, ['md']]);
  });

  it('the pure matcher agrees with the API server on random selectors', async () => {
    const mark = `${prefix}.example.com/agreement`;
    const core = adminCore();
    const labelled = fc.sample(labelsArb, { numRuns: 40, seed: 42 });
    const names = labelled.map((_, i) => `${prefix}-pt-${i}`);
    await Promise.all(labelled.map((labels, i) => createNode(core, names[i] as string, { ...labels, [mark]: 'yes' })));
    const nodes = await Promise.all(names.map(read));
    const selectors = fc.sample(selectorArb, { numRuns: 60 });
    for (const selector of selectors) {
      const listed = await core.listNode({ labelSelector: `${mark}=yes,${selectorString(selector)}` });
      const server = listed.items.map((n) => n.metadata?.name ?? '').sort();
      const ours = nodes
        .filter((n) => selectorMatches(selector, n.metadata?.labels ?? {}))
        .map((n) => n.metadata?.name ?? '')
        .sort();
      assert.deepEqual(ours, server, selectorString(selector));
    }
  });
});
