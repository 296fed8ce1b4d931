/**
 * The recordings of fleet rollouts, for `scripts/record-histories.ts`
 * (`--only fleet-rollout`): three sites, each with its own store and its own
 * worker on its own task queue, rolled out from the recording's worker.
 * A canary, an approval and waves of one (`fleet-rollout-waves`); a site
 * refused by the worker its registry entry points at, halting the rollout,
 * resumed (`fleet-rollout-halted`); a rollout continued as new after each
 * site, one site unreachable (`fleet-rollout-continued`, its first
 * execution, and `fleet-rollout-after-continue`, its last); a site's run
 * halted at its health gate (a DaemonSet no controller makes pods for),
 * halting the fleet, both resumed from the fleet (`fleet-rollout-site-halted`,
 * and the site's run, `update-labels-fleet-halted`).
 */
import { join } from 'node:path';
import { AppsV1Api, type CoreV1Api } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { fleetControlUpdate, fleetProgressQuery, fleetRolloutWorkflowId, type FleetRolloutInput } from '../src/contracts/fleet-messages.ts';
import type { FleetSite } from '../src/core/fleet/sites.ts';
import { facadeRunStarter, facadeSiteRuns } from '../src/facade/runs/run-starter.ts';
import { openStore } from '../src/store/open-store.ts';
import { createWorker } from '../src/worker/wiring.ts';
import { buildBundle } from '../src/worker/bundle.ts';
import type { StackInfo } from '../stack/stack.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { createPauseDaemonSet } from '../test/kit/kube/daemon-sets.ts';
import { prefixedSite } from '../test/site.ts';

