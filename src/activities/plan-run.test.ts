import { describe, it } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { OWNED_LABELS_ANNOTATION } from '../core/plan/constants.ts';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeState } from '../kube/nodes.ts';
import type { NodeResultUpdate, RunNodeRow, RunStore } from '../store/runs/run-store.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateSite } from '../core/site/validate-site.ts';
import { decodeDesign, encodeDesign } from '../store/designs/design-cache.ts';
import { planNode, planOf } from '../core/plan/node-plan.ts';
import { GET_THRESHOLD, planRun } from './plan-run.ts';

const design = (nodes: Record<string, Record<string, string>>, liftUninitializedTaint = false): Design =>
  ({
    site: 's',
    nodes: Object.fromEntries(Object.entries(nodes).map(([name, labels]) => [name, { name, labels }])),
    racks: {},
    policy: { ...DEFAULT_SITE_POLICY, liftUninitializedTaint },
  }) as unknown as Design;

const state = (name: string, labels: Record<string, string>, owned?: string, taints: NodeState['taints'] = []): NodeState => ({
  name,
  resourceVersion: '7',
  labels,
  annotations: owned === undefined ? {} : { [OWNED_LABELS_ANNOTATION]: owned },
  taints,
});

/** A run store holding one run's rows in memory. */
function memoryRuns(targets: string[]) {
  const rows = new Map<string, NodeResultUpdate>();
  const store = {
    async nodes(_id: number, q: { afterSeq?: number; limit: number }): Promise<RunNodeRow[]> {
      return targets
        .map((node, seq) => ({ seq, node, status: 'queued' as const, written: false, detail: null }))
        .filter((r) => r.seq > (q.afterSeq ?? -1))
        .slice(0, q.limit);
    },
    async setNodeResults(_id: number, updates: readonly NodeResultUpdate[]) {
      for (const u of updates) rows.set(u.node, u);
    },
  } as unknown as RunStore;
  return { store, rows };
}

describe('planRun', () => {
  it('GETs a small run: unchanged, pending, not in the design, not found', async () => {
    const d = design({ a: { k: 'v' }, b: { k: 'v' }, gone: { k: 'v' } });
    const cluster: Record<string, NodeState> = { a: state('a', { k: 'v' }, 'k'), b: state('b', {}) };
    const { store, rows } = memoryRuns(['a', 'b', 'ghost', 'gone']);
    const nodes = {
      async readNode(name: string) {
        const found = cluster[name];
        if (!found) throw new ApiException(404, 'not found', '', {});
        return found;
      },
      listNodes: () => {
        throw new Error('a small run does not LIST');
      },
      patchNode: () => {
        throw new Error('planning never writes');
      },
    };
    const plan = await planRun({ nodes, store }, { run: 1, revision: 3, design: d, dryRun: false });
    assert.deepEqual(plan.counts, { total: 4, success: 1, failure: 2, written: 0 });
    assert.equal(plan.toChange, 1);
    assert.deepEqual(
      [...rows.values()].map((r) => [r.node, r.status, r.detail?.error?.type]),
      [
        ['ghost', 'failure', 'NodeNotInDesign'],
        ['a', 'success', undefined],
        ['b', 'pending', undefined],
        ['gone', 'failure', 'NodeNotFound'],
      ],
    );
    assert.deepEqual(
      plan.failures.map((f) => f.node),
      ['ghost', 'gone'],
    );
    assert.deepEqual(plan.failureTypes, { NodeNotInDesign: 1, NodeNotFound: 1 });
  });

  it('LISTs a large run page by page and picks its targets out of the cluster', async () => {
    const names = Array.from({ length: GET_THRESHOLD + 50 }, (_, i) => `n${i}`);
    const d = design(Object.fromEntries(names.map((n) => [n, { k: 'v' }])));
    const { store, rows } = memoryRuns(names);
    const others = Array.from({ length: 30 }, (_, i) => state(`other${i}`, {}));
    const all = [...names.slice(1).map((n) => state(n, {})), ...others];
    const nodes = {
      readNode: () => {
        throw new Error('a large run does not GET');
      },
      async *listNodes({ pageSize }: { pageSize: number }) {
        for (let i = 0; i < all.length; i += pageSize) yield all.slice(i, i + pageSize);
      },
      patchNode: () => {
        throw new Error('planning never writes');
      },
    };
    const plan = await planRun({ nodes, store }, { run: 1, revision: 1, design: d, dryRun: false });
    assert.equal(plan.toChange, names.length - 1);
    assert.deepEqual(plan.failures, [{ node: 'n0', error: { type: 'NodeNotFound', message: 'node n0 not found in the cluster' } }]);
    assert.equal(rows.size, names.length, 'nodes of the cluster that are not targets are not recorded');
  });
});

