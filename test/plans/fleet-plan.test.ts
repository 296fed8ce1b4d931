/**
 * `relabel plan` and the mass-removal brake against the real stack: the
 * 24-node sample site planned fleet-wide (per-key counts equal to what the
 * real run then writes, every desired label's source), then documents
 * changed so that most owned labels would go: the plan says the brake would
 * refuse, the run is refused naming counts and keys with zero PATCHes, and
 * --allow-mass-removal lets it through, removing what the plan said.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { validateSite } from '../../src/core/site/validate-site.ts';
import type { FleetPlan } from '../../src/facade/plan.ts';
import type { RunSummary } from '../../src/facade/runs/run-results.ts';
import { adminCore, createNode, exits, nodePatchCount, relabelCli as relabel, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

/** Per key, the counts of a plan or a run summary (keys with any change only). */
function changes(labels: Record<string, { gain: number; change: number; lose: number; adopt: number }>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels)
      .map(([key, e]): [string, string] => [key, `gain ${e.gain}, change ${e.change}, lose ${e.lose}, adopt ${e.adopt}`])
      .filter(([, text]) => text !== 'gain 0, change 0, lose 0, adopt 0'),
  );
}

describe('relabel plan and the mass-removal brake', () => {
  const prefix = `fp${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let stack: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;
  const core = adminCore();

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    stack = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: stack.taskQueue };
    for (const name of site.nodes) await createNode(core, name);
  });
  after(async () => stack?.stop());

  /** Runs update-labels to the end, then sums the run up from the store (`relabel status --summary`). */
  async function runAndSum(args: string[]): Promise<{ summary: RunSummary; result: { removal?: { removed: number } } }> {
    const report = JSON.parse(exits(await relabel([...args, '-o', 'json'], env), 0).stdout) as {
      workflowId: string;
      runId: string;
      result: { removal?: { removed: number } };
    };
    const summed = JSON.parse(exits(await relabel(['status', report.workflowId, '--run-id', report.runId, '--summary', '-o', 'json'], env), 0).stdout) as {
      summary: RunSummary;
    };
    return { summary: summed.summary, result: report.result };
  }

  it('plans the sample site with every label source; the real run writes exactly the planned counts', async () => {
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    const { design } = validation;
    const started = Date.now();
    const plan = JSON.parse(exits(await relabel(['plan', '--all', '--nodes-detail', '--limit', '24', '-o', 'json'], env), 0).stdout) as FleetPlan;
    const planMs = Date.now() - started;
    assert.equal(plan.targets, 24);
    assert.deepEqual(plan.statuses, { success: 24 });
    assert.equal(plan.removal?.removed, 0);
    assert.equal(plan.removal?.exceeded, false);
    // The worker weighs the workload impact of every node whose labels change (no DaemonSet selects these nodes).
    assert.ok(plan.impact && !('unavailable' in plan.impact), `the plan weighs its workload impact: ${JSON.stringify(plan.impact)}`);
    assert.equal(plan.impact.totals.nodesChanged, 24);

    // Sources of known labels of the sample site, as its documents give them.
    const nodeDocs = site.files
      .flatMap((f) => parseAllDocuments(f.text).map((d) => d.toJS() as Record<string, any>))
      .filter((d) => d?.schema === 'drydock/BaremetalNode/v1');
    const overridden = nodeDocs.find((d) => d.data.metadata?.owner_data?.['openstack-libvirt'] === 'qemu')?.metadata.name as string;
    assert.ok(overridden, 'the sample site overrides openstack-libvirt on a node');
    const detail = new Map((plan.nodes?.items ?? []).map((n) => [n.node, n]));
    assert.equal(detail.size, 24);
    const sourceOf = (node: string, key: string) => detail.get(node)?.labels?.[key];
    assert.deepEqual(sourceOf(overridden, 'openstack-libvirt'), { value: 'qemu', source: { kind: 'node' } });
    const compute = nodeDocs.find((d) => d.data.host_profile === 'compute' && d.data.metadata?.owner_data === undefined)?.metadata.name as string;
    const dpdk = nodeDocs.find((d) => d.data.host_profile === 'compute-dpdk')?.metadata.name as string;
    assert.deepEqual(sourceOf(compute, 'sriov'), { value: 'enabled', source: { kind: 'host_profile', profile: 'compute', depth: 1 } });
    assert.deepEqual(sourceOf(compute, 'node-exporter'), { value: 'enabled', source: { kind: 'host_profile', profile: 'base', depth: 2 } });
    assert.deepEqual(sourceOf(dpdk, 'node-exporter'), { value: 'enabled', source: { kind: 'host_profile', profile: 'base', depth: 3 } });
    assert.deepEqual(sourceOf(dpdk, 'openvswitch'), { value: 'dpdk', source: { kind: 'host_profile', profile: 'compute-dpdk', depth: 1 } });
    assert.equal(sourceOf(dpdk, 'sriov'), undefined, 'compute-dpdk deletes sriov');
    const rack = design.nodes[compute]?.rack as string;
    assert.deepEqual(sourceOf(compute, 'power-domain')?.source, { kind: 'rack', rack });
    assert.deepEqual(sourceOf(compute, 'relabel.airshipit.org/rack'), { value: rack, source: { kind: 'generated', generator: 'rack' } });
    assert.deepEqual(sourceOf(compute, 'relabel.airshipit.org/site')?.source, { kind: 'generated', generator: 'site' });
    assert.deepEqual(sourceOf(compute, 'tag.relabel.airshipit.org/compute')?.source, { kind: 'generated', generator: 'tag' });
    assert.deepEqual(sourceOf(compute, 'relabel.airshipit.org/host-profile')?.source, { kind: 'generated', generator: 'host_profile' });
    for (const n of plan.nodes?.items ?? [])
      assert.deepEqual(Object.keys(n.labels ?? {}), Object.keys(design.nodes[n.node]?.labels ?? {}), `${n.node}: every desired label has its source`);

    // Per key: the distinct sources with node counts add up to the nodes wanting it.
    const libvirt = plan.labels['openstack-libvirt'];
    assert.ok(libvirt);
    assert.equal(
      libvirt.sources.reduce((n, s) => n + s.nodes, 0),
      libvirt.desired,
    );
    assert.ok(libvirt.sources.some((s) => s.source.kind === 'node' && s.nodes === 1));
    assert.ok(
      libvirt.sources.some((s) => s.source.kind === 'host_profile' && s.source.profile === 'compute' && s.source.depth === 2),
      'through compute-dpdk',
    );
    const exporter = plan.labels['node-exporter'];
    assert.deepEqual(exporter?.desired, 24);
    assert.deepEqual(
      new Set(exporter?.sources.map((s) => s.source.kind === 'host_profile' && `${s.source.profile}@${s.source.depth}`)),
      new Set(['base@2', 'base@3']),
    );

    const text = exits(await relabel(['plan', '--all'], env), 0).stdout;
    assert.match(text, /^plan of revision 1 for site .*: 24 target node\(s\), 24 planned, 24 a run would write; nothing written/m);
    assert.match(text, /^LABEL\s+NODES\s+GAIN\s+CHANGE\s+LOSE\s+ADOPT\s+SOURCES$/m);
    assert.match(text, /^node-exporter\s+24\s+24\s+0\s+0\s+0\s+host profile base \(depth 2\) ×\d+, host profile base \(depth 3\) ×\d+$/m);
    assert.match(text, /^power-domain\s+24\s+24\s+0\s+0\s+0\s+rack \S+ ×8, rack \S+ ×8, rack \S+ ×8$/m);
    assert.match(text, /^mass-removal brake: a run would go ahead: it would remove 0 of 0 owned labels/m);
    assert.match(text, /^workload impact on 24 node\(s\) whose labels or taints change: /m);

    const patches = await nodePatchCount();
    assert.equal(await nodePatchCount(), patches, 'planning wrote nothing');
    const run = await runAndSum(['update-labels', '--all', '--wait']);
    assert.deepEqual(changes(run.summary.labels), changes(plan.labels), 'the run wrote per key exactly what the plan said');
    assert.equal((await nodePatchCount()) - patches, 24);
    const written = await core.readNode({ name: compute });
    assert.equal(written.metadata?.labels?.['node-exporter'], 'enabled');
    console.log(`relabel plan over 24 nodes (CLI process, dry run, summary): ${planMs} ms`);
  });

  it('the brake refuses a run removing most owned labels, naming counts and keys, with zero PATCHes; --allow-mass-removal lets it through', async () => {
    // Revision 2: the host profiles' owner_data and tags gone and the rack labels no longer generated.
    const stripped = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/HostProfile/v1' && doc.data.metadata) doc.data.metadata = { ...doc.data.metadata, owner_data: {}, tags: [] };
      if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.generated_labels.rack_labels = false;
    });
    const staged = exits(await relabel(['docs', 'stage', 'site', '-o', 'json', ...(await writeFiles(stripped.files))], env), 0);
    assert.ok(staged.stdout);
    exits(await relabel(['docs', 'commit', '-m', 'strip profiles'], env), 0);

    const plan = JSON.parse(exits(await relabel(['plan', '--all', '-o', 'json'], env), 0).stdout) as FleetPlan;
    assert.equal(plan.revision, 2);
    assert.ok(plan.removal?.exceeded, JSON.stringify(plan.removal));
    assert.ok((plan.removal?.removed ?? 0) > (plan.removal?.owned ?? 0) / 2);
    assert.equal(plan.removal?.nodes, 24);
    assert.equal(plan.labels['node-exporter']?.lose, 24);
    assert.equal(plan.labels['node-exporter']?.desired, 0);
    assert.match(
      exits(await relabel(['plan', '--all'], env), 0).stdout,
      /^mass-removal brake: a run would be REFUSED \(allow it with --allow-mass-removal\): it would remove \d+ of \d+ owned labels/m,
    );

    const before = await nodePatchCount();
    const refused = exits(await relabel(['update-labels', '--all', '--wait'], env), 3);
    const { removed, owned } = plan.removal ?? { removed: 0, owned: 0 };
    assert.match(
      refused.stdout,
      new RegExp(
        `run failed: MassRemovalRefused: mass-removal brake: run \\d+ would remove ${removed} of ${owned} owned labels \\(\\d+%\\) on 24 nodes, more than the policy's max_removal_fraction 0\\.5; keys: .*node-exporter \\(24 nodes\\)`,
      ),
    );
    assert.match(refused.stdout, /Nothing was written\. .*--allow-mass-removal/);
    assert.equal(await nodePatchCount(), before, 'a refused run sends no PATCH');
    assert.equal((await core.readNode({ name: site.nodes[0] as string })).metadata?.labels?.['node-exporter'], 'enabled');

    const allowed = await runAndSum(['update-labels', '--all', '--allow-mass-removal', '--wait']);
    assert.deepEqual(changes(allowed.summary.labels), changes(plan.labels), 'the run removed per key exactly what the plan said');
    assert.equal(allowed.result.removal?.removed, removed);
    assert.equal((await nodePatchCount()) - before, 24);
    assert.equal((await core.readNode({ name: site.nodes[0] as string })).metadata?.labels?.['node-exporter'], undefined);
  });
});

/** Writes files to a fresh directory; returns the file paths. */
async function writeFiles(files: readonly { source: string; text: string }[]): Promise<string[]> {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'relabel-fleet-plan-'));
  return files.map((f) => {
    const path = join(dir, f.source);
    writeFileSync(path, f.text);
    return path;
  });
}
