/**
 * Joining nodes against the real Temporal server and kube-apiserver: a
 * node of the design that registers with the uninitialized taint gets its
 * labels and loses the taint in a join run; a node the design does not
 * name is left alone; a node joining while an operator's run goes is
 * labelled right after it, and an operator's run started while a join run
 * goes is accepted; with joins off nothing is written, and a node that
 * joined meanwhile is labelled once they are on again.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import { createJoins, type Joins, type JoinStatus } from '../../src/facade/joins.ts';
import { eventually } from '../api-support.ts';
import { adminCore, createNode, nodePatchCount, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const UNINITIALIZED = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };

/** The suite's `eventually`, polling every 20 ms (the tests time labels to the node); `what` names what did not come. */
const until = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> =>
  eventually(read, done, ms, 20).catch((err: unknown) => assert.fail(`${what}: ${(err as Error).message}`));

const readNode = (name: string) => adminCore().readNode({ name });
const isLabelled = (n: V1Node) =>
  n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);
/** The run number a node's applied record names. */
const appliedRun = (n: V1Node) => Number(/run=(\d+)/.exec(n.metadata?.annotations?.[APPLIED_ANNOTATION] ?? '')?.[1]);

function designOf(files: { source: string; text: string }[]): Design {
  const v = validateSite(files);
  assert.ok(v.ok, 'test site must validate');
  return v.design;
}

/** Asserts `node` carries every label the design gives it, and its ownership record. */
function assertDesired(design: Design, node: V1Node): void {
  const name = node.metadata?.name ?? '';
  const desired = design.nodes[name]?.labels ?? {};
  assert.ok(Object.keys(desired).length > 5, `${name} has labels in the design`);
  for (const [k, v] of Object.entries(desired)) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
  assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
}

