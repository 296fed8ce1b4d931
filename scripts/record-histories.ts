/**
 * `node scripts/record-histories.ts`: records the Temporal histories the
 * replay test (test/runs/replay.test.ts) replays against the current workflow
 * code, from real runs on a local stack of its own: a run that relabels
 * every node (parent and one child), a partial success, its retry, a dry
 * run, a run that continued as new (its first and last executions), a
 * rejected run, a run with nothing to change, a label plugin poll that starts an update run for the
 * nodes whose plugin labels changed, and a drift detection that finds a node
 * changed behind relabel's back and heals it, a run paused before its first
 * node and unpaused, and a run paused mid-way and stopped (its nodes
 * settled), runs in waves, and a site's join watcher. Writes test/histories/*.binpb (protobuf, as Temporal stores
 * them). Run it again (and commit the files) only when a workflow change is
 * meant to be incompatible — see docs/workflow-changes.md. `--only
 * poll-plugins` records only the poll, `--only detect-drift` only the
 * detection, `--only run-control` only the paused and stopped runs,
 * `--only waves` only the runs in waves (one approved after its canary, one
 * aborted at its approval gate), `--only watch-joins` only a join watcher
 * (an execution that continued as new, and one disabled), `--only no-op`
 * only a run that finds every node as desired, `--only detect-drift-release`
 * only a detection releasing an orphaned node (`record-release.ts`),
 * `--only fleet-survey` only a fleet plan over the recording's site and a
 * site no worker serves (`record-fleet-survey.ts`), `--only fleet-rollout`
 * only fleet rollouts over three sites of their own (`record-fleet-rollout.ts`).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../src/core/plan/constants.ts';
import { joinWorkflowId } from '../src/contracts/join-messages.ts';
import { createDrift } from '../src/facade/drift.ts';
import { createJoins } from '../src/facade/joins.ts';
import { createPlugins } from '../src/facade/plugins.ts';
import { createRuns, type Runs } from '../src/facade/runs/runs.ts';
import { progressQuery, type Progress } from '../src/contracts/messages.ts';
import { createNodeApi, loadKubeConfig } from '../src/kube/nodes.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';
import { createDesignCache, type DesignCache } from '../src/store/designs/design-cache.ts';
import type { Store } from '../src/store/store.ts';
import { openStore } from '../src/store/open-store.ts';
import { createWorker } from '../src/worker/wiring.ts';
import { facadeRunStarter, facadeSiteRuns } from '../src/facade/runs/run-starter.ts';
import { prefixedSite } from '../test/site.ts';
import { recordDriftRelease } from './record-release.ts';
import { recordFleetRollouts } from './record-fleet-rollout.ts';
import { recordFleetSurvey } from './record-fleet-survey.ts';

const OUT = new URL('../test/histories/', import.meta.url).pathname;

/** What each recording needs: the stack's clients, the store, the runs facade and where to save a history. */
interface Recording {
  dir: string;
  stack: StackInfo;
  site: ReturnType<typeof prefixedSite>;
  store: Store;
  designs: DesignCache;
  runs: Runs;
  client: Client;
  core: CoreV1Api;
  taskQueue: string;
  /** The site's nodes created in the cluster (all but the first). */
  present: string[];
  /** The site's node not created at first. */
  missing: string | undefined;
  save(name: string, workflowId: string, runId?: string): Promise<void>;
}

/** Update runs: a partial success, its child, its retry, a dry run, a run that continued as new, a rejected run. */
async function recordRuns(rec: Recording): Promise<void> {
  const { site, runs, client, core, missing, taskQueue, save } = rec;
  const partial = await runs.start({ targets: site.nodes.slice(0, 6).concat('rec-not-designed'), concurrency: 3 });
  const partialDone = await runs.wait(partial);
  await save('update-labels-partial', partial.workflowId, partial.runId);
  await save('relabel-node', `${partial.workflowId}/${partial.run}/${site.nodes[1]}`);
  await core.createNode({ body: { metadata: { name: missing as string } } });
  const retry = await runs.retry(partialDone.workflowId, partialDone.runId);
  await runs.wait(retry);
  await save('update-labels-retry', retry.workflowId, retry.runId);

  const dry = await runs.start({ targets: site.nodes, dryRun: true });
  await runs.wait(dry);
  await save('update-labels-dry-run', dry.workflowId, dry.runId);

  const all = await runs.start({ targets: site.nodes, continueAsNewAfter: 8, concurrency: 4 });
  const allDone = await runs.wait(all);
  await save('update-labels-continued', all.workflowId, all.runId);
  await save('update-labels-after-continue', allDone.workflowId, allDone.runId);

  const rejected = await client.workflow.start('updateLabels', {
    taskQueue,
    workflowId: 'update-labels/rec-rejected',
    args: [{ targets: ['a'], revision: 99 }],
  });
  await rejected.result().catch(() => undefined);
  await save('update-labels-rejected', rejected.workflowId, rejected.firstExecutionRunId);
}

