import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from './constants.ts';
import { DEFAULT_SITE_POLICY } from '../site/label-policy.ts';
import type { Design } from '../site/validate-site.ts';
import { planNode, type ObservedNode } from './node-plan.ts';
import type { Taint } from './taints.ts';

const design = (nodes: Record<string, Record<string, string>>, liftUninitializedTaint = false): Design =>
  ({
    site: 's',
    nodes: Object.fromEntries(Object.entries(nodes).map(([name, labels]) => [name, { name, labels }])),
    racks: {},
    policy: { ...DEFAULT_SITE_POLICY, liftUninitializedTaint },
  }) as unknown as Design;

const state = (name: string, labels: Record<string, string>, owned?: string, taints: Taint[] = []): ObservedNode => ({
  name,
  resourceVersion: '7',
  labels,
  annotations: owned === undefined ? {} : { [OWNED_LABELS_ANNOTATION]: owned },
  taints,
});

describe('planNode', () => {
  it('settles a node already as desired, keeps the observed state of one to change, and plans in a dry run', () => {
    const d = design({ n1: { a: '1' } }, true);
    assert.deepEqual(planNode(d, state('n1', { a: '1' }, 'a'), false), {
      node: 'n1',
      status: 'success',
      detail: { set: {}, removed: [], adopted: [], unchanged: 1 },
      observed: null,
    });
    const pending = planNode(d, state('n1', { a: '0', x: 'y' }, 'a'), false);
    assert.equal(pending.status, 'pending');
    assert.deepEqual(pending.observed, { resourceVersion: '7', labels: { a: '0', x: 'y' }, annotations: { [OWNED_LABELS_ANNOTATION]: 'a' }, taints: [] });
    const tainted = state('n1', { a: '1' }, 'a', [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    assert.deepEqual(planNode(design({ n1: { a: '1', b: '2' } }), state('n1', { a: '0', x: 'y' }, 'a'), true).detail, {
      set: { a: '1', b: '2' },
      was: { a: '0' },
      removed: [],
      adopted: [],
      unchanged: 0,
      taintLifted: false,
    });
    assert.deepEqual(planNode(d, tainted, true), {
      node: 'n1',
      status: 'success',
      detail: { set: {}, removed: [], adopted: [], unchanged: 1, taintLifted: true },
      observed: null,
    });
  });

  it('plans the lift of the join taint the policy names, and only of it', () => {
    const startup = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
    const d = { ...design({ n1: { a: '1' } }, true), policy: { ...DEFAULT_SITE_POLICY, liftUninitializedTaint: true, joinTaintKey: startup } } as Design;
    const withStartup = state('n1', { a: '1' }, 'a', [{ key: startup, effect: 'NoSchedule' }]);
    assert.equal(planNode(d, withStartup, true).detail?.taintLifted, true);
    assert.equal(planNode(d, withStartup, false).status, 'pending', 'the lift is a write');
    const withDefault = state('n1', { a: '1' }, 'a', [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    assert.equal(planNode(d, withDefault, false).status, 'success', 'the default key is not the join taint of this policy');
  });

  it("settles a node as desired whatever run's applied-run record it carries; a dry run plans the same", () => {
    const d = design({ n1: { a: '1' } });
    const applied = (labels: Record<string, string>): ObservedNode => ({
      ...state('n1', labels, 'a'),
      annotations: { [OWNED_LABELS_ANNOTATION]: 'a', [APPLIED_ANNOTATION]: 'revision=1,run=4' },
    });
    for (const dryRun of [false, true]) {
      assert.deepEqual(planNode(d, applied({ a: '1' }), dryRun), {
        node: 'n1',
        status: 'success',
        detail: { set: {}, removed: [], adopted: [], unchanged: 1 },
        observed: null,
      });
      assert.deepEqual(
        planNode(d, applied({ a: '0' }), dryRun).detail ?? null,
        dryRun ? { set: { a: '1' }, was: { a: '0' }, removed: [], adopted: [], unchanged: 0, taintLifted: false } : null,
      );
    }
  });
});
