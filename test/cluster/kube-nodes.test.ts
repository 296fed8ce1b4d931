/**
 * relabel's Kubernetes adapter against the stack's real kube-apiserver: a
 * paginated LIST of 1,200 Nodes comes in pages of at most the page size,
 * each one a LIST request the server counted, each Node read as stored, a
 * refused LIST failing as Forbidden, and the client-side rate limit holds
 * GETs to its qps after the burst.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mapNodeError } from '../../src/kube/errors.ts';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { decodeNodeList, listMetaPrefix } from '../../src/kube/node-protobuf.ts';
import { nodePageLister } from '../../src/kube/node-list.ts';
import { createNodeApi, loadKubeConfig, toNodeState } from '../../src/kube/nodes.ts';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { adminCore, adminKubeconfigPath, createNode, kubeconfigPath, serviceAccountKubeconfig, uniqueSuffix } from '../helpers.ts';

const NODES = 1_200;
const PAGE_SIZE = 500;
const CREATE_CONCURRENCY = 20;
const LABEL = 'relabel.test/kube-nodes';

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/** One raw GET of `path` with the admin kubeconfig: its Content-Type and body. */
async function rawGet(path: string, accept: string): Promise<{ type: string; body: Buffer }> {
  const kc = loadKubeConfig(adminKubeconfigPath());
  const options: RequestOptions = { headers: { Accept: accept } };
  await kc.applyToHTTPSOptions(options);
  const url = new URL(path, kc.getCurrentCluster()?.server);
  return await new Promise((resolve, reject) => {
    httpsRequest(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe('Kubernetes adapter on the real API server', () => {
  const suffix = uniqueSuffix();
  const names = Array.from({ length: NODES }, (_, i) => `kn-${suffix}-${String(i).padStart(4, '0')}`);
  const admin = adminCore();

  before(async () => {
    const t0 = performance.now();
    await pool(names, CREATE_CONCURRENCY, (name) => createNode(admin, name, { [LABEL]: suffix }));
    console.log(`# created ${NODES} Nodes in ${Math.round(performance.now() - t0)} ms`);
  });
  after(async () => {
    // One request for all of them: they carry this test's label.
    await admin.deleteCollectionNode({ labelSelector: `${LABEL}=${suffix}` });
    const left = await admin.listNode({ labelSelector: `${LABEL}=${suffix}`, limit: 1 });
    assert.equal(left.items.length, 0, 'every Node the test created is deleted');
  });

  it('LISTs page by page (at most pageSize each) and finds every Node, with the least-privilege kubeconfig', async () => {
    const api = createNodeApi(loadKubeConfig(kubeconfigPath()));
    const listsBefore = await nodeRequestCount(adminKubeconfigPath(), 'LIST');
    const found = new Map<string, number>();
    const sizes: number[] = [];
    for await (const page of api.listNodes({ pageSize: PAGE_SIZE })) {
      sizes.push(page.length);
      for (const node of page) if (node.name.startsWith(`kn-${suffix}-`)) found.set(node.name, (found.get(node.name) ?? 0) + 1);
    }
    const lists = (await nodeRequestCount(adminKubeconfigPath(), 'LIST')) - listsBefore;
    console.log(`# ${sizes.length} pages of ${sizes.join(', ')} Nodes; the server counted ${lists} LIST requests`);
    assert.ok(sizes.length >= Math.ceil(NODES / PAGE_SIZE), `${sizes.length} pages`);
    for (const size of sizes) assert.ok(size <= PAGE_SIZE, `a page of ${size}`);
    assert.equal(found.size, NODES, 'every Node created is listed');
    assert.ok(
      [...found.values()].every((n) => n === 1),
      'no Node is listed twice',
    );
    // Other test files may LIST at the same time: at least one request per page.
    assert.ok(lists >= sizes.length, `the server answered ${lists} LISTs for ${sizes.length} pages`);
  });

  it('reads each listed Node as the API server stores it: labels, annotations, taints, uid and resourceVersion', async () => {
    const name = names[0] as string;
    const taints = [
      { key: 'relabel.test/t', value: 'v', effect: 'NoExecute' },
      { key: 'relabel.test/no-value', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' },
    ];
    const body = { metadata: { labels: { 'relabel.test/empty': '' }, annotations: { 'relabel.test/a': 'x' } }, spec: { taints } };
    await admin.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const stored = await admin.readNode({ name });
    const api = createNodeApi(loadKubeConfig(kubeconfigPath()));
    let listed;
    for await (const page of api.listNodes({ pageSize: PAGE_SIZE })) listed ??= page.find((n) => n.name === name);
    assert.ok(listed, 'the node is listed');
    assert.deepEqual(listed, await api.readNode(name), 'a listed node reads the same as one read alone');
    assert.equal(listed.uid, stored.metadata?.uid);
    assert.equal(listed.resourceVersion, stored.metadata?.resourceVersion);
    assert.equal(listed.annotations['relabel.test/a'], 'x');
    assert.equal(listed.labels[LABEL], suffix);
    const taint = listed.taints.find((t) => t.key === 'relabel.test/t');
    assert.deepEqual([taint?.value, taint?.effect], ['v', 'NoExecute']);
    assert.deepEqual(
      listed.taints.find((t) => t.key === 'relabel.test/no-value'),
      { key: 'relabel.test/no-value', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' },
      'a taint without a value has none, and keeps its time',
    );
    assert.equal(listed.labels['relabel.test/empty'], '', 'a label with an empty value is listed with it');
  });

  it("decodes the server's protobuf NodeList to what its JSON says", async () => {
    const path = `/api/v1/nodes?limit=${PAGE_SIZE}&labelSelector=${encodeURIComponent(`${LABEL}=${suffix}`)}`;
    const proto = await rawGet(path, 'application/vnd.kubernetes.protobuf');
    assert.equal(proto.type, 'application/vnd.kubernetes.protobuf');
    const json = await rawGet(path, 'application/json');
    const page = decodeNodeList(proto.body);
    const expected = JSON.parse(json.body.toString('utf8')) as { items: Parameters<typeof toNodeState>[0][]; metadata: { continue?: string } };
    assert.equal(page.items.length, PAGE_SIZE);
    assert.deepEqual(
      page.items.map((n) => toNodeState(n as Parameters<typeof toNodeState>[0])),
      expected.items.map(toNodeState),
    );
    assert.ok(page.continue && expected.metadata.continue, 'both pages say there is more');
    assert.throws(() => decodeNodeList(json.body), /no magic number/);
  });

  it("reads each page's continue token from the server's first bytes, the one its whole page gives", async () => {
    const prefix = listMetaPrefix((await rawGet(`/api/v1/nodes?limit=${PAGE_SIZE}`, 'application/vnd.kubernetes.protobuf')).body.subarray(0, 2048));
    assert.ok(prefix?.continue && prefix.resourceVersion, 'the first 2 KiB of a page hold its list metadata');
    const list = nodePageLister(loadKubeConfig(kubeconfigPath()));
    const told: { token: string; settled: boolean }[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      pages++;
      let settled = false;
      const page = list({ limit: PAGE_SIZE, ...(cont ? { _continue: cont } : {}), onContinue: (token) => told.push({ token, settled }) });
      cont = (await page.finally(() => (settled = true))).metadata?._continue || undefined;
      assert.deepEqual(told.at(-1), { token: cont ?? '', settled: false }, 'told once, before the page was read whole');
    } while (cont);
    assert.equal(told.length, pages, 'one token a page');
    assert.ok(pages >= Math.ceil(NODES / PAGE_SIZE), `${pages} pages`);
  });

  it('a LIST refused (403) fails as the typed call did: Forbidden, naming the verb and the user', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-kube-nodes-'));
    const account = `kn-getonly-${suffix}`;
    const getOnly = await serviceAccountKubeconfig(account, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }], dir, names[0] as string);
    try {
      const api = createNodeApi(loadKubeConfig(getOnly.path));
      const refused = await (async () => {
        for await (const _ of api.listNodes({ pageSize: 10 })) return undefined;
      })().then(
        () => undefined,
        (err: unknown) => err,
      );
      const mapped = mapNodeError(refused, '(all)', 'list') as ApplicationFailure;
      assert.ok(mapped instanceof ApplicationFailure, String(refused));
      assert.equal(mapped.type, 'Forbidden', mapped.message);
      assert.match(mapped.message, new RegExp(`list on nodes denied for user "system:serviceaccount:default:${account}" \\(403\\)`));
    } finally {
      await getOnly.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds requests to qps once the burst is spent', async () => {
    const qps = 20;
    const burst = 5;
    const gets = 60;
    // The bucket starts full: `burst` requests go at once, the rest one per 1/qps s.
    const floorMs = ((gets - burst) / qps) * 1000;
    const t0 = performance.now();
    const api = createNodeApi(loadKubeConfig(kubeconfigPath()), { qps, burst });
    const states = await Promise.all(names.slice(0, gets).map((name) => api.readNode(name)));
    const elapsed = performance.now() - t0;
    console.log(`# ${gets} GETs at qps ${qps}, burst ${burst}: ${Math.round(elapsed)} ms (floor ${floorMs} ms)`);
    assert.deepEqual(
      states.map((s) => s.name),
      names.slice(0, gets),
    );
    assert.ok(elapsed >= floorMs, `${gets} GETs took ${Math.round(elapsed)} ms, less than the ${floorMs} ms the limit allows`);
  });
});
