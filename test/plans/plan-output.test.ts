/**
 * `relabel plan` for people: the per-key table with sources, the brake's
 * verdict, and the per-node detail with each desired label's source.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planText } from '../../src/cli/plan-command.ts';
import { brakeText } from '../../src/cli/run-output.ts';
import { summaryMarkdown } from '../../src/workflows/rollup.ts';
import type { FleetPlan } from '../../src/facade/plan.ts';

const plan: FleetPlan = {
  workflowId: 'update-labels/lab/dry-run/abcd1234',
  runId: 'r1',
  run: 7,
  revision: 3,
  site: 'lab',
  targets: 3,
  statuses: { success: 2, failure: 1 },
  failureTypes: { NodeNotFound: 1 },
  changing: 2,
  nodeSets: {},
  warnings: [],
  labels: {
    'node-exporter': {
      desired: 2,
      gain: 0,
      change: 0,
      lose: 0,
      adopt: 0,
      sources: [
        { source: { kind: 'host_profile', profile: 'base', depth: 2 }, nodes: 1 },
        { source: { kind: 'host_profile', profile: 'base', depth: 3 }, nodes: 1 },
      ],
      moreSources: 0,
    },
    sriov: { desired: 0, gain: 0, change: 0, lose: 2, adopt: 0, sources: [], moreSources: 0 },
    zone: {
      desired: 2,
      gain: 1,
      change: 1,
      lose: 0,
      adopt: 0,
      sources: [
        { source: { kind: 'node' }, nodes: 1 },
        { source: { kind: 'rack', rack: 'r1' }, nodes: 1 },
        { source: { kind: 'generated', generator: 'rack' }, nodes: 1 },
        { source: { kind: 'plugin', plugin: 'nfd' }, nodes: 1 },
      ],
      moreSources: 2,
    },
  },
  moreLabelKeys: 0,
  removal: { owned: 6, removed: 2, nodes: 2, keys: [{ key: 'sriov', nodes: 2 }], moreKeys: 0, maxFraction: 0.5, exceeded: false },
  impact: null,
};

describe('relabel plan output', () => {
  it('shows what it covers, the per-key table with sources, and the brake', () => {
    const lines = planText(plan).split('\n');
    assert.match(
      lines[0] ?? '',
      /^plan of revision 3 for site lab: 3 target node\(s\), 2 planned, 2 a run would write; nothing written \(dry run update-labels\/lab\/dry-run\/abcd1234, run 7; /,
    );
    assert.equal(lines[1], 'not planned: NodeNotFound 1');
    assert.match(planText(plan), /^LABEL\s+NODES\s+GAIN\s+CHANGE\s+LOSE\s+ADOPT\s+SOURCES$/m);
    assert.match(planText(plan), /^node-exporter\s+2\s+0\s+0\s+0\s+0\s+host profile base \(depth 2\) ×1, host profile base \(depth 3\) ×1$/m);
    assert.match(planText(plan), /^sriov\s+0\s+0\s+0\s+2\s+0\s+-$/m);
    assert.match(planText(plan), /^zone\s+2\s+1\s+1\s+0\s+0\s+node ×1, rack r1 ×1, generated \(rack\) ×1, \+3 more$/m);
    assert.equal(
      lines.at(-1),
      "mass-removal brake: a run would go ahead: it would remove 2 of 6 owned labels (33%) on 2 nodes, within the policy's max_removal_fraction 0.5; keys: sriov (2 nodes)",
    );
  });

  it('says when the brake would refuse, and after a run what it removed', () => {
    const refused = { ...plan.removal!, removed: 5, exceeded: true };
    assert.match(
      brakeText(refused, true),
      /^mass-removal brake: a run would be REFUSED \(allow it with --allow-mass-removal\): it would remove 5 of 6 owned labels \(83%\) on 2 nodes, more than/,
    );
    assert.match(brakeText(refused, false), /^removals: would remove 5 of 6 owned labels .* \(allowed\)$/);
  });

  it('lists each node of the page with its plan and every desired label with its source', () => {
    const detailed: FleetPlan = {
      ...plan,
      nodes: {
        total: 3,
        offset: 0,
        items: [
          {
            node: 'n1',
            status: 'success',
            set: { zone: 'a' },
            removed: ['sriov'],
            adopted: [],
            written: false,
            labels: {
              'node-exporter': { value: 'enabled', source: { kind: 'host_profile', profile: 'base', depth: 2 } },
              zone: { value: 'a', source: { kind: 'node' } },
            },
          },
        ],
      },
    };
    const text = planText(detailed);
    assert.match(text, /^NODE\s+NODE SET\s+STATUS\s+SET\s+REMOVED\s+ADOPTED\s+DETAIL$/m);
    assert.match(text, /^n1\s+-\s+success\s+1\s+1\s+0\s+set zone=a; removed sriov$/m);
    assert.match(
      text,
      /^desired labels and their sources:\nNODE\s+LABEL\s+VALUE\s+SOURCE\nn1\s+node-exporter\s+enabled\s+host profile base \(depth 2\)\nn1\s+zone\s+a\s+node$/m,
    );
    assert.match(text, /^nodes 1–1 of 3 \(more with --offset 1\)$/m);
  });

  it('shows the workload impact: totals, DaemonSets with their nodes, workloads with their pods and budgets', () => {
    const sample = <T>(count: number, items: T[]) => ({ count, sample: items });
    const text = planText({
      ...plan,
      impact: {
        daemonSets: [{ namespace: 'ceph', name: 'ceph-osd', gains: sample(0, []), loses: sample(12, ['n01', 'n02', 'n03', 'n04']) }],
        moreDaemonSets: 0,
        workloads: [
          {
            namespace: 'web',
            workload: 'ReplicaSet/web-5d',
            evicted: sample(2, [
              { pod: 'web-1', node: 'n01', afterSeconds: 0 },
              { pod: 'web-2', node: 'n01', afterSeconds: 300 },
            ]),
            stranded: sample(0, []),
            disruptionBudgets: ['web-pdb'],
          },
        ],
        moreWorkloads: 0,
        disruptionBudgets: [{ namespace: 'web', name: 'web-pdb', evicted: 2, stranded: 0 }],
        moreDisruptionBudgets: 0,
        totals: { nodesChanged: 12, daemonSets: 1, podsGained: 0, podsLost: 12, podsEvicted: 2, podsStranded: 0, workloads: 1, disruptionBudgets: 1 },
      },
    });
    assert.match(text, /^workload impact on 12 node\(s\) whose labels or taints change: DaemonSet pods \+0 -12 \(1 DaemonSet\(s\)\); 2 pod\(s\) evicted/m);
    assert.match(text, /^ceph\/ceph-osd\s+0\s+12\s+-\s+n01, n02, n03 \(\+9\)$/m);
    assert.match(text, /^web\/ReplicaSet\/web-5d\s+2\s+0\s+web-1, web-2 \(after 300 s\)\s+-\s+web-pdb$/m);
    assert.equal(
      planText({ ...plan, impact: { unavailable: 'refused (HTTP 403)' } })
        .split('\n')
        .at(-1),
      'workload impact not weighed: refused (HTTP 403)',
    );
  });

  it("puts the impact's totals in a dry run's summary in the Temporal UI", () => {
    const result = {
      status: 'success' as const,
      run: 7,
      revision: 3,
      site: 'lab',
      dryRun: true,
      counts: { total: 3, success: 3, failure: 0, written: 0 },
      failures: [],
    };
    const totals = { nodesChanged: 12, daemonSets: 1, podsGained: 0, podsLost: 12, podsEvicted: 2, podsStranded: 1, workloads: 2, disruptionBudgets: 1 };
    const impact = { daemonSets: [], moreDaemonSets: 0, workloads: [], moreWorkloads: 0, disruptionBudgets: [], moreDisruptionBudgets: 0, totals };
    assert.equal(
      summaryMarkdown({ ...result, impact })
        .split('\n')
        .at(-1),
      'Workload impact on 12 changed nodes: DaemonSet pods +0 -12 (1 DaemonSets), 2 pods evicted, 1 stranded, 1 PodDisruptionBudgets (relabel plan lists them).',
    );
    assert.match(summaryMarkdown({ ...result, impact: { unavailable: 'refused' } }), /\nWorkload impact not weighed: refused$/);
    assert.doesNotMatch(summaryMarkdown(result), /Workload impact/);
  });
});
