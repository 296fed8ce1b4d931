/**
 * relabel running as its own identity, through the real kube-apiserver's
 * RBAC: the ServiceAccount, ClusterRole and ClusterRoleBinding exactly as
 * the Helm chart renders them with its defaults (taken from `helm template`,
 * never written here, and checked to grant what deploy/rbac.yaml grants) are
 * created on the test stack; a token for the ServiceAccount each Deployment
 * names comes from the TokenRequest API, and the worker process and the API
 * server process run with a kubeconfig holding only that token.
 *
 * As that identity: a Shipyard update action writes every target node and
 * the worker records Events on them; the API's own `PUT node-labels` patches
 * a node; a drift detection lists the nodes and finds the one changed
 * behind relabel; a plan weighs its workload impact from the Pods,
 * DaemonSets and PodDisruptionBudgets it lists; the join watcher (list and
 * watch of Nodes) labels a joining node. Writes outside the grant (a
 * ConfigMap patched, a Node deleted or replaced, a Pod created, a Secret
 * read) are refused 403 by the server, naming the ServiceAccount.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  AppsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  EventsV1Api,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ActionView, PlanView } from '../../src/api/http/response-schemas.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { NODE_EVENTS_NAMESPACE } from '../../src/kube/events.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { ChartTool, toolPath } from '../../stack/tools.ts';
import { eventually } from '../api-support.ts';
import { startApiProcess } from './api-process.ts';
import { adminKubeconfigPath, createNode, exits, relabelCli, startWorkerProcess, stopChild, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Manifest = KubernetesObject & Record<string, any>;

const root = new URL('../../', import.meta.url).pathname;
const chart = join(root, 'deploy', 'helm', 'relabel');
/** The kinds that make relabel's identity and its rights. */
const IDENTITY_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);

/** `helm template RELEASE chart --namespace NAMESPACE` with the chart's defaults, parsed (helm's own directories kept apart from the user's). */
async function renderChart(release: string, namespace: string): Promise<Manifest[]> {
  const home = mkdtempSync(join(tmpdir(), 'relabel-identity-helm-'));
  for (const dir of ['cache', 'config', 'data']) mkdirSync(join(home, dir));
  const env = { ...process.env, HELM_CACHE_HOME: join(home, 'cache'), HELM_CONFIG_HOME: join(home, 'config'), HELM_DATA_HOME: join(home, 'data') };
  const text = await new Promise<string>((resolve, reject) =>
    execFile(toolPath(ChartTool.helm), ['template', release, chart, '--namespace', namespace], { env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`helm template: ${stderr}`)) : resolve(stdout),
    ),
  );
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => o !== null);
}

/** The ClusterRole of deploy/rbac.yaml, as shipped to `kubectl apply -k`. */
function deployClusterRole(): Manifest {
  const objects = parseAllDocuments(readFileSync(join(root, 'deploy', 'rbac.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
  return objects.find((o) => o.kind === 'ClusterRole') ?? assert.fail('deploy/rbac.yaml holds no ClusterRole');
}

/** A kubeconfig for the stack's API server (its address and CA from the admin's) that holds only `token`. */
function tokenKubeconfig(token: string, user: string): KubeConfig {
  const admin = loadKubeConfig(adminKubeconfigPath());
  const cluster = admin.getCurrentCluster() ?? assert.fail('no cluster in the admin kubeconfig');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'relabel-test', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: 'relabel-test', user }],
    currentContext: user,
  });
  return kc;
}

/** The HTTP status a Kubernetes client call was answered with (200 when it succeeded), and the server's message. */
async function answered(call: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call();
    return { code: 200, message: '' };
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
    return { code: err.code, message: String(body?.message ?? '') };
  }
}