/** A run over nodes a run just relabelled: every node already as desired, nothing written, no child. */
async function recordNoop(rec: Recording): Promise<void> {
  const { runs, present, save } = rec;
  const targets = present.slice(0, 4);
  await runs.wait(await runs.start({ targets }));
  const noop = await runs.start({ targets });
  const done = await runs.wait(noop);
  if (done.result?.status !== 'success' || done.result.counts.written !== 0)
    throw new Error(`the second run should write nothing: ${JSON.stringify(done.result)}`);
  await save('update-labels-noop', noop.workflowId, noop.runId);
}

/** A poll of one JSON plugin whose new set starts an update run (the policy asks for one). */
async function recordPluginPoll(rec: Recording): Promise<void> {
  const { dir, store, designs, runs, client, present, taskQueue, save } = rec;
  const labelsFile = join(dir, 'rec-labels.json');
  writeFileSync(labelsFile, JSON.stringify(Object.fromEntries(present.slice(0, 2).map((n) => [n, { 'rec.example.com/plugin': 'yes' }]))));
  const withPlugins = prefixedSite('rec', (doc) => {
    if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.update_on_plugin_change = true;
  });
  await store.revisions.stage('site', withPlugins.files);
  const plugin = {
    schema: 'relabel/LabelPlugin/v1',
    metadata: { schema: 'metadata/Document/v1', name: 'rec-labels' },
    data: { source: 'json', path: labelsFile, namespaces: ['rec.example.com/*'] },
  };
  await store.revisions.stage('plugins', [{ source: 'plugins.yaml', text: `---\n${JSON.stringify(plugin)}\n` }]);
  await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
  const polled = await createPlugins({ store, designs, client, taskQueue }).poll('rec-site');
  await save('poll-plugins', polled.workflowId);
  if (polled.updateRun && 'workflowId' in polled.updateRun) await runs.wait({ workflowId: polled.updateRun.workflowId });
}

/** A detection under a policy that heals: three nodes relabelled, one of them changed behind relabel's back, healed by one run. */
async function recordDriftHeal(rec: Recording): Promise<void> {
  const { stack, store, designs, runs, client, present, taskQueue, save } = rec;
  const healing = prefixedSite('rec', (doc) => {
    if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.drift = { action: 'heal' };
  });
  await store.revisions.stage('site', healing.files);
  await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
  const relabelled = present.slice(0, 3);
  const done = await runs.wait(await runs.start({ targets: relabelled }));
  if (done.result?.status !== 'success') throw new Error(`the run before the detection ended ${JSON.stringify(done.result ?? done.failure)}`);
  await createNodeApi(loadKubeConfig(stack.adminKubeconfig)).patchNode(relabelled[0] as string, { metadata: { labels: { fluentd: 'disabled' } } });
  const detected = await createDrift({ client, store, designs, taskQueue, namespace: 'default' }).detect({ site: 'rec-site' });
  if (detected.counts.drifted !== 1 || detected.heal?.runs.length !== 1)
    throw new Error(`the detection should find and heal one node: ${JSON.stringify(detected)}`);
  await save('detect-drift', detected.workflowId, detected.runId);
}

/** Polls `check` every 100 ms until it holds; throws saying `what` after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A join watcher: two short watching activities (a node registered again
 * with the uninitialized taint labelled by a join run meanwhile), continued
 * as new; then the next execution, disabled (cancelled).
 */
