import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatAppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from './constants.ts';
import { carriedRevision, classifyDrift, DRIFT_PRECEDENCE, DriftState, driftText, type NodeWants, type ObservedNode } from './drift.ts';
import { applyOwnership, applyPlan, planLabels, type PlanPolicy } from './label-plan.ts';
import { DEFAULT_SITE_POLICY, LabelPolicyData, sitePolicyFrom } from '../site/label-policy.ts';

const policy: PlanPolicy = { reconcileOsArchAliases: true, protectedKeys: [] };
const wants = (labels: Record<string, string>, extra: Partial<NodeWants> = {}): NodeWants => ({ labels, annotations: {}, taints: [], policy, ...extra });

/** The node as an update run at `revision` (run `run`) leaves it, starting from `start`. */
function applied(want: NodeWants, revision: number, run = 7, start: ObservedNode = { labels: {}, annotations: {}, taints: [] }): ObservedNode {
  const plan = planLabels({
    ...start,
    taints: start.taints ?? [],
    desired: want.labels,
    desiredAnnotations: want.annotations,
    desiredTaints: want.taints,
    policy: want.policy,
  });
  return {
    labels: applyPlan(start.labels, plan),
    annotations: { ...applyOwnership(start.annotations, plan), [APPLIED_ANNOTATION]: formatAppliedRun({ revision, run }) },
    taints: plan.taints?.next ?? [],
  };
}

const r1 = wants(
  { 'ceph-osd': 'enabled', role: 'storage' },
  { annotations: { 'example.com/asset': 'a1' }, taints: [{ key: 'example.com/dedicated', value: 'x', effect: 'NoSchedule' }] },
);
const r2 = wants(
  { 'ceph-osd': 'enabled', role: 'compute' },
  { annotations: { 'example.com/asset': 'a1' }, taints: [{ key: 'example.com/dedicated', value: 'x', effect: 'NoSchedule' }] },
);

describe('drift classification', () => {
  it('missing: a design node not in the cluster', () => {
    assert.deepEqual(classifyDrift({ node: 'n', observed: null, latest: r1, carried: undefined }), { node: 'n', state: 'missing', revision: null, run: null });
  });

  it('unmanaged: no applied record, even when its labels are off', () => {
    const v = classifyDrift({ node: 'n', observed: { labels: { role: 'x' }, annotations: {} }, latest: r1, carried: r1 });
    assert.equal(v.state, DriftState.unmanaged);
    assert.equal(v.revision, null);
  });

  it('unmanaged with a note: a record naming a revision whose wants are unknown', () => {
    const v = classifyDrift({ node: 'n', observed: applied(r1, 9), latest: r1, carried: undefined });
    assert.equal(v.state, DriftState.unmanaged);
    assert.equal(v.revision, 9);
    assert.match(v.note ?? '', /revision 9/);
  });

  it('in sync: as its revision wants, and the latest wants the same', () => {
    const observed = applied(r1, 1, 3);
    assert.deepEqual(classifyDrift({ node: 'n', observed, latest: r1, carried: r1 }), { node: 'n', state: 'in_sync', revision: 1, run: 3 });
    assert.equal(carriedRevision(observed), 1);
  });

  it('pending, not drifted: a newer committed revision not yet applied', () => {
    const v = classifyDrift({ node: 'n', observed: applied(r1, 1), latest: r2, carried: r1 });
    assert.equal(v.state, DriftState.pending);
    assert.equal(v.changes, 1);
  });

  it('drifted: an owned label changed and another removed, with the keys; beats pending', () => {
    const observed = applied(r1, 1);
    const edited = { ...observed, labels: { ...observed.labels, role: 'gpu' } };
    delete (edited.labels as Record<string, string>)['ceph-osd'];
    const v = classifyDrift({ node: 'n', observed: edited, latest: r2, carried: r1 });
    assert.equal(v.state, DriftState.drifted);
    assert.deepEqual(v.keys?.labels, [
      { key: 'ceph-osd', change: 'removed', want: 'enabled' },
      { key: 'role', change: 'changed', want: 'storage', have: 'gpu' },
    ]);
    assert.deepEqual(v.keys?.annotations, []);
    assert.equal(
      driftText(v.keys ?? { labels: [], annotations: [], taints: [], records: [] }),
      'label ceph-osd removed; label role changed (wants storage, has gpu)',
    );
  });

  it('drifted: an owned annotation, an owned taint and an ownership record', () => {
    const observed = applied(r1, 1);
    const annotations = { ...observed.annotations, 'example.com/asset': 'other', [OWNED_LABELS_ANNOTATION]: 'role' };
    const v = classifyDrift({ node: 'n', observed: { labels: observed.labels, annotations, taints: [] }, latest: r1, carried: r1 });
    assert.equal(v.state, DriftState.drifted);
    assert.deepEqual(v.keys?.annotations, [{ key: 'example.com/asset', change: 'changed' }]);
    assert.deepEqual(v.keys?.taints, [{ key: 'example.com/dedicated:NoSchedule', change: 'removed' }]);
    assert.deepEqual(v.keys?.records, [OWNED_LABELS_ANNOTATION]);
  });

  it('not drift: labels nobody owns, and the kubelet’s os/arch aliases disagreeing', () => {
    const observed = applied(r1, 1);
    const labels = { ...observed.labels, 'team.example.com/x': 'y', 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'windows' };
    assert.equal(classifyDrift({ node: 'n', observed: { ...observed, labels }, latest: r1, carried: r1 }).state, DriftState.inSync);
  });

  it('precedence lists every state once, missing first, in_sync last', () => {
    assert.deepEqual([...DRIFT_PRECEDENCE].sort(), Object.values(DriftState).sort());
    assert.equal(DRIFT_PRECEDENCE[0], 'missing');
    assert.equal(DRIFT_PRECEDENCE.at(-1), 'in_sync');
    assert.ok(DRIFT_PRECEDENCE.indexOf('drifted') < DRIFT_PRECEDENCE.indexOf('pending'));
  });

  it('the policy field is optional and defaults to report', () => {
    assert.equal(DEFAULT_SITE_POLICY.drift.action, 'report');
    const base = {
      generated_labels: { rack: true, host_profile: true, tags: true, rack_labels: true, site: true },
      protected_keys: [],
      reconcile_os_arch_aliases: true,
      lift_uninitialized_taint: false,
      default_concurrency: 5,
    };
    assert.equal(sitePolicyFrom(LabelPolicyData.parse(base)).drift.action, 'report');
    assert.equal(sitePolicyFrom(LabelPolicyData.parse({ ...base, drift: { action: 'heal' } })).drift.action, 'heal');
    assert.equal(LabelPolicyData.safeParse({ ...base, drift: { action: 'fix' } }).success, false);
    assert.equal(LabelPolicyData.safeParse({ ...base, drift: { action: 'heal', every: '5m' } }).success, false);
  });
});

