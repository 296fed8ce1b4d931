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
import { CoreV1Api } from '@kubernetes/client-node';
import { Worker } from '@temporalio/worker';
import { createNodeApi, loadKubeConfig } from '../src/activities/kube-nodes.ts';
import { freePorts, startStack } from '../src/stack/stack.ts';
import { MissingToolError, toolsDir } from '../src/stack/tools.ts';
import { smokeLabelNode } from './fixtures/smoke-workflows.ts';
import { createSmokeActivities } from './fixtures/smoke-activities.ts';
import { adminCore, createNode, kubeconfigPath, temporalConnections, uniqueSuffix } from './helpers.ts';

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
      workflowsPath: fileURLToPath(new URL('./fixtures/smoke-workflows.ts', import.meta.url)),
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
    await assert.rejects(
      relabel.createNode({ body: { metadata: { name: `forbidden-${uniqueSuffix()}` } } }),
      (err: { code?: number }) => err.code === 403,
    );
  });

  it('serves the Temporal Web UI', async () => {
    const res = await fetch(process.env.TEMPORAL_UI_URL as string);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<html/i);
  });

  it('fails loudly, naming the binary and the build command, when a server binary is missing', async () => {
    // A tool cache with every binary but kube-apiserver.
    const tools = mkdtempSync(join(tmpdir(), 'relabel-partial-tools-'));
    mkdirSync(join(tools, 'bin'));
    for (const tool of ['etcd', 'temporal']) symlinkSync(join(toolsDir(), 'bin', tool), join(tools, 'bin', tool));
    await assert.rejects(
      startStack({ dir: join(tools, 'stack'), ports: await freePorts(), env: { ...process.env, RELABEL_TOOLS_DIR: tools } }),
      (err: Error) =>
        err instanceof MissingToolError && /kube-apiserver is not built/.test(err.message) && /npm run tools/.test(err.message),
    );
  });
});
