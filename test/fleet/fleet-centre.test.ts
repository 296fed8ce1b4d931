/**
 * The fleet's centre as deployed: the worker entry point (`src/worker.ts
 * --role centre`) in a process of its own whose environment holds no
 * kubeconfig (and whose home holds none), polling the fleet task queue, with
 * two sites' workers on their own queues. A rollout started from the CLI
 * waits, and `fleet status` names the fleet queue and the centre worker,
 * until the centre starts; then the rollout runs on the fleet queue, each
 * site's run as its child on the site's queue, and the centre never made a
 * Kubernetes request.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APPLIED_ANNOTATION } from '../../src/core/plan/constants.ts';
import { fleetRolloutWorkflowId } from '../../src/contracts/fleet-messages.ts';
import { runWorkflowId } from '../../src/contracts/messages.ts';
import type { EndedSurvey } from '../../src/facade/fleet-survey.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../../src/worker/config.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, stopChild, uniqueSuffix, WORKER_ENTRY } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Relabel = Awaited<ReturnType<typeof startRelabel>>;

/** The centre worker process: this process's environment without KUBECONFIG or a store, its home an empty directory. */
function startCentre(fleetQueue: string): Promise<{ child: ChildProcess; probes: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...WORKER_ENV,
    HOME: mkdtempSync(join(tmpdir(), 'relabel-centre-home-')),
    RELABEL_LOG_LEVEL: 'warn',
    RELABEL_METRICS_PORT: '0',
    RELABEL_FLEET_TASK_QUEUE: fleetQueue,
  };
  delete env.KUBECONFIG;
  delete env.RELABEL_ADMIN_KUBECONFIG;
  delete env.RELABEL_STORE_URL;
  const child = fork(WORKER_ENTRY, ['--role', 'centre'], {
    execArgv: [...process.execArgv, ...WORKER_NODE_FLAGS],
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; probes?: string }) => {
      if (m.ready) resolve({ child, probes: m.probes ?? '' });
    });
    child.once('exit', (code) => reject(new Error(`the centre worker exited early with ${code}`)));
  });
}