describe('joining nodes', () => {
  const prefix = `jw${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const siteName = `${prefix}-site`;
  const design = designOf(site.files);
  const node = (i: number) => site.nodes[i] as string;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let joins: Joins;

  const status = () => joins.status(siteName);
  const watching = () => until('the watcher reports', status, (s: JoinStatus) => s.enabled && s.watcher !== undefined);

  before(async () => {
    const { url } = await storeWithSite(site.files);
    // A slow API client (10 writes a second), so that runs last long enough to overlap.
    relabel = await startRelabel(url, { kubeQps: 10 });
    joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
  });
  after(async () => {
    await joins.disable({ site: siteName }).catch(() => undefined);
    await relabel.stop();
  });

  it('labels a design node that registers with the uninitialized taint, lifting the taint; leaves a node not in the design alone', async () => {
    const enabled = await joins.enable({ site: siteName, by: 'test', watch: { batchDelayMs: 50 } });
    assert.equal(enabled.enabled, true);
    assert.equal(enabled.changed, true);
    assert.equal((await joins.enable({ site: siteName })).changed, false, 'enabling twice keeps the one watcher');
    const t0 = Date.now();
    await watching();
    console.log(`# the watcher reported ${Date.now() - t0} ms after joins were enabled`);
    const writes = await nodePatchCount({ code: 200 });
    const core = adminCore();
    const t1 = Date.now();
    await createNode(core, node(0), {}, [UNINITIALIZED]);
    const stranger = `${prefix}-not-in-design`;
    await createNode(core, stranger, {}, [UNINITIALIZED]);

    const labelled = await until(`${node(0)} labelled`, () => readNode(node(0)), isLabelled);
    console.log(`# the joining node was labelled ${Date.now() - t1} ms after it was created`);
    assertDesired(design, labelled);
    const run = await relabel.store.runs.get(appliedRun(labelled));
    assert.equal(run.startedVia, 'join');
    assert.match(run.startedBy ?? '', new RegExp(`^join:relabel-join/${siteName}`));
    const s = await until('the watcher counts the stranger', status, (x) => (x.watcher?.unmanaged ?? 0) >= 1 && (x.watcher?.labelled ?? 0) >= 1);
    assert.equal(s.watcher?.runs, 1);
    assert.equal(s.watcher?.dispatched, 1);
    const left = await readNode(stranger);
    assert.equal(left.metadata?.annotations?.[APPLIED_ANNOTATION], undefined, 'the stranger is not written');
    assert.ok(
      (left.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
      'the stranger keeps its taint',
    );
    assert.equal((await nodePatchCount({ code: 200 })) - writes, 1, 'one write: the joined node, once');
  });

  it('labels a node joining during an operator run right after that run; an operator run started during a join run is accepted', async () => {
    await watching();
    const core = adminCore();
    // Twelve nodes already there, labelled by an operator's run (slow: 10 writes a second).
    const existing = site.nodes.slice(1, 13);
    for (const name of existing) await createNode(core, name);
    await until(
      'the existing nodes labelled by join runs',
      () => Promise.all(existing.map(readNode)),
      (ns) => ns.every(isLabelled),
      60_000,
    );
    // Someone removes a label relabel owns from each: the operator's run has a write to make on every node.
    const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
    for (const name of existing) {
      const key = Object.keys(design.nodes[name]?.labels ?? {})[0] ?? '';
      await core.patchNode({ name, body: [{ op: 'remove', path: `/metadata/labels/${key.replaceAll('~', '~0').replaceAll('/', '~1')}` }] }, jsonPatch);
    }
    const operator = await relabel.runs.start({ targets: existing, concurrency: 2, audit: { by: 'alice', via: 'cli' } });
    const joiner = node(13);
    await createNode(core, joiner, {}, [UNINITIALIZED]);
    const done = await relabel.runs.wait(operator);
    assert.equal(done.result?.status, 'success');
    const closedAt = Date.now();
    const joined = await until(`${joiner} labelled after the operator run`, () => readNode(joiner), isLabelled);
    console.log(`# the node that joined during the operator run was labelled ${Date.now() - closedAt} ms after it ended`);
    assertDesired(design, joined);
    assert.notEqual(appliedRun(joined), done.result?.run, 'labelled by a run of its own');
    assert.equal((await relabel.store.runs.get(appliedRun(joined))).startedVia, 'join');

    // Now the other way round: a burst of joins, and an operator's run started while their run goes.
    const burst = site.nodes.slice(14, 22);
    for (const name of burst) await createNode(core, name, {}, [UNINITIALIZED]);
    const siteRun = relabel.client.workflow.getHandle(`update-labels/${siteName}`);
    await until(
      'a join run going',
      () => siteRun.describe(),
      (d) => d.status.name === 'RUNNING' && (d.memo as { action?: string } | undefined)?.action === 'join_nodes',
      20_000,
    );
    const accepted = await relabel.runs.start({ targets: [node(1)], audit: { by: 'bob', via: 'cli' } });
    assert.ok(accepted.run > 0, 'accepted, not refused RunInProgress');
    assert.equal((await relabel.runs.wait(accepted)).result?.status, 'success');
    const all = await until(
      'the burst labelled',
      () => Promise.all(burst.map(readNode)),
      (ns) => ns.every(isLabelled),
    );
    for (const n of all) assertDesired(design, n);
  });

  it('with joins off writes nothing; a node that joined meanwhile is labelled once joins are on again', async () => {
    const off = await joins.disable({ site: siteName });
    assert.equal(off.enabled, false);
    assert.equal(off.changed, true);
    const name = node(22);
    await createNode(adminCore(), name, {}, [UNINITIALIZED]);
    await sleep(3000);
    const still = await readNode(name);
    assert.equal(still.metadata?.annotations?.[APPLIED_ANNOTATION], undefined, 'not written while joins are off');
    assert.ok((still.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY));
    await joins.enable({ site: siteName, watch: { batchDelayMs: 50 } });
    assertDesired(design, await until(`${name} labelled once joins are on`, () => readNode(name), isLabelled));
  });
});
