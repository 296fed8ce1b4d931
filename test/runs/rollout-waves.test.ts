/**
 * Runs in waves on a simulated cluster of this file's own (KWOK nodes, the
 * real kube-controller-manager and kube-scheduler): a DaemonSet selecting
 * `ceph-osd=enabled` follows the sample site's storage nodes, two in each of
 * three racks. With `--waves rack` and a health gate, the second rack is
 * written only once the first rack's DaemonSet pods are Ready (the real
 * controller and scheduler place them); a gate that times out halts the run
 * saying why, `resume` goes on and `abort` ends it partial, the rest not
 * started; an approval gate outlives a killed worker and a restarted
 * Temporal server, and `approve` records who.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { userInfo } from 'node:os';
import type { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { Runs } from '../../src/facade/runs/runs.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import type { Rollout } from '../../src/core/plan/waves.ts';
import { createKwokNodes, waitForKwokNodes } from '../../stack/kwok.ts';
import { restartTemporal } from '../../stack/stack.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { ADMIN, eventually, startTestApi } from '../api-support.ts';
import { exits, relabelCli, startRelabel, startWorkerProcess, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const NAMESPACE = 'default';

describe('runs in waves on a simulated cluster: health gates, halts, approvals', () => {
  const prefix = `wave${uniqueSuffix()}`;
  let sim: SimulatedStack;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  /** The storage nodes by rack, racks in name order. */
  const racks = new Map<string, string[]>();
  let storage: string[] = [];
  let files: ReturnType<typeof prefixedSite>['files'];

  before(async () => {
    sim = await startSimulatedStack('waves', { nodes: 1, nodePrefix: `${prefix}-k`, heartbeatSeconds: 5, leaseSeconds: 20 });
    ({ core, apps } = sim);
    ({ files } = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/BaremetalNode/v1' && doc.data.host_profile === 'storage') {
        const rack = String(doc.data.metadata.rack);
        racks.set(rack, [...(racks.get(rack) ?? []), doc.metadata.name]);
      }
    }));
    storage = [...racks.values()].flat().sort();
    assert.equal(racks.size, 3, 'three racks of storage nodes');
    const admin = loadKubeConfig(sim.info.adminKubeconfig);
    await createKwokNodes(admin, storage);
    await waitForKwokNodes(admin, storage, 60_000);
  });
  after(async () => {
    await sim.stop();
  });

  const rackNodes = (i: number) => [...racks.entries()].sort(([a], [b]) => a.localeCompare(b))[i]?.[1] ?? [];

  /** A DaemonSet on ceph-osd=enabled nodes; `cpu` above a KWOK node's 64 leaves its pods Pending (never Ready). */
  async function daemonSet(name: string, cpu?: string): Promise<void> {
    await apps.createNamespacedDaemonSet({
      namespace: NAMESPACE,
      body: {
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: name } },
          updateStrategy: { type: 'OnDelete' },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              nodeSelector: { 'ceph-osd': 'enabled' },
              containers: [{ name: 'osd', image: 'registry.k8s.io/pause:3.10', ...(cpu ? { resources: { requests: { cpu } } } : {}) }],
            },
          },
        },
      },
    });
  }

  const carries = async (node: string) => (await core.readNode({ name: node })).metadata?.labels?.['ceph-osd'] === 'enabled';

  /** Takes ceph-osd from every storage node (a plain patch), so that each test's run gives it again. */
  async function unlabel(): Promise<void> {
    for (const name of storage) {
      if (await carries(name)) await core.patchNode({ name, body: [{ op: 'remove', path: '/metadata/labels/ceph-osd' }] });
    }
  }

  async function waitingAt(runs: Runs, started: { workflowId: string; runId: string }, waiting: string, wave: number) {
    return eventually(
      async () => (await runs.status(started.workflowId, started.runId)).progress?.wave,
      (w) => w?.waiting === waiting && w.current.index === wave,
      120_000,
      250,
    );
  }

  async function startRun(runs: Runs, rollout: Rollout) {
    return runs.start({ targets: storage, rollout });
  }

  it("--waves rack with a health gate: the second rack is written only once the first rack's DaemonSet pods are Ready", async () => {
    await unlabel();
    const ds = `osd-${uniqueSuffix()}`;
    await daemonSet(ds, '1000');
    const { url } = await storeWithSite(files);
    const relabel = await startRelabel(url);
    try {
      const started = await startRun(relabel.runs, { by: 'rack', healthTimeoutSeconds: 600 });
      const wave = await waitingAt(relabel.runs, started, 'health', 0);
      assert.equal(wave?.count, 3);
      assert.match(wave?.current.name ?? '', /^rack /);
      // The first rack carries the label and its pods are Pending (too big for the node): the others wait.
      for (const node of rackNodes(0)) assert.ok(await carries(node), `${node} was written in wave 1`);
      for (const node of [...rackNodes(1), ...rackNodes(2)]) assert.equal(await carries(node), false, `${node} waits for wave 1's pods`);
      await new Promise((r) => setTimeout(r, 5000));
      for (const node of rackNodes(1)) assert.equal(await carries(node), false, `${node} still waits`);

      // Make the pods fit: the template loses its request, the Pending pods are deleted and come back Ready.
      await apps.patchNamespacedDaemonSet({ name: ds, namespace: NAMESPACE, body: [{ op: 'remove', path: '/spec/template/spec/containers/0/resources' }] });
      await core.deleteCollectionNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${ds}` });
      const readyAt = new Map<string, number>();
      const report = await relabel.runs.wait(started);
      assert.equal(report.result?.status, 'success', JSON.stringify(report.result));
      assert.equal(report.result?.waves, 3);
      const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${ds}` })).items;
      for (const pod of pods) {
        const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True')?.lastTransitionTime;
        if (ready && pod.spec?.nodeName) readyAt.set(pod.spec.nodeName, new Date(ready).getTime());
      }
      // When relabel wrote each node: its field manager's time on the labels.
      const writtenAt = async (name: string) => {
        const node = await core.readNode({ name });
        const entry = node.metadata?.managedFields?.find((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('f:ceph-osd'));
        return new Date(entry?.time ?? 0).getTime();
      };
      const firstReady = Math.max(...rackNodes(0).map((n) => readyAt.get(n) ?? Number.POSITIVE_INFINITY));
      for (const node of rackNodes(1)) assert.ok((await writtenAt(node)) >= firstReady, `${node} written after wave 1's pods were Ready`);
      await apps.deleteNamespacedDaemonSet({ name: ds, namespace: NAMESPACE });
    } finally {
      await relabel.stop();
    }
  });

  it('a health gate that times out halts the run saying why; resume goes on; abort ends it partial, the rest not started', async () => {
    await unlabel();
    const ds = `stuck-${uniqueSuffix()}`;
    await daemonSet(ds, '1000');
    const { url } = await storeWithSite(files);
    const relabel = await startRelabel(url);
    try {
      const started = await startRun(relabel.runs, { by: 'rack', healthTimeoutSeconds: 3 });
      const halted = await waitingAt(relabel.runs, started, 'halted', 0);
      assert.match(halted?.reason ?? '', /the health gate timed out after 3 s: 2 DaemonSet pod\(s\) not as they should be/);
      assert.match(halted?.reason ?? '', new RegExp(`${NAMESPACE}/${ds} on ${rackNodes(0)[0]} not Ready`));
      await assert.rejects(relabel.runs.control(started.workflowId, undefined, 'approve', 'ops'), /cannot approve the run: it is halted/);

      // The answer is the run once resumed: past the gate, no longer halted.
      const resumed = await relabel.runs.control(started.workflowId, undefined, 'resume', 'ops-a');
      assert.deepEqual([resumed.answer?.wave?.current.index, resumed.answer?.wave?.waiting, resumed.answer?.wave?.reason], [0, undefined, undefined]);
      await waitingAt(relabel.runs, started, 'halted', 1);
      for (const node of rackNodes(1)) assert.ok(await carries(node), `${node} written after resume`);
      const aborted = await relabel.runs.control(started.workflowId, undefined, 'abort', 'ops-b');
      assert.deepEqual(
        [aborted.answer?.wave?.current.index, aborted.answer?.wave?.waiting],
        [1, undefined],
        'the answer is the run once aborted: no longer halted',
      );
      const report = await relabel.runs.wait(started);
      const result = report.result;
      assert.equal(result?.status, 'partial_success', JSON.stringify(result));
      assert.deepEqual(result?.aborted, { wave: 1, by: 'ops-b', notStarted: 2 });
      // No node failed: relabel status --wait says aborted (7), not some nodes failed (4).
      const env = {
        TEMPORAL_ADDRESS: sim.info.temporalAddress,
        KUBECONFIG: sim.info.kubeconfig,
        RELABEL_STORE_URL: url,
        RELABEL_TASK_QUEUE: relabel.taskQueue,
      };
      assert.equal(result?.counts.failure, 0);
      assert.match(exits(await relabelCli(['status', started.workflowId, '--wait'], env), 7).stdout, /aborted after wave 2 by ops-b/);
      for (const node of rackNodes(2)) {
        assert.equal(await carries(node), false, `${node} was never started`);
        const row = await relabel.store.runs.node(result?.run ?? 0, node);
        assert.equal(row?.status, 'cancelled');
        assert.match(row?.detail?.error?.message ?? '', /aborted by ops-b after wave 2/);
      }
      const commands = (await relabel.store.actions.commands(result?.run ?? 0)).map((c) => `${c.command}:${c.user ?? ''}`);
      assert.ok(commands.includes('resume:ops-a') && commands.includes('abort:ops-b'), commands.join(' '));
      await apps.deleteNamespacedDaemonSet({ name: ds, namespace: NAMESPACE });
    } finally {
      await relabel.stop();
    }
  });

  it('an approval gate outlives a killed worker and a restarted Temporal server; approve records who', async () => {
    await unlabel();
    const { url } = await storeWithSite(files);
    const relabel = await startRelabel(url, { worker: false });
    const env = { TEMPORAL_ADDRESS: sim.info.temporalAddress, KUBECONFIG: sim.info.kubeconfig, RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
    let worker: ChildProcess | undefined = await startWorkerProcess(env);
    try {
      const started = await startRun(relabel.runs, { by: 'rack', canary: 1, approval: 'first', healthTimeoutSeconds: 0 });
      const waiting = await waitingAt(relabel.runs, started, 'approval', 0);
      assert.equal(waiting?.current.name, 'canary');
      assert.equal(waiting?.count, 4, 'the canary, then the three racks less the canary node');
      const written = (await Promise.all(storage.map(carries))).filter(Boolean).length;
      assert.equal(written, 1, 'only the canary is written');

      worker.kill('SIGKILL');
      await restartTemporal(sim.dir, 1000);
      worker = await startWorkerProcess(env);
      await waitingAt(relabel.runs, started, 'approval', 0);
      assert.equal((await Promise.all(storage.map(carries))).filter(Boolean).length, 1, 'still only the canary');

      // relabel approve -o json answers with the run once approved: past the gate, approved by whom.
      const approved = JSON.parse(exits(await relabelCli(['approve', started.workflowId, '-o', 'json'], env), 0).stdout);
      const by = userInfo().username;
      assert.equal(approved.verb, 'approve');
      assert.deepEqual(approved.answer.wave, { current: waiting?.current, count: 4, approved: { wave: 0, by } });
      const report = await relabel.runs.wait(started);
      assert.equal(report.result?.status, 'success', JSON.stringify(report.result));
      const after = await relabel.runs.status(started.workflowId, undefined);
      assert.deepEqual(after.progress?.wave?.approved, approved.answer.wave.approved, 'the run records the approval the answer promised');
      for (const node of storage) assert.ok(await carries(node), `${node} written after the approval`);
      const commands = (await relabel.store.actions.commands(report.result?.run ?? 0)).map((c) => `${c.command}:${c.user ?? ''}`);
      assert.ok(commands.includes(`approve:${by}`), commands.join(' '));
    } finally {
      worker?.kill('SIGKILL');
      await relabel.stop();
    }
  });

  it('Shipyard sees one step per wave, its gate as up_for_reschedule; its unpause approves; abort skips the waves not started', async () => {
    await unlabel();
    const { url } = await storeWithSite(files);
    const relabel = await startRelabel(url);
    const api = await startTestApi({ storeUrl: url, taskQueue: relabel.taskQueue });
    try {
      const started = await startRun(relabel.runs, { by: 'rack', approval: 'each', healthTimeoutSeconds: 0 });
      const actionId = (await relabel.store.runs.get(started.run)).actionId ?? '';
      const steps = async () => {
        const answer = await api.call('GET', `/api/v1.0/actions/${actionId}`, { token: ADMIN });
        assert.equal(answer.status, 200, answer.text);
        return (answer.json.steps as { id: string; state: string | null }[]).map((s) => `${s.id}:${s.state ?? '-'}`);
      };
      await waitingAt(relabel.runs, started, 'approval', 0);
      assert.deepEqual((await steps()).slice(2), ['relabel_wave_1:up_for_reschedule', 'relabel_wave_2:-', 'relabel_wave_3:-']);
      const unpause = await api.call('POST', `/api/v1.0/actions/${actionId}/control/unpause`, { token: ADMIN });
      assert.equal(unpause.status, 202, unpause.text);
      await waitingAt(relabel.runs, started, 'approval', 1);
      assert.deepEqual((await steps()).slice(2), ['relabel_wave_1:success', 'relabel_wave_2:up_for_reschedule', 'relabel_wave_3:-']);
      const abort = await api.call('POST', `/api/v1.0/actions/${actionId}/control/abort`, { token: ADMIN });
      assert.equal(abort.status, 202, abort.text);
      const report = await relabel.runs.wait(started);
      assert.deepEqual(report.result?.aborted?.notStarted, rackNodes(2).length);
      assert.deepEqual((await steps()).slice(2), ['relabel_wave_1:success', 'relabel_wave_2:success', 'relabel_wave_3:skipped']);
      const commands = (await relabel.store.actions.commands(started.run)).map((c) => c.command);
      assert.deepEqual(
        commands.filter((c) => c !== 'invoke'),
        ['approve', 'abort'],
        "Shipyard's unpause is recorded as the approval it was",
      );
    } finally {
      await api.close();
      await relabel.stop();
    }
  });
});