describe('planRun and the RelabelFailed Events of targets not in the design', () => {
  /** Targets: `ghosts` names the cluster lacks, then `extras` nodes it has, none in the design, then `designed`. */
  function scenario(ghosts: number, extras: number, designed: number) {
    const ghostNames = Array.from({ length: ghosts }, (_, i) => `ghost${i}`);
    const extraNames = Array.from({ length: extras }, (_, i) => `extra${i}`);
    const designedNames = Array.from({ length: designed }, (_, i) => `d${i}`);
    const cluster = [...extraNames, ...designedNames].map((n) => ({ ...state(n, {}), uid: `uid-${n}` }));
    const reads: string[] = [];
    const nodes = {
      async readNode(name: string) {
        reads.push(name);
        const found = cluster.find((n) => n.name === name);
        if (!found) throw new ApiException(404, 'not found', '', {});
        return found;
      },
      async *listNodes({ pageSize }: { pageSize: number }) {
        for (let i = 0; i < cluster.length; i += pageSize) yield cluster.slice(i, i + pageSize);
      },
      patchNode: () => {
        throw new Error('planning never writes');
      },
    };
    const told: string[] = [];
    const events = {
      failed: (e: { node: string; uid?: string; error: { type: string } }) => told.push(`${e.node}/${e.uid}/${e.error.type}`),
      applied: () => undefined,
      idle: async () => undefined,
    };
    const { store } = memoryRuns([...ghostNames, ...extraNames, ...designedNames]);
    return { d: design(Object.fromEntries(designedNames.map((n) => [n, { k: 'v' }]))), nodes, store, events, told, reads, extraNames };
  }

  it('tells every undesigned target the cluster has, however many unknown names come first, and none of those names', async () => {
    const s = scenario(GET_THRESHOLD, 5, 2);
    const plan = await planRun({ nodes: s.nodes, store: s.store, events: s.events }, { run: 4, revision: 1, design: s.d, dryRun: false });
    assert.equal(plan.failureTypes.NodeNotInDesign, GET_THRESHOLD + 5);
    assert.deepEqual(
      s.told,
      s.extraNames.map((n) => `${n}/uid-${n}/NodeNotInDesign`),
    );
    assert.deepEqual(s.reads, [], 'more than the GET threshold of targets to look for: one LIST');
  });

  it('a small run GETs its undesigned targets to know which exist; a dry run tells nothing', async () => {
    const s = scenario(3, 2, 2);
    await planRun({ nodes: s.nodes, store: s.store, events: s.events }, { run: 4, revision: 1, design: s.d, dryRun: false });
    assert.deepEqual(s.told, ['extra0/uid-extra0/NodeNotInDesign', 'extra1/uid-extra1/NodeNotInDesign']);
    assert.deepEqual(s.reads.sort(), ['d0', 'd1', 'extra0', 'extra1', 'ghost0', 'ghost1', 'ghost2']);
    const dry = scenario(3, 2, 2);
    await planRun({ nodes: dry.nodes, store: dry.store, events: dry.events }, { run: 4, revision: 1, design: dry.d, dryRun: true });
    assert.deepEqual(dry.told, []);
  });
});

