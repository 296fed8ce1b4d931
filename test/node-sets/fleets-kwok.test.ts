/**
 * Node sets over KWOK nodes on a simulated cluster of this file's own (the
 * real controller manager and scheduler, the nodes heartbeating): 200 nodes
 * with generated names in two fleets, labelled as Cluster API labels a
 * MachineDeployment's nodes (only what its machine controller copies) and
 * Karpenter a NodePool's, beside nodes of
 * another MachineDeployment and NodePool. The `md` set selects the
 * MachineDeployment's 100 nodes; the `spot` set the NodePool's spot nodes
 * only, so its on-demand nodes stay out.
 * - Before each run, `relabel plan` counts per label key (nodes, gain,
 *   change, lose, adopt, sources `node set …`) what the test works out from
 *   the nodes it made, read from the cluster just before.
 * - One revision with the two sets labels, annotates and taints exactly the
 *   members, one PATCH each; every other node is as it registered.
 * - A second revision moving a label key from `md` to `spot` writes each
 *   member once (the key removed from one set, added to the other), and no
 *   other node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { formatLabelSource } from '../../src/core/site/label-provenance.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import type { FleetPlan } from '../../src/facade/plan.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createKwokNodes, kwokNode, waitForKwokNodes } from '../../stack/kwok.ts';
import { exits, nodePatchCount, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { nodeSetDoc, prefixedSite, storeWithSite } from '../site.ts';

/**
 * What Cluster API's machine controller copies to a MachineDeployment's Nodes: labels its Machine
 * template sets in node.cluster.x-k8s.io, and a node role (its cluster-name, deployment-name and
 * set-name labels stay on the Machines).
 */
const CAPI = { cluster: 'node.cluster.x-k8s.io/cluster', deployment: 'node.cluster.x-k8s.io/deployment', role: 'node-role.kubernetes.io/worker' };
const KARPENTER = { pool: 'karpenter.sh/nodepool', capacity: 'karpenter.sh/capacity-type', type: 'node.kubernetes.io/instance-type' };
const FLEET = 100;
const SPOT = 60;
const TIER = 'example.com/tier';

/** `count` distinct names from `make`, as a controller generates them. */
function generatedNames(count: number, make: () => string): string[] {
  const names = new Set<string>();
  while (names.size < count) names.add(make());
  return [...names];
}
const random = (n: number) =>
  Math.random()
    .toString(36)
    .slice(2, 2 + n)
    .padEnd(n, '0');
const octet = () => Math.floor(Math.random() * 256);

/** A key's counts in a plan, with its sources as text. */
type KeyTruth = { desired: number; gain: number; change: number; lose: number; adopt: number; sources: [string, number][] };

