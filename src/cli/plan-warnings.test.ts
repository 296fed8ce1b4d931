import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planText } from './plan-command.ts';
import type { FleetPlan } from '../facade/plan.ts';
import { nodeSetWarnings } from '../core/plan/node-sets.ts';
import { createSummary } from '../facade/runs/run-results.ts';
import type { RunStatusReport } from '../facade/runs/runs.ts';
import { emptySetWarnings, outcomeText } from './run-output.ts';

const sets = {
  md: { selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } } },
  capi: { selector: { matchLabels: { 'node.cluster.x-k8s.io/deployment': 'md-0' } } },
  pool: { selector: { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'In' as const, values: ['general'] }] } },
};

describe('node set warnings of plans and runs', () => {
  it('warns of each set with no member, and of each selector on a label Cluster API keeps on Machines only', () => {
    const warnings = nodeSetWarnings(sets, { md: 0, pool: 0, capi: 4 });
    assert.deepEqual(warnings.slice(0, 2), [
      'node set "md" matches no node (no Node has labels matching cluster.x-k8s.io/deployment-name=md-0): nothing of it is written',
      'node set "pool" matches no node (no Node has labels matching karpenter.sh/nodepool in (general)): nothing of it is written',
    ]);
    assert.equal(warnings.length, 3);
    assert.match(warnings[2] ?? '', /^node set "md": selector reads label "cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/);
    assert.deepEqual(nodeSetWarnings(sets, { capi: 4, pool: 2 }), [], 'members and selectors on Node labels: nothing to say');
    assert.deepEqual(nodeSetWarnings(sets, {}), [], 'only the sets a plan targets or counts');
  });

  it('relabel plan shows them as warnings, not only as a count', () => {
    const plan = {
      workflowId: 'update-labels/lab/dry-run/x',
      runId: 'r',
      run: 1,
      revision: 2,
      site: 'lab',
      targets: 0,
      statuses: {},
      failureTypes: {},
      changing: 0,
      nodeSets: { md: 0 },
      warnings: nodeSetWarnings(sets, { md: 0 }),
      labels: {},
      moreLabelKeys: 0,
      removal: null,
      impact: null,
    } satisfies FleetPlan;
    const text = planText(plan);
    assert.match(text, /^node sets: md matches no node$/m);
    assert.match(text, /^warning: node set "md" matches no node \(no Node has labels matching cluster\.x-k8s\.io\/deployment-name=md-0\)/m);
    assert.match(text, /^warning: node set "md": selector reads label "cluster\.x-k8s\.io\/deployment-name", which Cluster API keeps on Machines only/m);
  });

  it("a run's outcome warns of each set it was started for that no node of it was a member of", () => {
    const run = (total: number, dryRun = false): RunStatusReport => ({
      workflowId: 'update-labels/lab',
      runId: 'r1',
      execution: 'COMPLETED',
      startTime: '2026-01-01T00:00:00.000Z',
      nodeSets: ['md', 'pool'],
      result: { status: 'success', run: 3, revision: 2, site: 'lab', dryRun, counts: { total, success: total, failure: 0, written: total }, failures: [] },
    });
    const summary = createSummary(3);
    summary.add({ node: 'p-1', status: 'success', written: true, nodeSet: 'pool' });
    const text = outcomeText(run(1), undefined, summary.result());
    assert.match(text, /^node set members: pool 1$/m);
    assert.match(text, /^warning: node set "md" matches no node: nothing of it was written$/m);
    assert.doesNotMatch(text, /node set "pool" matches no node/);
    assert.deepEqual(emptySetWarnings(run(0, true)), [
      'node set "md" matches no node: nothing of it was planned',
      'node set "pool" matches no node: nothing of it was planned',
    ]);
    assert.deepEqual(emptySetWarnings(run(4)), [], 'without the summary, a run with nodes cannot tell which set had none');
  });
});