describe('planRun and the mass-removal brake', () => {
  // Three nodes owning a, b, c; the design keeps only `a` on each: 6 of 9 owned labels go (67% > 50%).
  const d = design({ n1: { a: '1' }, n2: { a: '1' }, n3: { a: '1' } });
  const cluster = ['n1', 'n2', 'n3'].map((n) => state(n, { a: '1', b: '2', c: '3', other: 'x' }, 'a,b,c'));
  const nodes = {
    async readNode(name: string) {
      return cluster.find((n) => n.name === name) as NodeState;
    },
    listNodes: () => {
      throw new Error('a small run does not LIST');
    },
    patchNode: () => {
      throw new Error('planning never writes');
    },
  };
  /** A store whose rows keep their status, so pending rows can be found again. */
  function statusStore() {
    const rows = new Map<string, NodeResultUpdate>(['n1', 'n2', 'n3'].map((node) => [node, { node, status: 'queued' }]));
    const store = {
      async nodes(_id: number, q: { status?: string; afterSeq?: number; limit: number }): Promise<RunNodeRow[]> {
        return [...rows.values()]
          .map((r, seq) => ({ seq, node: r.node, status: r.status, written: false, detail: r.detail ?? null }))
          .filter((r) => r.seq > (q.afterSeq ?? -1) && (q.status === undefined || r.status === q.status))
          .slice(0, q.limit);
      },
      async setNodeResults(_id: number, updates: readonly NodeResultUpdate[]) {
        for (const u of updates) rows.set(u.node, u);
      },
    } as unknown as RunStore;
    return { store, rows };
  }

  it('refuses a run removing more than the fraction, naming counts and keys, its pending nodes failed and none written', async () => {
    const { store, rows } = statusStore();
    await assert.rejects(
      planRun({ nodes, store }, { run: 9, revision: 2, design: d, dryRun: false }),
      (err: Error & { type?: string; nonRetryable?: boolean }) => {
        assert.equal(err.type, 'MassRemovalRefused');
        assert.equal(err.nonRetryable, true);
        assert.match(
          err.message,
          /^mass-removal brake: run 9 would remove 6 of 9 owned labels \(67%\) on 3 nodes, more than the policy's max_removal_fraction 0\.5; keys: b \(3 nodes\), c \(3 nodes\)\. Nothing was written\./,
        );
        assert.match(err.message, /--allow-mass-removal/);
        return true;
      },
    );
    assert.deepEqual(
      [...rows.values()].map((r) => [r.node, r.status, r.detail?.error?.type]),
      [
        ['n1', 'failure', 'MassRemovalRefused'],
        ['n2', 'failure', 'MassRemovalRefused'],
        ['n3', 'failure', 'MassRemovalRefused'],
      ],
    );
  });

  it('lets the run through when allowed, and a dry run reports what the brake would say', async () => {
    const allowed = await planRun({ nodes, store: statusStore().store }, { run: 9, revision: 2, design: d, dryRun: false, allowMassRemoval: true });
    assert.equal(allowed.toChange, 3);
    assert.deepEqual(allowed.removal, {
      owned: 9,
      removed: 6,
      nodes: 3,
      keys: [
        { key: 'b', nodes: 3 },
        { key: 'c', nodes: 3 },
      ],
      moreKeys: 0,
      maxFraction: 0.5,
      exceeded: true,
    });
    const dry = await planRun({ nodes, store: statusStore().store }, { run: 9, revision: 2, design: d, dryRun: true });
    assert.equal(dry.removal.exceeded, true);
    assert.equal(dry.counts.success, 3);
  });

  it('lets a run through at or under the fraction of the policy', async () => {
    const lenient = { ...d, policy: { ...d.policy, maxRemovalFraction: 0.7 } };
    const plan = await planRun({ nodes, store: statusStore().store }, { run: 9, revision: 2, design: lenient, dryRun: false });
    assert.equal(plan.removal.exceeded, false);
    assert.equal(plan.toChange, 3);
  });
});