describe('node sets over 200 KWOK nodes of a Cluster API and a Karpenter fleet', () => {
  const prefix = `nsf${uniqueSuffix()}`;
  const [md, pool] = ['workload-md-0', 'general'];
  // Cluster API: <deployment>-<machine set hash>-<random>; Karpenter on AWS: the instance's private DNS name.
  const mdNodes = generatedNames(FLEET, () => `${md}-7c9f4-${random(5)}`);
  const poolNodes = generatedNames(FLEET, () => `ip-10-${octet()}-${octet()}-${octet()}.ec2.internal`);
  const spotNodes = poolNodes.slice(0, SPOT);
  const others = [...generatedNames(5, () => `workload-md-1-5d8b2-${random(5)}`), ...generatedNames(5, () => `ip-10-200-${octet()}-${octet()}.ec2.internal`)];
  const sets = (moved: boolean) =>
    nodeSetDoc('md', {
      selector: { matchLabels: { [CAPI.cluster]: 'workload', [CAPI.deployment]: md } },
      host_profile: 'compute',
      metadata: {
        owner_data: { 'workload-class': 'web', ...(moved ? {} : { [TIER]: 'gold' }) },
        annotations: { 'example.com/fleet': 'cluster-api' },
        taints: [{ key: 'example.com/fleet', value: 'capi', effect: 'PreferNoSchedule' }],
      },
    }) +
    nodeSetDoc('spot', {
      selector: {
        matchLabels: { [KARPENTER.pool]: pool },
        matchExpressions: [{ key: KARPENTER.capacity, operator: 'In', values: ['spot'] }],
      },
      metadata: {
        owner_data: { 'workload-class': 'batch', ...(moved ? { [TIER]: 'gold' } : {}) },
        annotations: { 'example.com/fleet': 'karpenter' },
        taints: [{ key: 'example.com/spot', effect: 'NoSchedule' }],
      },
    });
  const files = (moved: boolean) => [...prefixedSite(prefix).files, { source: 'node-sets.yaml', text: sets(moved) }];
  /** The set the test made `node` a member of. */
  const setOf = (node: string) => (mdNodes.includes(node) ? 'md' : spotNodes.includes(node) ? 'spot' : undefined);
  /** Each node's labels as it registered. */
  const registered = new Map<string, Record<string, string>>();
  let sim: SimulatedStack;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;

  const designOf = (moved: boolean): Design => {
    const v = validateSite(files(moved));
    assert.ok(v.ok, v.ok ? '' : JSON.stringify(v.errors.slice(0, 3)));
    return v.design;
  };
  const fleetNodes = async () => {
    const all = new Set([...mdNodes, ...poolNodes, ...others]);
    return (await sim.core.listNode()).items.filter((n) => all.has(n.metadata?.name ?? ''));
  };

  /** What a plan of `design` over the sets must say per key, worked out from the nodes as they are and the set the test made each one a member of. */
  const truthOf = (design: Design, nodes: readonly V1Node[]): Record<string, KeyTruth> => {
    const keys = new Map<string, KeyTruth & { bySource: Map<string, number> }>();
    const entry = (key: string) => {
      let e = keys.get(key);
      if (!e) keys.set(key, (e = { desired: 0, gain: 0, change: 0, lose: 0, adopt: 0, sources: [], bySource: new Map() }));
      return e;
    };
    for (const node of nodes) {
      const set = setOf(node.metadata?.name ?? '');
      const want = set === undefined ? undefined : design.nodeSets?.[set];
      if (!want) continue;
      const has = node.metadata?.labels ?? {};
      const owned = (node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION] ?? '').split(',').filter((k) => k !== '');
      for (const [key, value] of Object.entries(want.labels)) {
        const e = entry(key);
        e.desired++;
        const source = formatLabelSource(want.labelSources[key] ?? assert.fail(`${key} has a source`));
        e.bySource.set(source, (e.bySource.get(source) ?? 0) + 1);
        if (!Object.hasOwn(has, key)) e.gain++;
        else if (has[key] !== value) e.change++;
        else if (!owned.includes(key)) e.adopt++;
      }
      for (const key of owned) if (!Object.hasOwn(want.labels, key)) entry(key).lose++;
    }
    return Object.fromEntries(
      [...keys].map(([key, { bySource, ...counts }]) => [key, { ...counts, sources: [...bySource].sort(([a], [b]) => (a < b ? -1 : 1)) }]),
    );
  };
  /** `relabel plan --node-set md,spot -o json` as KeyTruth per key. */
  const planned = async (): Promise<{ plan: FleetPlan; keys: Record<string, KeyTruth> }> => {
    const plan = JSON.parse(exits(await relabelCli(['plan', '--node-set', 'md,spot', '-o', 'json'], env, { timeoutMs: 120_000 }), 0).stdout) as FleetPlan;
    const keys = Object.fromEntries(
      Object.entries(plan.labels).map(([key, e]) => [
        key,
        {
          desired: e.desired,
          gain: e.gain,
          change: e.change,
          lose: e.lose,
          adopt: e.adopt,
          sources: e.sources.map((s): [string, number] => [formatLabelSource(s.source), s.nodes]).sort(([a], [b]) => (a < b ? -1 : 1)),
        },
      ]),
    );
    return { plan, keys };
  };
  const runSets = async () => {
    const before = await nodePatchCount({ code: 200 });
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['md', 'spot'] } }));
    return { done, patches: (await nodePatchCount({ code: 200 })) - before };
  };
  /** Asserts every member carries exactly what its set of `design` wants, and every other node is as it registered. */
  const assertFleets = (design: Design, nodes: readonly V1Node[]) => {
    assert.equal(nodes.length, 2 * FLEET + others.length);
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      const set = setOf(name);
      const want = set === undefined ? undefined : design.nodeSets?.[set];
      const relabelled = (node.spec?.taints ?? []).filter((t) => t.key.startsWith('example.com/'));
      if (!want) {
        assert.deepEqual(node.metadata?.labels, registered.get(name), `${name} keeps its labels`);
        assert.equal(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], undefined, `${name} is left alone`);
        assert.deepEqual(relabelled, [], `${name} has no taint of the sets`);
        continue;
      }
      assert.deepEqual(node.metadata?.labels, { ...registered.get(name), ...want.labels }, `${name} has its set's labels, its own kept`);
      assert.deepEqual(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION]?.split(',').sort(), Object.keys(want.labels).sort(), `${name} owns its labels`);
      for (const [k, v] of Object.entries(want.annotations)) assert.equal(node.metadata?.annotations?.[k], v, `${name} annotation ${k}`);
      assert.deepEqual(
        relabelled.map((t) => [t.key, t.value ?? undefined, t.effect]),
        want.taints.map((t) => [t.key, t.value, t.effect]),
        `${name} has its set's taints`,
      );
    }
  };

  before(async () => {
    // Every controller but the TTL controller, which PATCHes every Node's TTL annotation when the cluster passes 100 nodes,
    // while the runs go: a write to each node that the count of relabel's writes would take for one of its own.
    sim = await startSimulatedStack('node-set-fleets', {
      nodes: 0,
      nodePrefix: `${prefix}-k`,
      heartbeatSeconds: 10,
      leaseSeconds: 40,
      controllers: ['*', '-ttl'],
    });
    const { url } = await storeWithSite(files(false));
    relabel = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const admin = loadKubeConfig(sim.info.adminKubeconfig);
    const fleet = (names: readonly string[], labels: (name: string, i: number) => Record<string, string>) =>
      names.map((name, i) => {
        const node = kwokNode(name, labels(name, i));
        registered.set(name, node.metadata?.labels ?? {});
        return { name, labels: labels(name, i) };
      });
    const capi = (deployment: string) => () => ({
      [CAPI.cluster]: 'workload',
      [CAPI.deployment]: deployment,
      [CAPI.role]: '',
    });
    const karpenter = (nodePool: string, spot: (i: number) => boolean) => (_: string, i: number) => ({
      [KARPENTER.pool]: nodePool,
      [KARPENTER.capacity]: spot(i) ? 'spot' : 'on-demand',
      [KARPENTER.type]: i % 2 === 0 ? 'm5.large' : 'm5.xlarge',
      'karpenter.sh/registered': 'true',
      'karpenter.sh/initialized': 'true',
    });
    const all = [
      ...fleet(mdNodes, capi(md)),
      ...fleet(
        poolNodes,
        karpenter(pool, (i) => i < SPOT),
      ),
      ...fleet(others.slice(0, 5), capi('workload-md-1')),
      ...fleet(
        others.slice(5),
        karpenter('other', () => true),
      ),
    ];
    for (let i = 0; i < all.length; i += 25) await Promise.all(all.slice(i, i + 25).map(({ name, labels }) => createKwokNodes(admin, [name], labels)));
    await waitForKwokNodes(
      admin,
      all.map((n) => n.name),
    );
  });
  after(async () => {
    await relabel?.stop();
    await sim?.stop();
  });

  it('one revision with two sets: relabel plan counts what the nodes make, then the run labels, annotates and taints exactly the members', async () => {
    const design = designOf(false);
    const { plan, keys } = await planned();
    assert.deepEqual([plan.targets, plan.nodeSets, plan.failureTypes], [FLEET + SPOT, { md: FLEET, spot: SPOT }, {}]);
    assert.deepEqual(keys, truthOf(design, await fleetNodes()));
    assert.deepEqual(keys['workload-class']?.sources, [
      ['node set md', FLEET],
      ['node set spot', SPOT],
    ]);
    assert.deepEqual(keys[TIER]?.sources, [['node set md', FLEET]]);

    const { done, patches } = await runSets();
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    assert.deepEqual(done.result?.counts, { total: FLEET + SPOT, success: FLEET + SPOT, failure: 0, written: FLEET + SPOT });
    assert.equal(patches, FLEET + SPOT, 'one write per member, none elsewhere');
    assertFleets(design, await fleetNodes());
  });

  it('a second revision moving a key from md to spot: the plan says so, and the run changes exactly those members', async () => {
    await relabel.store.revisions.stage('site', files(true));
    const revision = await relabel.store.revisions.commit({ message: `${TIER} moves from md to spot` });
    await relabel.store.revisions.tag(revision.id, 'site-action-success');
    const design = designOf(true);
    const { keys } = await planned();
    assert.deepEqual(keys, truthOf(design, await fleetNodes()));
    assert.deepEqual(keys[TIER], { desired: SPOT, gain: SPOT, change: 0, lose: FLEET, adopt: 0, sources: [['node set spot', SPOT]] });
    assert.deepEqual(keys['workload-class'], {
      desired: FLEET + SPOT,
      gain: 0,
      change: 0,
      lose: 0,
      adopt: 0,
      sources: [
        ['node set md', FLEET],
        ['node set spot', SPOT],
      ],
    });

    const { done, patches } = await runSets();
    assert.equal(done.result?.revision, revision.id);
    assert.deepEqual(done.result?.counts, { total: FLEET + SPOT, success: FLEET + SPOT, failure: 0, written: FLEET + SPOT });
    assert.equal(patches, FLEET + SPOT);
    const outcomes = (await relabel.runs.nodes(done.result?.run ?? 0, { limit: 5000 })).items;
    assert.equal(outcomes.length, FLEET + SPOT);
    for (const o of outcomes) assert.deepEqual([o.set, o.removed], setOf(o.node) === 'md' ? [{}, [TIER]] : [{ [TIER]: 'gold' }, []], o.node);
    assertFleets(design, await fleetNodes());
  });
});
