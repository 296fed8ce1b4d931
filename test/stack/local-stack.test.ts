/**
 * The local stack itself: a workflow executed by the real Temporal server
 * patches a Node through the real kube-apiserver with RBAC on, the Web UI
 * answers, and a missing server binary fails loudly.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { Worker } from '@temporalio/worker';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { execFileSync } from 'node:child_process';
import { freePorts, startStack, type StackInfo } from '../../stack/stack.ts';
import { isAlive } from '../../stack/processes.ts';
import { MissingToolError, toolsDir } from '../../stack/tools.ts';
import { smokeLabelNode } from '../fixtures/smoke-workflows.ts';
import { createSmokeActivities } from '../fixtures/smoke-activities.ts';
import { adminCore, createNode, kubeconfigPath, temporalConnections, uniqueSuffix } from '../helpers.ts';

describe('local stack', () => {
  let conns: Awaited<ReturnType<typeof temporalConnections>>;
  before(async () => {
    conns = await temporalConnections();
  });
  after(async () => {
    await conns.close();
  });

  it('runs a workflow on the real Temporal server that patches a Node through the real kube-apiserver', async () => {
    const name = `smoke-${uniqueSuffix()}`;
    const created = await createNode(adminCore(), name);
    console.log(`# created Node ${name} (resourceVersion ${created.metadata?.resourceVersion})`);
    const taskQueue = `smoke-${uniqueSuffix()}`;
    const worker = await Worker.create({
      connection: conns.native,
      taskQueue,
      workflowsPath: fileURLToPath(new URL('../fixtures/smoke-workflows.ts', import.meta.url)),
      activities: createSmokeActivities(createNodeApi(loadKubeConfig(kubeconfigPath()))),
    });
    const labels = await worker.runUntil(
      conns.client.workflow.execute(smokeLabelNode, {
        taskQueue,
        workflowId: `smoke/${name}`,
        args: [name, { 'example.com/smoke': 'patched' }],
      }),
    );
    assert.equal(labels['example.com/smoke'], 'patched');
    const node = await adminCore().readNode({ name });
    assert.equal(node.metadata?.labels?.['example.com/smoke'], 'patched');
    assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], name);
    const history = await conns.client.workflow.getHandle(`smoke/${name}`).fetchHistory();
    const kinds = (history.events ?? []).map((e) => e.eventType);
    console.log(`# workflow smoke/${name} executed: ${kinds.length} history events, node patched`);
    assert.ok(kinds.length > 5);
  });

  it('enforces RBAC: relabel may patch Nodes but not create them', async () => {
    const relabel = loadKubeConfig(kubeconfigPath()).makeApiClient(CoreV1Api);
    await assert.rejects(relabel.createNode({ body: { metadata: { name: `forbidden-${uniqueSuffix()}` } } }), (err: { code?: number }) => err.code === 403);
  });

  it('the control plane reports its real version (kubectl version, Helm kubeVersion checks can parse it)', async () => {
    const version = await loadKubeConfig(kubeconfigPath()).makeApiClient(VersionApi).getCode();
    assert.equal(version.gitVersion, 'v1.36.3');
    assert.equal(version.major, '1');
    assert.equal(version.minor, '36');
    for (const binary of ['kube-controller-manager', 'kube-scheduler']) {
      assert.equal(execFileSync(join(toolsDir(), 'bin', binary), ['--version'], { encoding: 'utf8' }).trim(), 'Kubernetes v1.36.3', binary);
    }
  });

  it('serves the Temporal Web UI', async () => {
    const res = await fetch(process.env.TEMPORAL_UI_URL as string);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<html/i);
  });

  it('stack:up starts a whole second stack with a UI, and stack:down leaves no process behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-cli-stack-'));
    const ports = await freePorts();
    const cli = (...args: string[]) =>
      execFileSync(process.execPath, [new URL('../../stack/cli.ts', import.meta.url).pathname, ...args, '--dir', dir], { encoding: 'utf8' });
    const up = JSON.parse(
      cli(
        'up',
        '-o',
        'json',
        '--temporal-port',
        String(ports.temporal),
        '--temporal-http-port',
        String(ports.temporalHttp),
        '--temporal-metrics-port',
        String(ports.temporalMetrics),
        '--ui-port',
        String(ports.temporalUi),
        '--apiserver-port',
        String(ports.apiserver),
        '--etcd-port',
        String(ports.etcdClient),
        '--etcd-peer-port',
        String(ports.etcdPeer),
      ),
    ) as StackInfo;
    try {
      assert.equal((await fetch(up.temporalUiUrl)).status, 200);
      assert.deepEqual(
        up.processes.map((p) => p.name),
        ['etcd', 'kube-apiserver', 'temporal'],
      );
      assert.ok(up.processes.every((p) => isAlive(p.pid)));
    } finally {
      assert.match(cli('down'), /stopped temporal, kube-apiserver, etcd/);
    }
    for (const p of up.processes) assert.equal(isAlive(p.pid), false, `${p.name} (pid ${p.pid}) still running`);
    const leftovers = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dir));
    assert.deepEqual(leftovers, []);
  });

  it('fails loudly, naming the binary and the build command, when a server binary is missing', async () => {
    // A tool cache with every binary but kube-apiserver.
    const tools = mkdtempSync(join(tmpdir(), 'relabel-partial-tools-'));
    mkdirSync(join(tools, 'bin'));
    for (const tool of ['etcd', 'temporal']) symlinkSync(join(toolsDir(), 'bin', tool), join(tools, 'bin', tool));
    await assert.rejects(
      startStack({ dir: join(tools, 'stack'), ports: await freePorts(), env: { ...process.env, RELABEL_TOOLS_DIR: tools } }),
      (err: Error) => err instanceof MissingToolError && /kube-apiserver is not built/.test(err.message) && /npm run tools/.test(err.message),
    );
  });
});
