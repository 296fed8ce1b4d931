/**
 * Replicas under faults, as a cluster runs relabel: Temporal shaped as
 * production runs it (temporal-server on PostgreSQL, stack/temporal-postgres.ts),
 * one PostgreSQL revision store, two worker processes and two API server
 * processes, and 1,000 KWOK nodes (Ready, heartbeating, kept by the real
 * controller manager) on a stack of this file's own.
 *
 * A Shipyard update action over every node is started through the first API
 * replica; mid-run one worker is SIGKILLed and the first API replica is
 * stopped. The run completes on the survivors: every node as its design
 * says (read from the API server), every node's result in the store,
 * `relabel status` and the action read through the surviving API replica
 * complete with every node succeeded, and both workers recorded Events
 * (each as its own instance): the run was shared before the kill.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, EventsV1Api, type V1Node } from '@kubernetes/client-node';
import { ActionView } from '../../src/api/http/response-schemas.ts';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { NODE_EVENTS_NAMESPACE } from '../../src/kube/events.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createKwokNodes, waitForKwokNodes } from '../../stack/kwok.ts';
import { startPostgres, type PostgresServer } from '../../stack/postgres.ts';
import { StackTemporal, freePorts, startStack, stopStack, type StackInfo } from '../../stack/stack.ts';
import { eventually } from '../api-support.ts';
import { exits, relabelCli, startWorkerProcess, stopChild, uniqueSuffix } from '../helpers.ts';
import { scaledSite } from '../site.ts';
import { startApiProcess } from './api-process.ts';

const NODES = 1000;
/** Seconds between KWOK's status heartbeats of each node: the nodes stay Ready and move under the run, as a cluster's do. */
const HEARTBEAT_SECONDS = 60;
/** Nodes done when the faults strike: past the plan, well before the end. */
const KILL_AT = 150;