async function recordJoins(rec: Recording): Promise<void> {
  const { client, store, designs, taskQueue, core, present, save } = rec;
  const joins = createJoins({ client, store, designs, taskQueue, namespace: 'default' });
  const workflowId = joinWorkflowId('rec-site');
  await joins.enable({ site: 'rec-site', watch: { watchSeconds: 3, continueAsNewAfter: 2, batchDelayMs: 50 } });
  const first = (await client.workflow.getHandle(workflowId).describe()).runId;
  // A node re-provisioned: deleted, and registered again with the taint.
  const joiner = present[present.length - 1] as string;
  await core.deleteNode({ name: joiner });
  await core.createNode({
    body: {
      metadata: { name: joiner, labels: { 'kubernetes.io/hostname': joiner } },
      spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }] },
    },
  });
  await until(
    `${joiner} labelled by a join run`,
    async () => (await core.readNode({ name: joiner })).metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined,
  );
  await until(
    'the first execution continued as new',
    async () => (await client.workflow.getHandle(workflowId, first).describe()).status.name === 'CONTINUED_AS_NEW',
  );
  await save('watch-joins-continued', workflowId, first);
  const next = (await client.workflow.getHandle(workflowId).describe()).runId;
  await joins.disable({ site: 'rec-site' });
  await save('watch-joins-cancelled', workflowId, next);
}

/** A run paused before its first node and unpaused, and one paused mid-way and stopped. */
async function recordRunControl(rec: Recording): Promise<void> {
  const { store, runs, client, core, present, save } = rec;
  // Fresh nodes (earlier sections relabelled them all), so every target has something to change.
  const targets = present.slice(0, 16);
  for (const name of targets) {
    await core.deleteNode({ name }).catch(() => undefined);
    await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
  }
  const until = async (what: string, done: (p: Progress) => boolean, workflowId: string) => {
    for (let i = 0; i < 600; i++) {
      const p = await client.workflow.getHandle(workflowId).query(progressQuery);
      if (done(p)) return p;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${workflowId}: ${what} did not happen`);
  };
  // Paused before its first node, unpaused: it then relabels every target.
  const paused = await runs.start({ targets: targets.slice(0, 4), concurrency: 1 });
  await runs.control(paused.workflowId, paused.runId, 'pause', 'recorder');
  await until('the pause', (p) => p.paused === true && p.phase === 'applying', paused.workflowId);
  await runs.control(paused.workflowId, paused.runId, 'unpause', 'recorder');
  const pausedDone = await runs.wait(paused);
  if (pausedDone.result?.counts.written !== 4) throw new Error(`the paused run should write 4 nodes: ${JSON.stringify(pausedDone.result)}`);
  await save('update-labels-paused', paused.workflowId, paused.runId);

  // Paused once two nodes are done, then stopped: the others are settled as never started.
  const stopped = await runs.start({ targets: targets.slice(4), concurrency: 1 });
  await runs.control(stopped.workflowId, stopped.runId, 'pause', 'recorder');
  await until('the pause', (p) => p.paused === true && p.phase === 'applying', stopped.workflowId);
  await runs.control(stopped.workflowId, stopped.runId, 'unpause', 'recorder');
  await until('two nodes', (p) => p.counts.success >= 2, stopped.workflowId);
  await runs.control(stopped.workflowId, stopped.runId, 'pause', 'recorder');
  await until('the running node', (p) => p.paused === true && p.counts.running === 0, stopped.workflowId);
  await runs.control(stopped.workflowId, stopped.runId, 'stop', 'recorder');
  const stoppedDone = await runs.wait(stopped);
  const counts = await store.runs.counts(stopped.run);
  if (stoppedDone.execution !== 'CANCELLED' || counts.cancelled === 0 || counts.pending + counts.queued > 0) {
    throw new Error(`the stopped run should end cancelled with its nodes settled: ${stoppedDone.execution} ${JSON.stringify(counts)}`);
  }
  await save('update-labels-cancelled', stopped.workflowId, stopped.runId);
}

/** Runs in waves over nodes made fresh: one approved past its canary, one aborted at the approval gate. */
async function recordWaves(rec: Recording): Promise<void> {
  const { runs, client, core, present, save } = rec;
  const targets = present.slice(0, 12);
  for (const name of targets) {
    await core.deleteNode({ name }).catch(() => undefined);
    await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
  }
  const atApproval = async (workflowId: string) => {
    for (let i = 0; i < 1200; i++) {
      const p = await client.workflow.getHandle(workflowId).query(progressQuery);
      if (p.wave?.waiting === 'approval') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${workflowId}: the approval gate was not reached`);
  };
  const approved = await runs.start({ targets: targets.slice(0, 6), rollout: { by: 'rack', canary: 1, approval: 'first', healthTimeoutSeconds: 30 } });
  await atApproval(approved.workflowId);
  await runs.control(approved.workflowId, approved.runId, 'approve', 'recorder');
  const done = await runs.wait(approved);
  if (done.result?.status !== 'success' || (done.result.waves ?? 0) < 2) throw new Error(`the run in waves should succeed: ${JSON.stringify(done.result)}`);
  await save('update-labels-waves', approved.workflowId, approved.runId);

  const aborted = await runs.start({ targets: targets.slice(6), rollout: { by: 'rack', canary: 1, approval: 'each', healthTimeoutSeconds: 0 } });
  await atApproval(aborted.workflowId);
  await runs.control(aborted.workflowId, aborted.runId, 'abort', 'recorder');
  const ended = await runs.wait(aborted);
  if (!ended.result?.aborted) throw new Error(`the run should end aborted: ${JSON.stringify(ended.result)}`);
  await save('update-labels-aborted', aborted.workflowId, aborted.runId);
}

