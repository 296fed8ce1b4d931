import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAppliedRun, type AppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from './constants.ts';
import { classifyDrift, classifyOrphan, DRIFT_PRECEDENCE, DriftState, type NodeWants, type ObservedNode } from './drift.ts';
import type { PlanPolicy } from './label-plan.ts';
import { DEFAULT_SITE_POLICY, LabelPolicyData, sitePolicyFrom } from '../site/label-policy.ts';

const policy: PlanPolicy = { reconcileOsArchAliases: true, protectedKeys: [] };
const wants = (labels: Record<string, string>): NodeWants => ({ labels, annotations: {}, taints: [], policy });
const batch = wants({ workload: 'batch' });
const gpu = wants({ workload: 'gpu' });

/** A node carrying `labels` (all owned) and the record `applied`. */
const node = (labels: Record<string, string>, applied: AppliedRun | null): ObservedNode => ({
  labels,
  annotations: { [OWNED_LABELS_ANNOTATION]: Object.keys(labels).sort().join(','), ...(applied ? { [APPLIED_ANNOTATION]: formatAppliedRun(applied) } : {}) },
});

describe('drift: moved members', () => {
  it('moved: as the set its record names wants, and the latest design puts it in another set; the set it left is named', () => {
    const observed = node({ workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' });
    assert.deepEqual(classifyDrift({ node: 'kp', observed, latest: gpu, carried: batch, latestSet: 'gpu' }), {
      node: 'kp',
      revision: 2,
      run: 5,
      state: DriftState.moved,
      changes: 1,
      set: 'general',
    });
  });

  it('moved between a named node and a set, either way', () => {
    const named = node({ workload: 'batch' }, { revision: 2, run: 5, site: 's' });
    assert.equal(classifyDrift({ node: 'n', observed: named, latest: batch, carried: batch, latestSet: 'general' }).state, DriftState.moved);
    const member = node({ workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' });
    assert.equal(classifyDrift({ node: 'n', observed: member, latest: batch, carried: batch }).state, DriftState.moved);
  });

  it('drifted beats moved: an owned key edited since its run is drift, whatever the set', () => {
    const observed = node({ workload: 'edited' }, { revision: 2, run: 5, site: 's', set: 'general' });
    assert.equal(classifyDrift({ node: 'kp', observed, latest: gpu, carried: batch, latestSet: 'gpu' }).state, DriftState.drifted);
    assert.ok(DRIFT_PRECEDENCE.indexOf('drifted') < DRIFT_PRECEDENCE.indexOf('moved'));
    assert.ok(DRIFT_PRECEDENCE.indexOf('moved') < DRIFT_PRECEDENCE.indexOf('pending'));
  });

  it('not moved: in its own set; or a record from before records named the site and set (nothing says where it was written)', () => {
    const own = node({ workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' });
    assert.equal(classifyDrift({ node: 'kp', observed: own, latest: batch, carried: batch, latestSet: 'general' }).state, DriftState.inSync);
    const old = node({ workload: 'batch' }, { revision: 2, run: 5 });
    assert.equal(classifyDrift({ node: 'kp', observed: old, latest: gpu, carried: batch, latestSet: 'gpu' }).state, DriftState.pending);
  });
});

describe('drift: orphaned nodes', () => {
  it("orphaned: a node carrying this site's record, with the revision, run and set it names", () => {
    const observed = node({ workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' });
    assert.deepEqual(classifyOrphan({ node: 'kp', observed, site: 's', siteless: false }), {
      node: 'kp',
      state: DriftState.orphaned,
      revision: 2,
      run: 5,
      set: 'general',
    });
  });

  it("not this site's: no record, a hand-edited one, another site's, or a site-less one where site-less records are nobody's", () => {
    const nobody = (observed: ObservedNode, siteless = false) => classifyOrphan({ node: 'n', observed, site: 's', siteless });
    assert.equal(nobody(node({ a: '1' }, null)), null);
    assert.equal(nobody({ labels: {}, annotations: { [APPLIED_ANNOTATION]: 'revision=2, run=5' } }), null);
    assert.equal(nobody(node({}, { revision: 2, run: 5, site: 'other' }), true), null);
    assert.equal(nobody(node({}, { revision: 2, run: 5 })), null);
    assert.equal(nobody(node({}, { revision: 2, run: 5 }), true)?.state, DriftState.orphaned);
  });
});

describe('drift policy: orphans', () => {
  it('keep by default (absent from the policy), release when asked, nothing else', () => {
    const base = {
      generated_labels: { rack: true, host_profile: true, tags: true, rack_labels: true, site: true },
      protected_keys: [],
      reconcile_os_arch_aliases: true,
      lift_uninitialized_taint: false,
      default_concurrency: 5,
    };
    assert.equal(DEFAULT_SITE_POLICY.drift.orphans, undefined);
    assert.deepEqual(sitePolicyFrom(LabelPolicyData.parse({ ...base, drift: { action: 'report' } })).drift, { action: 'report' });
    assert.deepEqual(sitePolicyFrom(LabelPolicyData.parse({ ...base, drift: { action: 'report', orphans: 'keep' } })).drift, { action: 'report' });
    assert.deepEqual(sitePolicyFrom(LabelPolicyData.parse({ ...base, drift: { action: 'heal', orphans: 'release' } })).drift, {
      action: 'heal',
      orphans: 'release',
    });
    assert.equal(LabelPolicyData.safeParse({ ...base, drift: { action: 'report', orphans: 'delete' } }).success, false);
  });
});