describe('the fleet centre worker, holding no kubeconfig, runs the rollout over two sites', () => {
  const suffix = uniqueSuffix();
  const fleetQueue = `relabel-fleet-${suffix}`;
  const sites = ['ca', 'cb'].map((p) => ({ prefix: `${p}${suffix}`, ...prefixedSite(`${p}${suffix}`) }));
  const workers: Relabel[] = [];
  let observer: Relabel;
  let centreUrl = '';
  let centre: { child: ChildProcess; probes: string } | undefined;
  const cli = (...args: string[]) => relabelCli(['--store', centreUrl, '--fleet-task-queue', fleetQueue, 'fleet', ...args]);

  before(async () => {
    for (const site of sites) workers.push(await startRelabel((await storeWithSite(site.files)).url));
    centreUrl = (await storeWithSite([])).url;
    // The centre's store holds only the registry; this handle reads Temporal, and runs no worker.
    observer = await startRelabel(centreUrl, { worker: false });
    const core = adminCore();
    for (const site of sites) for (const name of site.nodes) await createNode(core, name);
    for (const [i, s] of sites.entries()) exits(await cli('sites', 'add', `${s.prefix}-site`, '--queue', workers[i]?.taskQueue ?? ''), 0);
  });
  after(async () => {
    await stopChild(centre?.child);
    for (const w of [...workers, observer]) await w?.stop();
  });

  it('waits for the centre, then runs on the fleet queue with each site as a child on its own queue', async () => {
    const name = `centre-${suffix}`;
    // No centre yet: the preflight, a survey the centre runs, is refused at once, starting nothing.
    const refused = exits(await cli('rollout', name, '--waves', '1'), 6).stderr;
    assert.ok(
      refused.includes(`no centre worker is polling the fleet task queue ${fleetQueue}, so the sites cannot be asked before the rollout and nothing started`),
      refused,
    );
    await assert.rejects(observer.client.workflow.getHandle(fleetRolloutWorkflowId(name)).describe(), /not found/i, 'nothing started');
    // The fleet plan and the fleet's state are surveys the centre runs too: refused at once, not left waiting.
    for (const ask of [['plan'], ['status']]) {
      const idle = exits(await cli(...ask), 6).stderr;
      assert.ok(idle.includes(`no centre worker is polling the fleet task queue ${fleetQueue}, so no site can be asked and nothing started`), idle);
    }
    exits(await cli('rollout', name, '--waves', '1', '--preflight-wait', '0'), 0);
    const waiting = exits(await cli('status', name), 0).stdout;
    assert.match(waiting, /RUNNING/);
    assert.ok(
      waiting.includes(
        `is the centre worker polling the fleet task queue ${fleetQueue}? Start one with \`relabel-worker --role centre --fleet-task-queue ${fleetQueue}\``,
      ),
      waiting,
    );

    centre = await startCentre(fleetQueue);
    const handle = observer.client.workflow.getHandle(fleetRolloutWorkflowId(name));
    const result = await handle.result();
    assert.deepEqual([result.status, result.counts.succeeded], ['success', 2], JSON.stringify(result));
    assert.equal((await handle.describe()).taskQueue, fleetQueue, 'the rollout ran on the fleet queue');
    const core = adminCore();
    for (const [i, site] of sites.entries()) {
      const child = await observer.client.workflow.getHandle(runWorkflowId(`${site.prefix}-site`)).describe();
      assert.equal(child.taskQueue, workers[i]?.taskQueue, "the site's run ran on the site's queue");
      assert.equal(child.parentExecution?.workflowId, handle.workflowId);
      for (const node of site.nodes) {
        const applied = (await core.readNode({ name: node })).metadata?.annotations?.[APPLIED_ANNOTATION] ?? '';
        assert.match(applied, new RegExp(`site=${site.prefix}-site`), `${node} was written by its site's run`);
      }
    }
    assert.match(exits(await cli('status', name), 0).stdout, /COMPLETED\nsuccess: 2 of 2 site\(s\) succeeded/);

    // Only the centre polls the fleet queue: no site's worker takes a fleet workflow.
    const polled = await observer.client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: fleetQueue } });
    const identities = (polled.pollers ?? []).map((p) => p.identity ?? '');
    assert.ok(identities.length > 0 && identities.every((id) => id === `centre/${centre?.child.pid}@${id.split('@')[1]}`), identities.join(', '));
  });

  it("plans through the centre (the survey on the fleet queue, each site's dry run on its own) and is ready with no kubeconfig, never asking Kubernetes", async () => {
    const planned = JSON.parse(exits(await cli('plan', '-o', 'json'), 0).stdout) as EndedSurvey;
    assert.deepEqual([planned.result.sites, planned.result.answered], [2, 2], JSON.stringify(planned.result));
    assert.equal((await observer.client.workflow.getHandle(planned.workflowId).describe()).taskQueue, fleetQueue);

    const pid = centre?.child.pid;
    assert.ok(pid !== undefined);
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(!environ.some((v) => v.startsWith('KUBECONFIG=')), 'the centre process has no KUBECONFIG');
    const ready = await fetch(`${centre?.probes}/health/ready`);
    assert.equal(ready.status, 200, await ready.clone().text());
    assert.match(((await ready.json()) as { message: string }).message, /^worker polling; Temporal reachable/);
    const metrics = await (await fetch(`${centre?.probes}/metrics`)).text();
    assert.ok(metrics.includes(`task_queue="${fleetQueue}"`), 'the SDK counts the centre’s work on the fleet queue');
    assert.ok(!metrics.includes('relabel_kube_'), 'the centre made no Kubernetes request');
    for (const site of sites) {
      const line = metrics.split('\n').find((l) => l.startsWith('relabel_fleet_sites_total{') && l.includes(`site="${site.prefix}-site"`));
      assert.ok(line?.includes(`rollout="centre-${suffix}"`) && line.includes('state="succeeded"') && line.endsWith(' 1'), `by site: ${line}`);
    }
  });
});
