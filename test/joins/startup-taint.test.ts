/**
 * A join taint under Cluster Autoscaler's startup-taint prefix, against the
 * real Temporal server and kube-apiserver: with the label policy's
 * `join_taint_key` naming it, a node of the design registered with that
 * taint is labelled in a join run and the taint lifted in the same write;
 * relabel's default key on a node is then someone else's taint, kept.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createJoins, type Joins } from '../../src/facade/joins.ts';
import { eventually } from '../api-support.ts';
import { adminCore, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const STARTUP_KEY = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';

describe("a join taint with the policy's own key", () => {
  const prefix = `st${uniqueSuffix()}`;
  const site = prefixedSite(prefix, (doc) => {
    if (doc.schema === 'relabel/LabelPolicy/v1') Object.assign(doc.data, { lift_uninitialized_taint: true, join_taint_key: STARTUP_KEY });
  });
  const siteName = `${prefix}-site`;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let joins: Joins;

  before(async () => {
    const { url } = await storeWithSite(site.files);
    relabel = await startRelabel(url);
    joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
  });
  after(async () => {
    await joins.disable({ site: siteName }).catch(() => undefined);
    await relabel.stop();
  });

  it("labels a node registered with it and lifts it, keeping the default key as anyone else's taint", async () => {
    const v = validateSite(site.files);
    assert.ok(v.ok, 'the site validates');
    assert.equal(v.design.policy.joinTaintKey, STARTUP_KEY);
    await joins.enable({ site: siteName, by: 'test', watch: { batchDelayMs: 50 } });
    await eventually(
      () => joins.status(siteName),
      (s) => s.watcher !== undefined,
      30_000,
      50,
    );
    const [name, other] = [site.nodes[0] as string, site.nodes[1] as string];
    const core = adminCore();
    await createNode(core, name, {}, [{ key: STARTUP_KEY, effect: 'NoSchedule' }]);
    // Labelled before by nobody, so it joins as new; its default-key taint is not this policy's to lift.
    await createNode(core, other, {}, [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    const labelled = (n: V1Node) => n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined;
    const joined = await eventually(() => core.readNode({ name }), labelled, 30_000, 50);
    // The node controller's not-ready taint may be there too: only relabel's goes.
    assert.ok(!(joined.spec?.taints ?? []).some((t) => t.key === STARTUP_KEY), 'the startup taint lifted');
    for (const [key, value] of Object.entries(v.design.nodes[name]?.labels ?? {})) assert.equal(joined.metadata?.labels?.[key], value, key);
    const run = await relabel.store.runs.get(Number(/run=(\d+)/.exec(joined.metadata?.annotations?.[APPLIED_ANNOTATION] ?? '')?.[1]));
    assert.equal(run.startedVia, 'join');
    const kept = await eventually(() => core.readNode({ name: other }), labelled, 30_000, 50);
    assert.ok(
      (kept.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
      "labelled as a new node; the default key is not this policy's join taint and stays",
    );
  });
});
