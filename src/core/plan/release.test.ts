import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatAppliedRun } from './applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION, RECORD_ANNOTATIONS } from './constants.ts';
import { planLabels, type PlanPolicy } from './label-plan.ts';
import { nodePatch, type NodeLabelState, type NodePatch } from './node-reconcile.ts';
import { ownedLabelsPresent, releaseAudit, releaseRefusal, releaseWants } from './release.ts';
import type { Taint } from './taints.ts';

const policy: PlanPolicy = { reconcileOsArchAliases: true, protectedKeys: [] };

/** `state` after a merge patch as the API server applies it (null removes; the taint list is replaced). */
function patched(state: NodeLabelState, patch: NodePatch | null): NodeLabelState {
  if (patch === null) return state;
  const merge = (into: Readonly<Record<string, string>>, changes: Record<string, string | null> | undefined) => {
    const next: Record<string, string> = { ...into };
    for (const [key, value] of Object.entries(changes ?? {})) {
      if (value === null) delete next[key];
      else next[key] = value;
    }
    return next;
  };
  return {
    ...state,
    labels: merge(state.labels, patch.metadata.labels),
    annotations: merge(state.annotations, patch.metadata.annotations),
    taints: patch.spec ? (patch.spec.taints ?? []) : state.taints,
  };
}

/** The one patch a release sends for `state`: what its plan wants is nothing, and the applied record goes. */
function released(state: NodeLabelState): NodeLabelState {
  const wants = releaseWants(policy);
  const plan = planLabels({ ...state, desired: wants.labels, desiredAnnotations: wants.annotations, desiredTaints: wants.taints, policy });
  return patched(state, nodePatch(plan, state, false, null));
}

const theirs = {
  labels: { 'kubernetes.io/hostname': 'n1', 'karpenter.sh/nodepool': 'retired', team: 'a' },
  annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'example.org/owner': 'ops' },
  taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] as Taint[],
};

/** A node relabel wrote (labels, an annotation, a taint and its four records) over `theirs`. */
function relabelled(extra: { labels?: Record<string, string>; taints?: Taint[] } = {}): NodeLabelState {
  const labels = { role: 'storage', rack: 'r1', ...extra.labels };
  const taints = [{ key: 'example.com/dedicated', value: 'x', effect: 'NoSchedule' }, ...(extra.taints ?? [])] as Taint[];
  return {
    resourceVersion: '7',
    labels: { ...theirs.labels, ...labels },
    annotations: {
      ...theirs.annotations,
      'example.com/asset': 'a1',
      [OWNED_LABELS_ANNOTATION]: Object.keys(labels).sort().join(','),
      [OWNED_ANNOTATIONS_ANNOTATION]: 'example.com/asset',
      [OWNED_TAINTS_ANNOTATION]: taints
        .map((t) => `${t.key}:${t.effect}`)
        .sort()
        .join(','),
      [APPLIED_ANNOTATION]: formatAppliedRun({ revision: 5, run: 17, site: 's', set: 'general' }),
    },
    taints: [...theirs.taints, ...taints],
  };
}

describe('release plan', () => {
  it("removes exactly the owned labels, annotations and taints and the four records; everyone else's keys stay byte for byte", () => {
    const after = released(relabelled());
    assert.deepEqual(after.labels, theirs.labels);
    assert.deepEqual(after.annotations, theirs.annotations);
    assert.deepEqual(after.taints, theirs.taints);
    for (const record of RECORD_ANNOTATIONS) assert.equal(Object.hasOwn(after.annotations, record), false, record);
    assert.deepEqual(released(after), after, 'releasing again changes nothing');
  });

  it('for any owned labels and taints over any of theirs, leaves exactly theirs', () => {
    const key = fc.constantFrom('a', 'b', 'example.com/c', 'd');
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.constantFrom('1', '2', '')),
        fc.subarray(['NoSchedule', 'NoExecute', 'PreferNoSchedule'] as const),
        (owned, effects) => {
          const taints = effects.map((effect) => ({ key: 'example.com/owned', effect }));
          const after = released(relabelled({ labels: owned, taints }));
          assert.deepEqual(after.labels, theirs.labels);
          assert.deepEqual(after.annotations, theirs.annotations);
          assert.deepEqual(after.taints, theirs.taints);
        },
      ),
    );
  });

  it('counts the owned labels a node carries for the brake', () => {
    assert.equal(ownedLabelsPresent(relabelled()), 2);
    assert.equal(ownedLabelsPresent({ labels: { rack: 'r1' }, annotations: { [OWNED_LABELS_ANNOTATION]: 'rack,role' } }), 1);
  });
});

describe('release refusal', () => {
  const base = { site: 's', siteless: true, hold: { kind: 'none' } as const, revision: 4 };
  it('may release a node carrying a record of the site that the latest design does not hold', () => {
    assert.equal(releaseRefusal({ ...base, node: 'n1', observed: relabelled() }), null);
  });

  it('refuses, naming the node and why: not in the cluster, no record, another site’s, or still held by the design', () => {
    const other = relabelled();
    other.annotations = { ...other.annotations, [APPLIED_ANNOTATION]: formatAppliedRun({ revision: 5, run: 17, site: 'other' }) };
    const siteless = relabelled();
    siteless.annotations = { ...siteless.annotations, [APPLIED_ANNOTATION]: formatAppliedRun({ revision: 5, run: 17 }) };
    const cases: [Parameters<typeof releaseRefusal>[0], RegExp][] = [
      [{ ...base, node: 'gone', observed: null }, /node gone is not in the cluster/],
      [{ ...base, node: 'n1', observed: { labels: {}, annotations: {} } }, /node n1 carries no applied-run record/],
      [{ ...base, node: 'n1', observed: other }, /record of site other, not site s's/],
      [{ ...base, siteless: false, node: 'n1', observed: siteless }, /names no site, in a cluster holding other sites/],
      [{ ...base, node: 'n1', observed: relabelled(), hold: { kind: 'named' } }, /named by a BaremetalNode of revision 4/],
      [{ ...base, node: 'n1', observed: relabelled(), hold: { kind: 'member', set: 'gpu' } }, /member of node set gpu in revision 4/],
      [{ ...base, node: 'n1', observed: relabelled(), hold: { kind: 'conflict', sets: ['a', 'b'] } }, /matched by node sets a, b/],
    ];
    for (const [input, message] of cases) assert.match(releaseRefusal(input) ?? '', message);
    assert.equal(releaseRefusal({ ...base, node: 'n1', observed: siteless }), null, 'a site-less record in a single-site cluster is this site’s');
  });

  it('a release started by a detection records who started the detection, via release', () => {
    assert.deepEqual(releaseAudit(undefined, 'relabel-drift/s'), { by: 'workflow:relabel-drift/s', via: 'release' });
    assert.deepEqual(releaseAudit({ by: 'relabel-drift/s', via: 'schedule' }, 'w'), { by: 'schedule:relabel-drift/s', via: 'release' });
    assert.deepEqual(releaseAudit({ by: 'alice', via: 'cli' }, 'w'), { by: 'alice', via: 'release' });
  });
});