describe('two workers and two API replicas on PostgreSQL, one of each stopped mid-run of 1,000 nodes', () => {
  const suffix = uniqueSuffix();
  const prefix = `rp${suffix}`;
  const site = scaledSite(prefix, NODES);
  const design = validateSite(site.files);
  assert.ok(design.ok);
  // Each a temporary directory of its own: PostgreSQL, which runs as another user under root, may traverse them.
  const stackDir = mkdtempSync(join(tmpdir(), 'relabel-replicas-stack-'));
  const storeDir = mkdtempSync(join(tmpdir(), 'relabel-replicas-store-'));
  const token = `replicas-test-${suffix}`;
  let stack: StackInfo | undefined;
  let postgres: PostgresServer | undefined;
  let store: Store | undefined;
  let env: Record<string, string> = {};
  const workers: ChildProcess[] = [];
  const apis: { child: ChildProcess; url: string }[] = [];

  /** A request to API replica `url` with the admin token. */
  async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string; location: string | null }> {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-auth-token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined, text, location: res.headers.get('location') };
  }

  before(async () => {
    const t0 = Date.now();
    stack = await startStack({
      dir: stackDir,
      ports: await freePorts(),
      temporal: StackTemporal.postgres,
      kwok: { nodes: 0, heartbeatSeconds: HEARTBEAT_SECONDS, leaseSeconds: 0 },
      log: (l) => console.log(`# replicas stack: ${l}`),
    });
    postgres = await startPostgres({ dir: storeDir });
    store = await openStore(postgres.url);
    await store.revisions.stage('site', site.files);
    const revision = await store.revisions.commit({ message: 'replicas test site' });
    await store.revisions.tag(revision.id, 'site-action-success');
    const t1 = Date.now();
    const admin = loadKubeConfig(stack.adminKubeconfig);
    await createKwokNodes(admin, site.nodes, {}, 16);
    await waitForKwokNodes(admin, site.nodes, 600_000);
    console.log(`# replicas: stack up in ${t1 - t0} ms, ${NODES} KWOK nodes registered and Ready in ${Date.now() - t1} ms`);

    env = {
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_UI_URL: '',
      KUBECONFIG: stack.kubeconfig,
      RELABEL_STORE_URL: postgres.url,
      RELABEL_TASK_QUEUE: `relabel-replicas-${suffix}`,
    };
    workers.push(await startWorkerProcess(env), await startWorkerProcess(env));
    for (let i = 0; i < 2; i++) apis.push(await startApiProcess({ ...env, RELABEL_API_TOKENS: `${token}:admin:replicas-test` }));
  });

  after(async () => {
    for (const api of apis) await stopChild(api.child);
    for (const worker of workers) await stopChild(worker);
    await store?.close();
    await postgres?.stop();
    await stopStack(stackDir, { purge: true });
  });

  it('completes on the survivors: every node as desired, every result stored, the action and relabel status complete', async () => {
    assert.ok(stack && store && design.ok);
    assert.equal(stack.temporal, StackTemporal.postgres);
    const [first, second] = apis as [{ child: ChildProcess; url: string }, { child: ChildProcess; url: string }];
    const t0 = Date.now();
    const created = await call(first.url, 'POST', '/api/v1.0/actions', { name: 'update_labels', parameters: { target_nodes: site.nodes } });
    assert.equal(created.status, 201, created.text);
    const location = created.location ?? assert.fail(`no location: ${created.text}`);

    // The faults, once the run has planned and written some nodes: a worker killed, an API replica stopped.
    const started = await eventually(
      async () => ActionView.parse((await call(second.url, 'GET', location)).json),
      (a) => a.node_results_page.run !== null,
      120_000,
    );
    const run = started.node_results_page.run as number;
    const atFault = await eventually(
      () => (store as Store).runs.counts(run),
      (c) => c.success >= KILL_AT,
      300_000,
      100,
    );
    const killed = workers[0] as ChildProcess;
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    await stopChild(first.child);
    assert.equal(first.child.exitCode, 0, 'the API replica stopped gracefully');
    console.log(`# replicas: worker SIGKILLed and API replica stopped ${Date.now() - t0} ms into the run, ${atFault.success}/${NODES} nodes done`);
    assert.ok(atFault.success < NODES, 'the faults strike while the run goes on');
    await assert.rejects(fetch(`${first.url}/health`), 'the stopped API replica answers no more');

    const action = await eventually(
      async () => ActionView.parse((await call(second.url, 'GET', location)).json),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
      600_000,
      1000,
    );
    console.log(`# replicas: the run of ${NODES} nodes completed in ${Date.now() - t0} ms`);
    assert.equal(action.action_lifecycle, 'Complete', JSON.stringify(action.failure ?? action.result));
    assert.equal(action.result?.status, 'success');
    assert.deepEqual(action.result && [action.result.counts.total, action.result.counts.success, action.result.counts.failure], [NODES, NODES, 0]);

    // Every node's result in the store.
    const counts = await store.runs.counts(run);
    assert.deepEqual([counts.total, counts.success, counts.failure, counts.queued, counts.pending], [NODES, NODES, 0, 0, 0]);
    const rows = await store.runs.nodes(run, { limit: NODES });
    assert.deepEqual(rows.map((r) => r.node).sort(), [...site.nodes].sort());
    assert.ok(
      rows.every((r) => r.status === 'success'),
      'every stored result succeeded',
    );

    // Every node as desired, read from the API server.
    const core = loadKubeConfig(stack.adminKubeconfig).makeApiClient(CoreV1Api);
    const nodes = new Map<string, V1Node>();
    let cont: string | undefined;
    do {
      const page = await core.listNode({ limit: 500, ...(cont ? { _continue: cont } : {}) });
      for (const n of page.items) nodes.set(n.metadata?.name ?? '', n);
      cont = page.metadata?._continue || undefined;
    } while (cont);
    for (const name of site.nodes) {
      const node = nodes.get(name) ?? assert.fail(`${name} is gone`);
      for (const [k, v] of Object.entries(design.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
      assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
    }

    // Both workers took part: each records its Events as its own instance (pid@host).
    const events = await loadKubeConfig(stack.adminKubeconfig)
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace: NODE_EVENTS_NAMESPACE, labelSelector: 'app.kubernetes.io/managed-by=relabel' });
    const instances = new Set(events.items.filter((e) => e.reason === 'LabelsApplied').map((e) => e.reportingInstance?.split('@')[0]));
    assert.ok(instances.has(String(killed.pid)) && instances.has(String(workers[1]?.pid)), `Events from both workers: ${[...instances].join(', ')}`);

    // relabel status, from the CLI, reads the run complete.
    const status = JSON.parse(exits(await relabelCli(['status', action.workflow_id, '-o', 'json'], env, { timeoutMs: 120_000 }), 0).stdout);
    assert.equal(status.execution, 'COMPLETED');
    assert.equal(status.result.status, 'success');
    assert.deepEqual([status.result.counts.total, status.result.counts.success, status.result.counts.failure], [NODES, NODES, 0]);
  });
});
