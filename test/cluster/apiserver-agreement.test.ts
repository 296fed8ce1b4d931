/**
 * relabel's core and the real kube-apiserver agree on what a Node may carry.
 * fast-check generates label keys and values, annotation maps (upper-case
 * prefixes, sizes at the 256 KiB limit) and taint lists, biased towards the
 * edges of the rules; each case is asked of both: the core validates a site
 * whose one node declares it, and the API server gets a server-side dry-run
 * merge patch of one Node with exactly what relabel would write (the case,
 * relabel's ownership records and its applied-run record at its longest).
 * Any difference fails, except relabel's documented deliberate refusals of
 * keys the API server would take (kubelet-owned labels, relabel's records,
 * the Node configuration annotations, system taints and relabel's own taint).
 * For every case relabel accepts, the patch its own planner builds from the
 * resolved design is sent too, and must be accepted.
 */
import assert from 'node:assert/strict';
import { Agent, request, type RequestOptions } from 'node:https';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { PYYAML_OPTIONS } from '../../src/core/site/pyyaml-schema.ts';
import {
  APPLIED_ANNOTATION,
  OWNED_ANNOTATIONS_ANNOTATION,
  OWNED_LABELS_ANNOTATION,
  OWNED_TAINTS_ANNOTATION,
  RECORD_ANNOTATIONS,
  UNINITIALIZED_TAINT_KEY,
} from '../../src/core/plan/constants.ts';
import { isKubeletLabelKey, NODE_CONFIG_ANNOTATIONS } from '../../src/core/plan/label-keys.ts';
import { formatOwnedLabels } from '../../src/core/plan/owned-labels.ts';
import { formatError } from '../../src/core/plan/site-error.ts';
import { isSystemTaintKey, taintId } from '../../src/core/plan/taints.ts';
import { policyDoc, source } from '../kit/site/documents.ts';
import { planLabels } from '../../src/core/plan/label-plan.ts';
import { nodePatch } from '../../src/core/plan/node-reconcile.ts';
import { validateSite, type DesignNode } from '../../src/core/site/validate-site.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { adminCore, createNode, kubeconfigPath, uniqueSuffix } from '../helpers.ts';
// The applied-run record is written at its longest: relabel reserves room for it on every node.
import { caseArbitraries, LONGEST_APPLIED, type NodeCase } from '../apiserver-agreement-cases.ts';

const SEED = 20261125;
/** Cases per property; four properties run at once, each one request at a time. */
const RUNS = { labels: 700, annotationKeys: 500, annotationSizes: 200, taints: 700 } as const;

/** What relabel would write to the Node for `c`: the case itself and its records. */
function casePatch(c: NodeCase): object {
  const annotations: Record<string, string> = { ...c.annotations };
  const record = (key: string, entries: string[]) => {
    const value = formatOwnedLabels(entries);
    if (value !== null) annotations[key] = value;
  };
  record(OWNED_LABELS_ANNOTATION, Object.keys(c.labels));
  record(OWNED_ANNOTATIONS_ANNOTATION, Object.keys(c.annotations));
  record(
    OWNED_TAINTS_ANNOTATION,
    c.taints.map((t) => taintId({ key: t.key, effect: t.effect ?? '' })),
  );
  annotations[APPLIED_ANNOTATION] = LONGEST_APPLIED;
  return { metadata: { labels: c.labels, annotations }, spec: { taints: c.taints } };
}

/** The site relabel validates for `c`: a policy generating no labels, and one node declaring the case. */
function siteText(c: NodeCase): string {
  const metadata = {
    ...(Object.keys(c.labels).length > 0 ? { owner_data: c.labels } : {}),
    ...(Object.keys(c.annotations).length > 0 ? { annotations: c.annotations } : {}),
    ...(c.taints.length > 0 ? { taints: c.taints } : {}),
  };
  const node = { schema: 'drydock/BaremetalNode/v1', metadata: { schema: 'metadata/Document/v1', name: 'n1' }, data: { metadata } };
  return `---\n${stringify(node, { lineWidth: 0, ...PYYAML_OPTIONS })}`;
}

const policy = policyDoc('policy', {
  generated_labels: 'generated_labels: {rack: false, host_profile: false, tags: false, rack_labels: false, site: false}',
});

function relabelVerdict(c: NodeCase): { ok: boolean; errors: string[]; node?: DesignNode } {
  const result = validateSite([source('policy.yaml', policy), { source: 'node.yaml', text: siteText(c) }]);
  return result.ok ? { ok: true, errors: [], node: result.design.nodes['n1'] } : { ok: false, errors: result.errors.map(formatError) };
}

/** The patch relabel itself sends for `node` to the test's Node as read (the planner's and the update loop's own). */
function relabelPatch(node: DesignNode): object | null {
  const plan = planLabels({
    labels: baseNode.labels,
    annotations: {},
    desired: node.labels,
    policy: { reconcileOsArchAliases: false, protectedKeys: [] },
    taints: [],
    desiredAnnotations: node.annotations,
    desiredTaints: node.taints,
  });
  const longest = { revision: Number.MAX_SAFE_INTEGER, run: Number.MAX_SAFE_INTEGER };
  return nodePatch(plan, { resourceVersion: baseNode.resourceVersion, labels: baseNode.labels, annotations: {}, taints: [] }, false, longest);
}