describe('relabel as the ServiceAccount it ships, through real RBAC', () => {
  const suffix = uniqueSuffix();
  const prefix = `sa${suffix}`;
  const release = `relabel-id-${suffix}`;
  const namespace = `relabel-id-${suffix}`;
  const workloads = `relabel-id-${suffix}-apps`;
  const site = prefixedSite(prefix);
  const siteName = `${prefix}-site`;
  const [t1, t2, t3, joining] = site.nodes as [string, string, string, string];
  const targets = [t1, t2, t3];
  const apiNode = `${prefix}-api-node`;
  const design = validateSite(site.files);
  assert.ok(design.ok);
  const dir = mkdtempSync(join(tmpdir(), 'relabel-identity-'));
  const admin = loadKubeConfig(adminKubeconfigPath());
  const core = admin.makeApiClient(CoreV1Api);
  const API_TOKEN = `identity-test-${suffix}`;
  let identity: Manifest[] = [];
  let rendered: Manifest[] = [];
  /** Each process's identity: its Deployment's ServiceAccount, the token's kubeconfig file and client configuration. */
  const accounts: Record<'worker' | 'api', { serviceAccount: string; path: string; kc: KubeConfig }> = {} as never;
  let env: Record<string, string> = {};
  let worker: ChildProcess | undefined;
  let api: { child: ChildProcess; url: string } | undefined;

  /** A request to the API server process as the admin token's holder. */
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string; location: string | null }> {
    const res = await fetch(`${api?.url}${path}`, {
      method,
      headers: { 'x-auth-token': API_TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined, text, location: res.headers.get('location') };
  }

  before(async () => {
    rendered = await renderChart(release, namespace);
    identity = rendered.filter((o) => IDENTITY_KINDS.has(o.kind ?? ''));
    const objects = KubernetesObjectApi.makeApiClient(admin);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    for (const object of identity) await objects.create(object);

    for (const [process, deployment] of [['worker', `${release}-worker`], ['api', `${release}-api`]] as const) {
      const d = rendered.find((o) => o.kind === 'Deployment' && o.metadata?.name === deployment) ?? assert.fail(`the chart renders no Deployment ${deployment}`);
      const serviceAccount = d.spec.template.spec.serviceAccountName as string;
      const token = await core.createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
      const kc = tokenKubeconfig(token.status?.token ?? assert.fail('TokenRequest gave no token'), `${process}-${serviceAccount}`);
      const path = join(dir, `${process}.kubeconfig`);
      writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
      accounts[process] = { serviceAccount, path, kc };
      // The binding takes effect once the API server's RBAC cache has it.
      await eventually(
        () => answered(() => kc.makeApiClient(CoreV1Api).listNode({ limit: 1 })),
        (a) => a.code === 200,
      );
    }

    const { store, url } = await storeWithSite(site.files);
    await store.close();
    for (const name of targets) await createNode(core, name);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: `relabel-identity-${suffix}` };
    worker = await startWorkerProcess({ ...env, KUBECONFIG: accounts.worker.path });
    api = await startApiProcess({ ...env, KUBECONFIG: accounts.api.path, RELABEL_API_TOKENS: `${API_TOKEN}:admin:identity-test` });
  });

  after(async () => {
    await relabelCli(['join', 'disable'], env).catch(() => undefined);
    await stopChild(api?.child);
    await stopChild(worker);
    for (const name of [...targets, joining, apiNode]) await core.deleteNode({ name }).catch(() => undefined);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRoleBinding({ name: release }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: release }).catch(() => undefined);
    for (const ns of [namespace, workloads]) await core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it("applies the chart's own identity objects, which grant what deploy/ grants, and each token is its Deployment's ServiceAccount", async () => {
    assert.deepEqual(identity.map((o) => `${o.kind}/${o.metadata?.name}`).sort(), [`ClusterRole/${release}`, `ClusterRoleBinding/${release}`, `ServiceAccount/${release}`]);
    const role = identity.find((o) => o.kind === 'ClusterRole') as Manifest;
    assert.deepEqual(role.rules, deployClusterRole().rules, 'the chart and deploy/ grant the same rules');
    const stored = await admin.makeApiClient(RbacAuthorizationV1Api).readClusterRole({ name: release });
    assert.deepEqual(JSON.parse(JSON.stringify(stored.rules)), role.rules, 'stored as rendered');
    for (const [process, account] of Object.entries(accounts)) {
      const review = await account.kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
      assert.equal(review.status?.userInfo?.username, `system:serviceaccount:${namespace}:${account.serviceAccount}`, `the ${process}'s token`);
      assert.ok(review.status?.userInfo?.groups?.includes(`system:serviceaccounts:${namespace}`), process);
    }
  });

  it('runs an update action: the worker writes every node and records Events; the API patches a node itself', async () => {
    const created = await call('POST', '/api/v1.0/actions', { name: 'update_labels', parameters: { target_nodes: targets } });
    assert.equal(created.status, 201, created.text);
    const location = created.location ?? assert.fail(`no location: ${created.text}`);
    const action = await eventually(
      async () => ActionView.parse((await call('GET', location)).json),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
      60_000,
    );
    assert.equal(action.action_lifecycle, 'Complete', JSON.stringify(action));
    assert.ok(design.ok);
    for (const name of targets) {
      const node = await core.readNode({ name });
      for (const [k, v] of Object.entries(design.design.nodes[name]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${name} ${k}`);
      assert.ok(node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], `${name} has its ownership record`);
    }
    const events = await eventually(
      async () => (await admin.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: NODE_EVENTS_NAMESPACE, labelSelector: 'app.kubernetes.io/managed-by=relabel' })).items,
      (items) => targets.every((t) => items.some((e) => e.regarding?.name === t && e.reason === 'LabelsApplied')),
    );
    for (const t of targets) assert.equal(events.find((e) => e.regarding?.name === t)?.reportingController, 'relabel', t);

    // A node outside the design, so the drift detection below finds only what it is meant to.
    await createNode(core, apiNode);
    const put = await call('PUT', `/api/v1.0/node-labels/${apiNode}`, { 'example.com/identity-test': 'api' });
    assert.equal(put.status, 200, put.text);
    assert.equal((await core.readNode({ name: apiNode })).metadata?.labels?.['example.com/identity-test'], 'api');
  });

  it('detects drift: the worker lists the nodes and finds the one changed behind relabel', async () => {
    await createNodeApi(admin).patchNode(t2, { metadata: { labels: { 'node-exporter': 'disabled' } } });
    const run = exits(await relabelCli(['drift', '--site', siteName, '-o', 'json'], env, { timeoutMs: 120_000 }), 0);
    const { report, nodes } = JSON.parse(run.stdout);
    assert.equal(report.counts.drifted, 1, run.stdout);
    assert.deepEqual(
      nodes.items.map((n: any) => [n.node, n.state]),
      [[t2, 'drifted']],
    );
    assert.equal(report.counts.in_sync, targets.length - 1);
  });

  it('plans with workload impact: Pods, DaemonSets and PodDisruptionBudgets read as the ServiceAccount', async () => {
    const apps = admin.makeApiClient(AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: workloads } } });
    // No controller manager makes the namespace's default ServiceAccount; pods need it.
    await core.createNamespacedServiceAccount({ namespace: workloads, body: { metadata: { name: 'default' } } });
    const container = [{ name: 'c', image: 'registry.invalid/pause' }];
    // The test's nodes have no kubelet and stay tainted not-ready; the DaemonSet runs there all the same.
    const tolerations = [{ operator: 'Exists' }];
    await apps.createNamespacedDaemonSet({
      namespace: workloads,
      body: {
        metadata: { name: 'exporter' },
        spec: { selector: { matchLabels: { app: 'exporter' } }, template: { metadata: { labels: { app: 'exporter' } }, spec: { nodeSelector: { 'node-exporter': 'disabled' }, tolerations, containers: container } } },
      },
    });
    // Bound to the drifted node, selecting the value the plan puts back: stranded by it.
    await core.createNamespacedPod({ namespace: workloads, body: { metadata: { name: 'held' }, spec: { nodeName: t2, nodeSelector: { 'node-exporter': 'disabled' }, containers: container } } });

    const created = await call('POST', '/api/v1.0/plans', { target_nodes: targets });
    assert.equal(created.status, 201, created.text);
    const impact = PlanView.parse(created.json).workload_impact;
    assert.ok(impact && !('unavailable' in impact), `the plan weighs its workload impact: ${JSON.stringify(impact)}`);
    assert.equal(impact.totals.nodes_changed, 1);
    const exporter = impact.daemon_sets.find((d) => d.namespace === workloads);
    assert.deepEqual(exporter && [exporter.name, exporter.loses], ['exporter', { count: 1, sample: [t2] }]);
    const held = impact.workloads.find((w) => w.namespace === workloads);
    assert.deepEqual(held && [held.workload, held.stranded.sample], ['Pod/held', [{ pod: 'held', node: t2 }]]);
  });

  it('labels a joining node through the join watcher (list and watch of Nodes)', async () => {
    exits(await relabelCli(['join', 'enable', '--delay-ms', '50'], env), 0);
    await createNode(core, joining, {}, [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    const node = await eventually(
      () => core.readNode({ name: joining }),
      (n) => n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
      60_000,
    );
    assert.ok(design.ok);
    for (const [k, v] of Object.entries(design.design.nodes[joining]?.labels ?? {})) assert.equal(node.metadata?.labels?.[k], v, `${joining} ${k}`);
    // Watching, not listing again and again: a refused watch falls back to relisting after a backoff, and says so in the watcher's report.
    for (let i = 0; i < 3; i++) {
      const status = JSON.parse(exits(await relabelCli(['join', 'status', '-o', 'json'], env), 0).stdout);
      assert.ok(status.watcher, `the watcher reports: ${JSON.stringify(status)}`);
      assert.equal(status.watcher.watchError, undefined, `the watcher watches: ${JSON.stringify(status.watcher)}`);
      await sleep(1000);
    }
    exits(await relabelCli(['join', 'disable'], env), 0);
  });

  it('is refused 403 by the server for anything outside the grant, naming the ServiceAccount', async () => {
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'settings' }, data: { a: '1' } } });
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 'credentials' }, stringData: { a: '1' } } });
    for (const account of Object.values(accounts)) {
      const as = account.kc.makeApiClient(CoreV1Api);
      const user = `system:serviceaccount:${namespace}:${account.serviceAccount}`;
      const node = await as.readNode({ name: t3 });
      const refused: [string, () => Promise<unknown>, RegExp][] = [
        ['patch a ConfigMap', () => as.patchNamespacedConfigMap({ name: 'settings', namespace, body: [{ op: 'replace', path: '/data/a', value: '2' }] }), /cannot patch resource "configmaps"/],
        ['delete a Node', () => as.deleteNode({ name: t3 }), /cannot delete resource "nodes"/],
        ['replace a Node', () => as.replaceNode({ name: t3, body: node }), /cannot update resource "nodes"/],
        ['create a Node', () => as.createNode({ body: { metadata: { name: `${prefix}-forged` } } }), /cannot create resource "nodes"/],
        ['create a Pod', () => as.createNamespacedPod({ namespace, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }), /cannot create resource "pods"/],
        ['read a Secret', () => as.readNamespacedSecret({ name: 'credentials', namespace }), /cannot get resource "secrets"/],
        ['list Events', () => as.listNamespacedEvent({ namespace: NODE_EVENTS_NAMESPACE }), /cannot list resource "events"/],
      ];
      for (const [what, request, why] of refused) {
        const answer = await answered(request);
        assert.equal(answer.code, 403, `${what} as ${user}: ${answer.message}`);
        assert.ok(answer.message.includes(`User "${user}"`), answer.message);
        assert.match(answer.message, why);
      }
    }
    assert.equal((await core.readNamespacedConfigMap({ name: 'settings', namespace })).data?.a, '1');
    assert.equal((await core.readNode({ name: t3 })).metadata?.uid !== undefined, true, 'the node is still there');
  });
});