describe('a design read back from the store', () => {
  it('plans every node as the validated design does, and is never written to (its shared parts frozen)', async () => {
    const dir = new URL('../../examples/site/', import.meta.url).pathname;
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => ({ source: `site/${f}`, text: readFileSync(join(dir, f), 'utf8') }));
    const validated = validateSite(files);
    assert.ok(validated.ok);
    const stored = await decodeDesign(await encodeDesign(validated.design));
    const freeze = (v: unknown): void => {
      if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
      Object.freeze(v);
      for (const child of Object.values(v)) freeze(child);
    };
    freeze(stored);
    const names = Object.keys(validated.design.nodes);
    assert.ok(names.length > 1);
    for (const name of names) {
      const bare = { resourceVersion: '1', labels: { 'other.example/x': 'y' }, annotations: {}, taints: [] };
      const planned = planOf(stored, bare, name);
      assert.deepEqual(planned, planOf(validated.design, bare, name), name);
      const desired = { ...bare, labels: { ...bare.labels, ...planned.set } };
      assert.deepEqual(planOf(stored, desired, name), planOf(validated.design, desired, name), `${name}, labels as desired`);
      assert.deepEqual(planNode(stored, { name, ...bare }, false), planNode(validated.design, { name, ...bare }, false), `${name}, as a result`);
    }
  });
});