/** True when relabel refuses `c` on purpose though the API server may take it. */
function deliberate(c: NodeCase): boolean {
  return (
    Object.keys(c.labels).some(isKubeletLabelKey) ||
    Object.keys(c.annotations).some((key) => RECORD_ANNOTATIONS.includes(key) || NODE_CONFIG_ANNOTATIONS.includes(key)) ||
    c.taints.some((t) => isSystemTaintKey(t.key) || t.key === UNINITIALIZED_TAINT_KEY)
  );
}

type ServerVerdict = { ok: boolean; status: number; causes: string[] };

let nodeName = '';
let baseNode: { resourceVersion: string; labels: Record<string, string> } = { resourceVersion: '', labels: {} };
let base: RequestOptions = {};
let agent: Agent | undefined;

/** A dry-run merge patch of the test's Node, on a kept-alive connection: accepted (200) or refused (422). */
function serverVerdict(patch: object): Promise<ServerVerdict> {
  const body = Buffer.from(JSON.stringify(patch));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...base,
        agent,
        method: 'PATCH',
        path: `/api/v1/nodes/${nodeName}?dryRun=All&fieldManager=relabel`,
        headers: { ...base.headers, 'Content-Type': 'application/merge-patch+json', 'Content-Length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status === 200) return resolve({ ok: true, status, causes: [] });
          if (status !== 422) return reject(new Error(`dry-run patch answered ${status}: ${text.slice(0, 500)}`));
          const causes = (JSON.parse(text) as { details?: { causes?: { field?: string; message?: string }[] } }).details?.causes ?? [];
          resolve({ ok: false, status, causes: causes.map((cause) => `${cause.field ?? ''}: ${(cause.message ?? '').slice(0, 300)}`) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const tally = new Map<string, { cases: number; serverAccepted: number; serverRefused: number; deliberate: number; ownPatches: number }>();

async function agrees(property: string, c: NodeCase): Promise<void> {
  const counts = tally.get(property) ?? { cases: 0, serverAccepted: 0, serverRefused: 0, deliberate: 0, ownPatches: 0 };
  tally.set(property, counts);
  const server = await serverVerdict(casePatch(c));
  const core = relabelVerdict(c);
  const onPurpose = deliberate(c);
  counts.cases++;
  if (server.ok) counts.serverAccepted++;
  else counts.serverRefused++;
  if (onPurpose) counts.deliberate++;
  const expected = server.ok && !onPurpose;
  if (core.ok !== expected) {
    assert.fail(
      `relabel ${core.ok ? 'accepts' : 'refuses'} what the API server ${server.ok ? 'accepts' : 'refuses'}` +
        `${onPurpose ? ' (a deliberate refusal)' : ''}\n  API server: ${server.causes.join('\n    ') || 'ok'}\n  relabel: ${core.errors.map((e) => e.slice(0, 400)).join('\n    ') || 'ok'}`,
    );
  }
  // What relabel accepts, the patch its own planner builds from the design lands too.
  const own = core.node === undefined ? null : relabelPatch(core.node);
  if (own !== null) {
    const landed = await serverVerdict(own);
    assert.ok(landed.ok, `the API server refuses relabel's own patch: ${landed.causes.join('; ')}`);
    counts.ownPatches++;
  }
}

describe('relabel refuses exactly what the API server refuses, plus its deliberate refusals', { concurrency: true }, () => {
  const t0 = Date.now();

  before(async () => {
    nodeName = `agree-${uniqueSuffix()}`;
    const created = await createNode(adminCore(), nodeName);
    // The annotation limit counts every annotation of the Node: the test's Node starts with none.
    assert.deepEqual(created.metadata?.annotations ?? {}, {});
    baseNode = { resourceVersion: created.metadata?.resourceVersion ?? '', labels: created.metadata?.labels ?? {} };
    const options: RequestOptions = {};
    const kc = loadKubeConfig(kubeconfigPath());
    await kc.applyToHTTPSOptions(options);
    const server = new URL(kc.getCurrentCluster()?.server ?? '');
    base = { ...options, hostname: server.hostname, port: server.port };
    agent = new Agent({ keepAlive: true, maxSockets: 4, ca: options.ca, cert: options.cert, key: options.key });
  });

  after(async () => {
    agent?.destroy();
    await adminCore().deleteNode({ name: nodeName });
    const total = [...tally.values()].reduce((sum, t) => sum + t.cases, 0);
    console.log(`# agreement: ${total} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(Object.fromEntries(tally))}`);
  });

  const arbitraries = caseArbitraries();
  const properties: [keyof typeof RUNS, fc.Arbitrary<NodeCase>][] = [
    ['labels', arbitraries.labels],
    ['annotationKeys', arbitraries.annotationKeys],
    ['annotationSizes', arbitraries.annotationSizes],
    ['taints', arbitraries.taints],
  ];
  for (const [name, arbitrary] of properties) {
    it(`${name}: ${RUNS[name]} generated cases`, { timeout: 600_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, (c) => agrees(name, c)),
        { seed: SEED, numRuns: RUNS[name] },
      );
      const counts = tally.get(name);
      // Both sides of every rule were exercised: the generators are not degenerate.
      assert.ok(counts !== undefined && counts.cases >= RUNS[name], `${name}: ${JSON.stringify(counts)}`);
      assert.ok(counts.serverAccepted >= RUNS[name] / 20 && counts.serverRefused >= RUNS[name] / 20, `${name}: ${JSON.stringify(counts)}`);
    });
  }
});
