/**
 * The simulated cluster on a stack of this file's own: KWOK's nodes
 * heartbeat (Node status and Lease move), and a DaemonSet selecting a label
 * gets Running pods, placed by the real scheduler, on exactly the nodes that
 * carry the label — first labelled by plain patches, then by relabel runs
 * that give the label to some nodes and take it from others; and a run over
 * heartbeating nodes writes each node once, every label in place; a node
 * that joins gets its DaemonSet pod only once its label has landed.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinationV1Api, type AppsV1Api, type CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { createKwokNodes, kwokNode, waitForKwokNodes } from '../../stack/kwok.ts';
import { UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { createJoins } from '../../src/facade/joins.ts';
import { isAlive } from '../../stack/processes.ts';
import { simulatedNodeNames } from '../../stack/simulated-cluster.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { eventually } from '../api-support.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const DS_LABEL = 'example.com/ds';
/** The label of the joining node's DaemonSet: no other test's node carries it. */
const JOIN_DS_LABEL = 'example.com/joined-ds';

describe('simulated cluster: KWOK nodes, the real controller manager and scheduler', () => {
  const prefix = `sim${uniqueSuffix()}`;
  let sim: SimulatedStack;
  let info: StackInfo;
  let nodes: string[];
  let core: CoreV1Api;
  let apps: AppsV1Api;

  before(async () => {
    sim = await startSimulatedStack('sim-stack', { nodes: 4, nodePrefix: `${prefix}-n`, heartbeatSeconds: 3, leaseSeconds: 12 });
    ({ info, core, apps } = sim);
    nodes = simulatedNodeNames(info.simulatedCluster ?? { nodePrefix: '', nodes: 0 });
  });
  after(async () => {
    const stopped = await sim.stop();
    assert.deepEqual(stopped.slice(0, 3), ['kwok', 'kube-scheduler', 'kube-controller-manager']);
    for (const p of info.processes) assert.equal(isAlive(p.pid), false, `${p.name} (pid ${p.pid}) still running`);
  });

  /** A DaemonSet `name` whose pods go to nodes labelled `<label>=enabled` (`example.com/ds` unless told). */
  async function createDaemonSet(name: string, label = DS_LABEL): Promise<void> {
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { nodeSelector: { [label]: 'enabled' }, containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.10' }] },
          },
        },
      },
    });
  }

  /** The DaemonSet's pods, Running and bound, by node; fails on any pod not so. */
  async function podsByNode(name: string): Promise<{ nodes: string[]; pending: V1Pod[] }> {
    const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;
    const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
    return { nodes: running.map((p) => p.spec?.nodeName ?? '').sort(), pending: pods.filter((p) => !running.includes(p)) };
  }

  /** Waits until the DaemonSet runs exactly one pod on each of `expected` and nothing else. */
  async function podsFollow(name: string, expected: string[], timeoutMs = 60_000): Promise<V1Pod[]> {
    const want = [...expected].sort();
    await eventually(
      () => podsByNode(name),
      (got) => got.pending.length === 0 && JSON.stringify(got.nodes) === JSON.stringify(want),
      timeoutMs,
      250,
    );
    return (await core.listNamespacedPod({ namespace: 'default', labelSelector: `app=${name}` })).items;
  }

  it('KWOK heartbeats its nodes: the Node resourceVersion and the Lease renewTime move', async () => {
    const node = nodes[0] as string;
    const leases = loadKubeConfig(info.adminKubeconfig).makeApiClient(CoordinationV1Api);
    const lease = () => leases.readNamespacedLease({ name: node, namespace: 'kube-node-lease' });
    const first = { rv: (await core.readNode({ name: node })).metadata?.resourceVersion, renew: (await lease()).spec?.renewTime };
    assert.ok(first.renew, 'KWOK keeps a Lease for its node');
    const t0 = Date.now();
    await eventually(
      async () => ({ rv: (await core.readNode({ name: node })).metadata?.resourceVersion, renew: (await lease()).spec?.renewTime }),
      (now) => now.rv !== first.rv && String(now.renew) !== String(first.renew),
      20_000,
      250,
    );
    console.log(`# node ${node}: resourceVersion and Lease renewTime moved within ${Date.now() - t0} ms`);
    const ready = (await core.readNode({ name: node })).status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
  });

  it('a DaemonSet runs on exactly the nodes carrying its label, placed by the scheduler, and leaves a node that loses it', async () => {
    const ds = `ds-${uniqueSuffix()}`;
    const admin = createNodeApi(loadKubeConfig(info.adminKubeconfig));
    const label = (node: string, value: string | null) => admin.patchNode(node, { metadata: { labels: { [DS_LABEL]: value } } });
    const [a, b, c] = nodes as [string, string, string];
    await createDaemonSet(ds);
    await label(a, 'enabled');
    await label(b, 'enabled');
    const pods = await podsFollow(ds, [a, b]);
    for (const pod of pods) {
      assert.equal(pod.spec?.schedulerName, 'default-scheduler');
      const scheduled = pod.status?.conditions?.find((cond) => cond.type === 'PodScheduled');
      assert.equal(scheduled?.status, 'True', 'bound by the scheduler');
      assert.equal(pod.status?.containerStatuses?.[0]?.ready, true);
    }
    await label(a, null);
    await label(c, 'enabled');
    await podsFollow(ds, [b, c]);
    const status = (await apps.readNamespacedDaemonSet({ name: ds, namespace: 'default' })).status;
    assert.equal(status?.desiredNumberScheduled, 2);
    await label(b, null);
    await label(c, null);
    await podsFollow(ds, []);
    await apps.deleteNamespacedDaemonSet({ name: ds, namespace: 'default' });
  });

  it('a relabel run gives the label to some nodes and takes it from others, and the DaemonSet follows', async () => {
    const site = (withLabel: string[]) =>
      prefixedSite(`${prefix}r`, (doc) => {
        if (doc.schema === 'drydock/BaremetalNode/v1' && withLabel.includes(doc.metadata.name)) {
          doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, [DS_LABEL]: 'enabled' };
        }
      });
    const siteNodes = site([]).nodes;
    const [s0, s1, s2, s3] = siteNodes as [string, string, string, string];
    const admin = loadKubeConfig(info.adminKubeconfig);
    await createKwokNodes(admin, siteNodes);
    await waitForKwokNodes(admin, siteNodes, 60_000);
    const ds = `ds-${uniqueSuffix()}`;
    await createDaemonSet(ds);

    const { url } = await storeWithSite(site([s0, s1, s2]).files);
    const relabel = await startRelabel(url);
    try {
      const first = await relabel.runs.wait(await relabel.runs.start({ targets: siteNodes }));
      assert.equal(first.result?.status, 'success', JSON.stringify(first.result));
      await podsFollow(ds, [s0, s1, s2]);

      await relabel.store.revisions.stage('site', site([s2, s3]).files);
      await relabel.store.revisions.commit({ message: 'the agent moves to s2 and s3' });
      const second = await relabel.runs.wait(await relabel.runs.start({ targets: siteNodes }));
      assert.equal(second.result?.status, 'success', JSON.stringify(second.result));
      assert.equal(second.result?.counts.written, 3, 'the run writes the three nodes whose label changes');
      await podsFollow(ds, [s2, s3]);
      for (const node of [s0, s1]) assert.equal((await core.readNode({ name: node })).metadata?.labels?.[DS_LABEL], undefined);
    } finally {
      await relabel.stop();
    }
  });
  it('a node that joins with the uninitialized taint gets the DaemonSet pod its design label selects only once the label has landed', async () => {
    const joiner = `${prefix}j-cab23-r720-11`;
    const site = prefixedSite(`${prefix}j`, (doc) => {
      if (doc.schema === 'drydock/BaremetalNode/v1' && doc.metadata.name === joiner) {
        doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, [JOIN_DS_LABEL]: 'enabled' };
      }
    });
    assert.ok(site.nodes.includes(joiner));
    const ds = `ds-${uniqueSuffix()}`;
    await createDaemonSet(ds, JOIN_DS_LABEL);
    const { url } = await storeWithSite(site.files);
    const relabel = await startRelabel(url);
    const joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    try {
      await joins.enable({ site: `${prefix}j-site`, watch: { batchDelayMs: 50 } });
      await eventually(
        () => joins.status(`${prefix}j-site`),
        (s) => s.watcher !== undefined,
        30_000,
        100,
      );
      await core.createNode({ body: { ...kwokNode(joiner), spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }] } } });
      const created = Date.now();
      // Watch the node and the DaemonSet's pods closely: no pod may exist while the label is missing.
      let labelledAt: number | undefined;
      let podAt: number | undefined;
      while (podAt === undefined && Date.now() - created < 60_000) {
        // The pods first, then the node: a pod seen means its label had landed by the node's read.
        const pods = await podsByNode(ds);
        const node = await core.readNode({ name: joiner });
        const onJoiner = [...pods.nodes, ...pods.pending.map((p) => p.spec?.nodeName ?? '')].includes(joiner) || pods.pending.length > 0;
        const hasLabel = node.metadata?.labels?.[JOIN_DS_LABEL] === 'enabled';
        const tainted = (node.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);
        if (hasLabel && labelledAt === undefined) {
          labelledAt = Date.now();
          assert.equal(tainted, false, 'the taint is lifted in the same write that brings the label');
        }
        if (onJoiner) {
          assert.ok(labelledAt !== undefined, 'no DaemonSet pod for the node before its label landed');
          podAt = Date.now();
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(labelledAt !== undefined, 'the joining node was labelled');
      await podsFollow(ds, [joiner]);
      console.log(
        `# joining KWOK node: labelled ${labelledAt - created} ms after creation, its DaemonSet pod created by ${(podAt ?? Date.now()) - created} ms and Running`,
      );
      await apps.deleteNamespacedDaemonSet({ name: ds, namespace: 'default' });
    } finally {
      await joins.disable({ site: `${prefix}j-site` }).catch(() => undefined);
      await relabel.stop();
    }
  });
  it('a run over heartbeating nodes loses no label, writes each node once and never meets a refused write', async () => {
    const site = prefixedSite(`${prefix}h`);
    const design = validateSite(site.files);
    assert.ok(design.ok);
    const admin = loadKubeConfig(info.adminKubeconfig);
    await createKwokNodes(admin, site.nodes);
    await waitForKwokNodes(admin, site.nodes, 60_000);
    const { url } = await storeWithSite(site.files);
    // Four requests a second: the run spans several of the nodes' 3 s heartbeats.
    const relabel = await startRelabel(url, { kubeQps: 4 });
    try {
      const before = {
        written: await nodeRequestCount(info.adminKubeconfig, 'PATCH', { code: 200 }),
        refused: await nodeRequestCount(info.adminKubeconfig, 'PATCH', { code: 422 }),
      };
      const started = new Date();
      const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes, concurrency: 4 }));
      const seconds = (Date.now() - started.getTime()) / 1000;
      assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
      const landed = (await nodeRequestCount(info.adminKubeconfig, 'PATCH', { code: 200 })) - before.written;
      const refused = (await nodeRequestCount(info.adminKubeconfig, 'PATCH', { code: 422 })) - before.refused;
      let heartbeats = 0;
      for (const name of site.nodes) {
        const node = await core.readNode({ name });
        for (const [k, v] of Object.entries(design.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
        const beat = node.status?.conditions?.find((c) => c.type === 'Ready')?.lastHeartbeatTime;
        if (beat && new Date(beat) > started) heartbeats++;
      }
      console.log(
        `# ${site.nodes.length} heartbeating nodes relabelled in ${seconds.toFixed(1)} s: ${landed} writes landed, ${refused} refused; ${heartbeats} nodes heartbeat during the run`,
      );
      assert.equal(landed, site.nodes.length, 'each node written exactly once');
      assert.equal(done.result?.counts.written, site.nodes.length);
      assert.equal(refused, 0, 'heartbeats touch nothing relabel reads: no write of its was refused');
      assert.ok(heartbeats > 0, 'the nodes heartbeat while the run went on');
    } finally {
      await relabel.stop();
    }
  });
});