async function main(only?: string): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'relabel-record-'));
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts() });
  try {
    const site = prefixedSite('rec');
    const storeUrl = `sqlite:${join(dir, 'revisions.db')}`;
    const store = await openStore(storeUrl);
    await store.revisions.stage('site', site.files);
    await store.revisions.tag((await store.revisions.commit()).id, 'site-action-success');
    const core = loadKubeConfig(stack.adminKubeconfig).makeApiClient(CoreV1Api);
    const [missing, ...present] = site.nodes;
    for (const name of present) await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });

    const taskQueue = 'relabel-record';
    const { worker, close } = await createWorker(
      { temporalAddress: stack.temporalAddress, namespace: 'default', taskQueue, kubeconfig: stack.kubeconfig, storeUrl },
      { runStarter: facadeRunStarter({ taskQueue, namespace: 'default' }), siteRuns: facadeSiteRuns({ taskQueue, namespace: 'default' }) },
    );
    const running = worker.run();
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection });
    const designs = createDesignCache(store);
    const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default' });
    mkdirSync(OUT, { recursive: true });
    const indexPath = join(OUT, 'workflow-ids.json');
    const index: Record<string, string> = only && existsSync(indexPath) ? (JSON.parse(readFileSync(indexPath, 'utf8')) as Record<string, string>) : {};
    const save = async (name: string, workflowId: string, runId?: string) => {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      writeFileSync(join(OUT, `${name}.binpb`), temporal.api.history.v1.History.encode(history).finish());
      // Replay needs the workflow ID: child IDs are derived from it.
      index[`${name}.binpb`] = workflowId;
      writeFileSync(join(OUT, 'workflow-ids.json'), `${JSON.stringify(index, null, 2)}\n`);
      console.log(`recorded ${name} (${history.events?.length ?? 0} events)`);
    };
    const rec: Recording = { dir, stack, site, store, designs, runs, client, core, taskQueue, present, missing, save };

    if (only === undefined) await recordRuns(rec);
    if (only === undefined || only === 'no-op') await recordNoop(rec);
    if (only === undefined || only === 'poll-plugins') await recordPluginPoll(rec);
    if (only === undefined || only === 'detect-drift') await recordDriftHeal(rec);
    if (only === undefined || only === 'run-control') await recordRunControl(rec);
    if (only === undefined || only === 'waves') await recordWaves(rec);
    if (only === undefined || only === 'watch-joins') await recordJoins(rec);
    if (only === undefined || only === 'fleet-survey') await recordFleetSurvey(rec);
    if (only === undefined || only === 'detect-drift-release') await recordDriftRelease(rec);
    if (only === undefined || only === 'fleet-rollout') await recordFleetRollouts(rec);

    worker.shutdown();
    await running;
    await close();
    await connection.close();
    await store.close();
  } finally {
    await stopStack(join(dir, 'stack'), { purge: true });
  }
}

const onlyAt = process.argv.indexOf('--only');
main(onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined).catch((err: unknown) => {
  console.error(`record-histories: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