const key = fc.constantFrom('a', 'b', 'c', 'example.com/d', 'e');
const value = fc.constantFrom('1', '2', '');
const labelMap = fc.dictionary(key, value, { maxKeys: 5 });

describe('drift classification (properties)', () => {
  it('a node just applied at its revision is never drifted; it is pending exactly when the latest would change it', () => {
    fc.assert(
      fc.property(labelMap, labelMap, labelMap, (start, carriedLabels, latestLabels) => {
        const carried = wants(carriedLabels);
        const latest = wants(latestLabels);
        const observed = applied(carried, 1, 1, { labels: start, annotations: {} });
        const v = classifyDrift({ node: 'n', observed, latest, carried });
        assert.notEqual(v.state, DriftState.drifted);
        const changes = planLabels({ ...observed, taints: [], desired: latestLabels, desiredAnnotations: {}, desiredTaints: [], policy });
        const expectPending = !changes.empty;
        assert.equal(v.state, expectPending ? DriftState.pending : DriftState.inSync);
      }),
    );
  });

  it('any edit of an owned label after the run is drift naming exactly the edited keys; healing (applying again) clears it', () => {
    fc.assert(
      fc.property(labelMap, labelMap, fc.dictionary(key, fc.option(value, { nil: undefined }), { maxKeys: 5 }), (start, desired, edits) => {
        const carried = wants(desired);
        const observed = applied(carried, 1, 1, { labels: start, annotations: {} });
        const labels: Record<string, string> = { ...observed.labels };
        for (const [k, v] of Object.entries(edits)) {
          if (v === undefined) delete labels[k];
          else labels[k] = v;
        }
        const edited = { ...observed, labels };
        const v = classifyDrift({ node: 'n', observed: edited, latest: carried, carried });
        const touched = Object.keys(desired)
          .filter((k) => labels[k] !== desired[k])
          .sort();
        if (touched.length === 0) assert.notEqual(v.state, DriftState.drifted);
        else {
          assert.equal(v.state, DriftState.drifted);
          assert.deepEqual(
            v.keys?.labels.map((l) => l.key),
            touched,
          );
        }
        const healed = applied(carried, 1, 2, edited);
        assert.equal(classifyDrift({ node: 'n', observed: healed, latest: carried, carried }).state, DriftState.inSync);
      }),
    );
  });
});