describe('planRun with node sets', () => {
  const setEntry = (name: string, selector: Record<string, string>, labels: Record<string, string>) => ({
    name,
    labels,
    annotations: {},
    taints: [],
    selector: { matchLabels: selector },
  });
  const withSets = (maxNodeSetMembers?: number): Design =>
    ({
      ...design({ bm: { role: 'storage' } }),
      policy: { ...DEFAULT_SITE_POLICY, ...(maxNodeSetMembers !== undefined ? { maxNodeSetMembers } : {}) },
      nodeSets: {
        general: setEntry('general', { 'karpenter.sh/nodepool': 'general' }, { workload: 'batch' }),
        md0: setEntry('md0', { 'cluster.x-k8s.io/deployment-name': 'md-0' }, { workload: 'web' }),
        empty: setEntry('empty', { 'karpenter.sh/nodepool': 'none' }, { workload: 'none' }),
      },
    }) as unknown as Design;
  const cluster = [
    state('bm', { 'karpenter.sh/nodepool': 'general' }),
    state('kp-1', { 'karpenter.sh/nodepool': 'general' }),
    state('kp-2', { 'karpenter.sh/nodepool': 'general', workload: 'batch' }, 'workload'),
    state('md-1', { 'cluster.x-k8s.io/deployment-name': 'md-0' }),
    state('both', { 'karpenter.sh/nodepool': 'general', 'cluster.x-k8s.io/deployment-name': 'md-0' }),
    state('loose', {}),
  ];
  /** A run store whose run gains rows as the plan finds members. */
  function growingRuns(targets: string[]) {
    const names = [...targets];
    const rows = new Map<string, NodeResultUpdate>();
    const store = {
      async nodes(_id: number, q: { afterSeq?: number; limit: number; status?: string }): Promise<RunNodeRow[]> {
        return names
          .map((node, seq) => ({ seq, node, status: rows.get(node)?.status ?? 'queued', written: false, detail: null }))
          .filter((r) => r.seq > (q.afterSeq ?? -1) && (q.status === undefined || r.status === q.status))
          .slice(0, q.limit);
      },
      async addNodes(_id: number, added: readonly string[]) {
        const fresh = added.filter((n) => !names.includes(n));
        names.push(...fresh);
        return fresh.length;
      },
      async setNodeResults(_id: number, updates: readonly NodeResultUpdate[]) {
        for (const u of updates) {
          assert.ok(names.includes(u.node), `${u.node} is a row of the run`);
          rows.set(u.node, u);
        }
      },
    } as unknown as RunStore;
    return { store, rows, names };
  }
  const lister = {
    readNode: () => Promise.reject(new Error('a run targeting sets LISTs')),
    async *listNodes() {
      yield cluster;
    },
    patchNode: () => Promise.reject(new Error('planning never writes')),
  };

  it('targets the members of the sets it names: each planned as its set, a node in two sets failed naming both', async () => {
    const { store, rows, names } = growingRuns([]);
    const plan = await planRun({ nodes: lister, store }, { run: 1, revision: 2, design: withSets(), dryRun: true, nodeSets: ['general'] });
    assert.deepEqual(names, ['kp-1', 'kp-2', 'both']);
    assert.deepEqual(plan.counts, { total: 3, success: 2, failure: 1, written: 0 });
    assert.deepEqual(rows.get('kp-1')?.detail?.set, { workload: 'batch' });
    assert.equal(rows.get('kp-1')?.detail?.nodeSet, 'general');
    assert.equal(rows.get('kp-2')?.detail?.unchanged, 1);
    assert.equal(rows.get('both')?.detail?.error?.type, 'NodeInTwoSets');
    assert.match(rows.get('both')?.detail?.error?.message ?? '', /general, md0/);
    assert.deepEqual(plan.nodeSets, { empty: 0, general: 2, md0: 1 });
  });

  it("joins a member's plugin labels as a named node's: its set's own labels win a key both give", async () => {
    const { store, rows } = growingRuns([]);
    const asked: string[] = [];
    const plugins = {
      set: 3,
      async lookup(nodes: readonly string[]) {
        asked.push(...nodes);
        return new Map([['kp-1', [{ plugin: 'nics', labels: { 'nic.example.com/speed': '25g', workload: 'other' } }]]]);
      },
    };
    await planRun({ nodes: lister, store, plugins }, { run: 1, revision: 2, design: withSets(), dryRun: true, nodeSets: ['general'] });
    assert.ok(asked.includes('kp-1'), 'the members are looked up in the plugin set');
    assert.deepEqual(rows.get('kp-1')?.detail?.set, { 'nic.example.com/speed': '25g', workload: 'batch' });
    assert.equal(rows.get('kp-1')?.detail?.pluginConflictCount, 1);
    assert.deepEqual(rows.get('kp-2')?.detail?.set, {}, 'a member the plugins do not name wants its set only (which it has)');
  });

  it('decides a named target the design lacks once read: a member, or not in the design', async () => {
    const { store, rows } = growingRuns(['bm', 'md-1', 'loose', 'ghost']);
    const plan = await planRun(
      {
        nodes: {
          ...lister,
          listNodes: undefined,
          readNode: async (n: string) => {
            const found = cluster.find((c) => c.name === n);
            if (!found) throw new ApiException(404, 'not found', '', {});
            return found;
          },
        } as never,
        store,
      },
      { run: 1, revision: 2, design: withSets(), dryRun: true },
    );
    assert.equal(plan.counts.total, 4);
    assert.equal(rows.get('md-1')?.detail?.nodeSet, 'md0');
    assert.deepEqual(rows.get('md-1')?.detail?.set, { workload: 'web' });
    assert.deepEqual(rows.get('bm')?.detail?.set, { role: 'storage' }, 'the named node wins over the set');
    assert.deepEqual(rows.get('bm')?.detail?.matchedSets, ['general'], 'and the set it wins over is reported with it');
    assert.equal(rows.get('loose')?.detail?.error?.type, 'NodeNotInDesign');
    assert.equal(rows.get('ghost')?.detail?.error?.type, 'NodeNotInDesign');
  });

  it('refuses a run whose set matches more nodes than the policy bound, like a mass removal', async () => {
    const { store, rows } = growingRuns([]);
    await assert.rejects(
      planRun({ nodes: lister, store }, { run: 1, revision: 2, design: withSets(1), dryRun: false, nodeSets: ['general'] }),
      (err: Error & { type?: string }) => err.type === 'MassRemovalRefused' && /general \(2 nodes\)/.test(err.message),
    );
    assert.equal(rows.get('kp-1')?.detail?.error?.type, 'MassRemovalRefused');
    const allowed = await planRun(
      { nodes: lister, store: growingRuns([]).store },
      { run: 1, revision: 2, design: withSets(1), dryRun: false, nodeSets: ['general'], allowMassRemoval: true },
    );
    assert.equal(allowed.toChange, 1);
  });
});