/** The parts of a recording this one uses. */
export interface FleetRecording {
  dir: string;
  stack: StackInfo;
  client: Client;
  core: CoreV1Api;
  taskQueue: string;
  save(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** Starts a site's store (its documents committed) and worker; resolves to its registry entry and its shutdown. */
async function startSite(rec: FleetRecording, prefix: string, workflowBundle: WorkflowBundle): Promise<{ site: FleetSite; stop(): Promise<void> }> {
  const { files, nodes } = prefixedSite(prefix);
  const storeUrl = `sqlite:${join(rec.dir, `${prefix}.db`)}`;
  const store = await openStore(storeUrl);
  await store.revisions.stage('site', files);
  await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
  await store.close();
  for (const name of nodes) await rec.core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
  const taskQueue = `relabel-record-${prefix}`;
  const settings = { taskQueue, namespace: 'default' };
  const { worker, close } = await createWorker(
    { temporalAddress: rec.stack.temporalAddress, namespace: 'default', taskQueue, kubeconfig: rec.stack.kubeconfig, storeUrl, workflowBundle },
    { runStarter: facadeRunStarter(settings), siteRuns: facadeSiteRuns(settings) },
  );
  const running = worker.run();
  return {
    site: { name: `${prefix}-site`, taskQueue, labels: { ring: prefix } },
    async stop() {
      worker.shutdown();
      await running;
      await close();
    },
  };
}

/** Waits until the rollout `workflowId` waits at `gate`. */
async function atGate(client: Client, workflowId: string, gate: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if ((await client.workflow.getHandle(workflowId).query(fleetProgressQuery)).waiting === gate) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const progress = await client.workflow.getHandle(workflowId).query(fleetProgressQuery);
  throw new Error(`${workflowId}: the ${gate} gate was not reached: ${JSON.stringify(progress).slice(0, 2000)}`);
}

/** Records `fleet-rollout-waves`, `-halted`, `-continued`, `-after-continue` and `-site-halted`, and `update-labels-fleet-halted`. */
export async function recordFleetRollouts(rec: FleetRecording): Promise<void> {
  const { client, taskQueue, save } = rec;
  const workflowBundle = await buildBundle();
  const started = [];
  for (const prefix of ['fa', 'fb', 'fc']) started.push(await startSite(rec, prefix, workflowBundle));
  const sites = started.map((s) => s.site);
  const start = (input: FleetRolloutInput) =>
    client.workflow.start('fleetRollout', { taskQueue, workflowId: fleetRolloutWorkflowId(input.name), args: [input] });
  const expect = (name: string, result: { status: string; counts: Record<string, number> }, status: string, counts: Record<string, number>) => {
    const wrong = result.status !== status || Object.entries(counts).some(([k, n]) => result.counts[k] !== n);
    if (wrong) throw new Error(`${name} should end ${status} ${JSON.stringify(counts)}: ${JSON.stringify(result)}`);
  };
  try {
    const waves = await start({ name: 'rec-waves', sites, rollout: { canary: { count: 1 }, waves: { sizes: [1] }, approval: 'first' }, run: {} });
    await atGate(client, waves.workflowId, 'approval');
    await waves.executeUpdate(fleetControlUpdate, { args: [{ verb: 'approve', by: 'recorder' }] });
    expect('rec-waves', await waves.result(), 'success', { succeeded: 3 });
    await save('fleet-rollout-waves', waves.workflowId, waves.firstExecutionRunId);

    // A registry entry naming another site on fa's queue: fa's worker refuses it, the rollout halts.
    const wrong: FleetSite = { name: 'aa-elsewhere', taskQueue: sites[0]?.taskQueue ?? '', labels: {} };
    const halted = await start({ name: 'rec-halted', sites: [wrong, ...sites.slice(1)], rollout: { waves: { sizes: [1] } }, run: {} });
    await atGate(client, halted.workflowId, 'halted');
    await halted.executeUpdate(fleetControlUpdate, { args: [{ verb: 'resume', by: 'recorder' }] });
    expect('rec-halted', await halted.result(), 'partial_success', { succeeded: 2, failed: 1 });
    await save('fleet-rollout-halted', halted.workflowId, halted.firstExecutionRunId);

    const gone: FleetSite = { name: 'zz-gone', taskQueue: 'relabel-record-nobody', labels: {} };
    const continued = await start({
      name: 'rec-continued',
      sites: [...sites, gone],
      rollout: { canary: { count: 1 }, maxFailedSites: 1, siteWaitSeconds: 1 },
      run: {},
      continueAsNewAfterSites: 1,
      siteConcurrency: 1,
    });
    expect('rec-continued', await continued.result(), 'partial_success', { succeeded: 3, unreachable: 1 });
    const last = (await client.workflow.getHandle(continued.workflowId).describe()).runId;
    if (last === continued.firstExecutionRunId) throw new Error('rec-continued should have continued as new');
    await save('fleet-rollout-continued', continued.workflowId, continued.firstExecutionRunId);
    await save('fleet-rollout-after-continue', continued.workflowId, last);

    // A DaemonSet on every node with no controller to make its pods: each site run's health gate times out, the run halts.
    const apps = loadKubeConfig(rec.stack.adminKubeconfig).makeApiClient(AppsV1Api);
    const ds = { name: 'rec-never-ready', namespace: 'default' };
    // Tolerating every taint: the recording's Nodes have no kubelet and keep the API server's not-ready taint.
    await createPauseDaemonSet(apps, ds, { tolerations: [{ operator: 'Exists' }] });
    // A revision that changes a label of every node of fa and fb: each run has nodes to write, in waves, with health gates.
    for (const prefix of ['fa', 'fb']) {
      const store = await openStore(`sqlite:${join(rec.dir, `${prefix}.db`)}`);
      const files = prefixedSite(prefix).files.map((f) => ({ source: f.source, text: f.text.replaceAll('"fluentd": "enabled"', '"fluentd": "disabled"') }));
      await store.revisions.stage('site', files);
      await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
      await store.close();
    }
    const siteHalted = await start({
      name: 'rec-site-halted',
      sites: sites.slice(0, 2),
      rollout: { canary: { count: 1 } },
      run: { rollout: { size: { count: 1 }, healthTimeoutSeconds: 1 } },
    });
    await atGate(client, siteHalted.workflowId, 'halted');
    await apps.deleteNamespacedDaemonSet(ds);
    await siteHalted.executeUpdate(fleetControlUpdate, { args: [{ verb: 'resume', by: 'recorder' }] });
    expect('rec-site-halted', await siteHalted.result(), 'success', { succeeded: 2 });
    await save('fleet-rollout-site-halted', siteHalted.workflowId, siteHalted.firstExecutionRunId);
    const history = await client.workflow.getHandle(siteHalted.workflowId, siteHalted.firstExecutionRunId).fetchHistory();
    const child = history.events?.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)?.startChildWorkflowExecutionInitiatedEventAttributes;
    if (!child?.workflowId) throw new Error('rec-site-halted started no site run');
    await save('update-labels-fleet-halted', child.workflowId);
  } finally {
    for (const s of started) await s.stop();
  }
}
