/**
 * Running relabel in a cluster, against the stack's real servers.
 *
 * The manifests under deploy/ against the real kube-apiserver (RBAC
 * authorization on): rendered as kustomize renders them, every object is
 * applied with server-side apply, and SubjectAccessReviews for relabel's
 * service account show it may do exactly what relabel needs (nodes: get,
 * list, watch, patch; events: create, patch) and nothing else.
 *
 * The worker and the CLI reach the real Temporal server through a profile
 * of a Temporal profiles file (the SDK's environment configuration), with
 * no TEMPORAL_ADDRESS set. The local dev server serves no TLS, so these
 * connections are plain.
 *
 * The API's readiness reports the real Temporal server and a real
 * PostgreSQL revision store separately, and stays apart from liveness.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { parseStoreUrl } from '../../src/store/open-store.ts';
import { createApiServer } from '../../src/api/http/server.ts';
import { DEFAULT_METRICS_PORT } from '../../src/worker/probes.ts';
import { openRelabel, relabelConfigFromEnv, type Relabel } from '../../src/facade/index.ts';
import { startPostgres, type PostgresServer } from '../../stack/postgres.ts';
import { closedPort, TOKENS } from '../api-support.ts';
import { adminCore, adminKubeconfigPath, createNode, exits, kubeconfigPath, relabelCli as relabel, startWorkerProcess, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const root = new URL('../../', import.meta.url).pathname;

/** Kinds without a namespace among those deploy/ uses. */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'FlowSchema', 'PriorityLevelConfiguration']);

/** The kustomization fields this renderer implements; any other field fails the test, so the manifests keep to them. */
const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images']);

type Image = { name: string; newName?: string; newTag?: string };
type Manifest = KubernetesObject & Record<string, any>;

/**
 * Renders the kustomization in `dir` as `kustomize build` does for the
 * fields it uses: the resource files in order, the namespace set on every
 * namespaced object and on ServiceAccount subjects of bindings, and image
 * names replaced.
 */
function renderKustomization(dir: string): Manifest[] {
  const file = join(dir, 'kustomization.yaml');
  const k = parseYaml(readFileSync(file, 'utf8')) as { namespace?: string; resources?: string[]; images?: Image[] };
  const unknown = Object.keys(k).filter((key) => !KUSTOMIZATION_FIELDS.has(key));
  assert.deepEqual(unknown, [], `${file}: fields this test cannot render`);
  const objects: Manifest[] = [];
  for (const resource of k.resources ?? []) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, resource), 'utf8'))) {
      assert.deepEqual(doc.errors, [], `${resource}: YAML errors`);
      const object = doc.toJS() as Manifest | null;
      if (object !== null) objects.push(object);
    }
  }
  for (const object of objects) {
    if (k.namespace !== undefined && !CLUSTER_SCOPED.has(object.kind ?? '')) object.metadata = { ...object.metadata, namespace: k.namespace };
    if (k.namespace !== undefined && object.kind === 'ClusterRoleBinding') {
      for (const subject of object.subjects ?? []) if (subject.kind === 'ServiceAccount') subject.namespace = k.namespace;
    }
    for (const container of object.spec?.template?.spec?.containers ?? []) {
      const image = (k.images ?? []).find((i) => i.name === container.image);
      if (image) container.image = `${image.newName ?? image.name}${image.newTag ? `:${image.newTag}` : ''}`;
    }
  }
  return objects;
}

const objects = renderKustomization(join(root, 'deploy'));
const apf = renderKustomization(join(root, 'deploy', 'apf'));
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
const namespace = (byKind('Namespace')[0]?.metadata?.name ?? '');
const serviceAccount = (byKind('ServiceAccount')[0]?.metadata?.name ?? '');
const user = `system:serviceaccount:${namespace}:${serviceAccount}`;

/** Whether the API server allows `user` (a service account, with its groups) `verb` on `resource`. */
async function allowed(authz: AuthorizationV1Api, verb: string, resource: string, group = '', ns?: string): Promise<boolean> {
  const review = await authz.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { verb, resource, group, ...(ns ? { namespace: ns } : {}) },
      },
    },
  });
  return review.status?.allowed === true;
}

describe('deploy/ manifests', () => {
  it('hold a Namespace, a ServiceAccount, RBAC, the worker and API Deployments and their Services, all in one namespace', () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.name}`),
      [
        'Namespace/relabel',
        'ServiceAccount/relabel',
        'ClusterRole/relabel',
        'ClusterRoleBinding/relabel',
        'ConfigMap/relabel',
        'Deployment/relabel-worker',
        'Service/relabel-worker-metrics',
        'Deployment/relabel-api',
        'Service/relabel-api',
      ],
    );
    for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind ?? '')) assert.equal(o.metadata?.namespace, namespace, `${o.kind}/${o.metadata?.name}`);
    assert.deepEqual(
      apf.map((o) => o.kind),
      ['PriorityLevelConfiguration', 'FlowSchema'],
    );
  });

  it('run entry points that exist with settings relabel reads, as the service account, with probes and resources', () => {
    for (const deployment of byKind('Deployment')) {
      const name = deployment.metadata?.name as string;
      const pod = deployment.spec.template.spec;
      assert.equal(pod.serviceAccountName, serviceAccount, name);
      const [container] = pod.containers;
      assert.equal(container.image, 'registry.example.com/relabel:0.1.0', name);
      const [runtime, ...args] = container.command as string[];
      assert.equal(runtime, 'node', name);
      const script = args.find((a) => !a.startsWith('--')) as string;
      assert.ok(existsSync(join(root, script)), `${name} runs ${script}, which must exist`);
      assert.ok(container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory, `${name} resources`);
      const store = container.env.find((e: any) => e.name === 'RELABEL_STORE_URL');
      assert.deepEqual(store?.valueFrom?.secretKeyRef, { name: 'relabel', key: 'store-url' }, `${name} store URL`);
      assert.deepEqual(
        container.envFrom.map((e: any) => e.configMapRef?.name ?? e.secretRef?.name),
        ['relabel', 'relabel-temporal'],
      );
    }
    const api = byKind('Deployment').find((d) => d.metadata?.name === 'relabel-api')?.spec.template.spec.containers[0];
    assert.deepEqual(api.livenessProbe.httpGet, { path: '/health', port: 'http' });
    assert.deepEqual(api.readinessProbe.httpGet, { path: '/health/ready', port: 'http' });
    // The worker's probes and metrics share the port its RELABEL_METRICS_PORT names, as the scrape annotations say.
    const workerPod = byKind('Deployment').find((d) => d.metadata?.name === 'relabel-worker')?.spec.template;
    const worker = workerPod.spec.containers[0];
    assert.deepEqual(worker.ports, [{ name: 'metrics', containerPort: DEFAULT_METRICS_PORT }]);
    // The worker listens on loopback unless told: the manifest sets every interface and the port explicitly.
    const envOf = (name: string) => worker.env.find((e: any) => e.name === name)?.value;
    assert.deepEqual([envOf('RELABEL_METRICS_ADDRESS'), envOf('RELABEL_METRICS_PORT')], ['0.0.0.0', String(DEFAULT_METRICS_PORT)]);
    assert.deepEqual(worker.livenessProbe.httpGet, { path: '/health/live', port: 'metrics' });
    assert.deepEqual(worker.readinessProbe.httpGet, { path: '/health/ready', port: 'metrics' });
    assert.deepEqual(workerPod.metadata.annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(DEFAULT_METRICS_PORT), 'prometheus.io/path': '/metrics' });
    assert.equal(api.command.slice(api.command.indexOf('--tokens-file') + 1)[0], '/etc/relabel/tokens/tokens.yaml');
    // The store URL the docs show is one relabel opens as PostgreSQL.
    const docs = readFileSync(join(root, 'docs', 'deploy.md'), 'utf8');
    const url = /store-url='([^']+)'/.exec(docs)?.[1] ?? '';
    assert.equal(parseStoreUrl(url).kind, 'postgres');
    const config = byKind('ConfigMap')[0]?.data as Record<string, string>;
    assert.deepEqual(Object.keys(config).sort(), ['RELABEL_TASK_QUEUE', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE']);
  });

  describe('on the real API server', () => {
    const kc = loadKubeConfig(adminKubeconfigPath());
    const client = KubernetesObjectApi.makeApiClient(kc);
    const authz = kc.makeApiClient(AuthorizationV1Api);

    before(async () => {
      // Server-side apply, as `kubectl apply --server-side -k` does: the Namespace first, so the rest can land in it.
      for (const object of [...objects, ...apf]) {
        await client.patch(object, undefined, undefined, 'relabel-deploy-test', true, PatchStrategy.ServerSideApply);
      }
    });

    it('keeps every object as applied', async () => {
      for (const object of [...objects, ...apf]) {
        const stored = await client.read({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata?.name as string, namespace: object.metadata?.namespace } });
        assert.equal(stored.metadata?.name, object.metadata?.name, `${object.kind}/${object.metadata?.name}`);
      }
      const worker = await client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'relabel-worker', namespace } });
      assert.equal((worker as Manifest).spec.template.spec.serviceAccountName, serviceAccount);
      const role = await client.read({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'relabel' } });
      assert.deepEqual(JSON.parse(JSON.stringify((role as Manifest).rules)), [
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get', 'list'] },
        { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list'] },
      ]);
    });

    it('lets the service account read and patch Nodes, record Events, and read the workloads a plan weighs', async () => {
      for (const verb of ['get', 'list', 'watch', 'patch']) assert.equal(await allowed(authz, verb, 'nodes'), true, `nodes ${verb}`);
      for (const [resource, group] of [['pods', ''], ['daemonsets', 'apps'], ['poddisruptionbudgets', 'policy']] as const) {
        for (const verb of ['get', 'list']) {
          assert.equal(await allowed(authz, verb, resource, group), true, `${resource} ${verb} in every namespace`);
          assert.equal(await allowed(authz, verb, resource, group, namespace), true, `${resource} ${verb} in ${namespace}`);
        }
      }
      for (const verb of ['create', 'patch']) {
        assert.equal(await allowed(authz, verb, 'events', '', 'default'), true, `events ${verb}`);
        assert.equal(await allowed(authz, verb, 'events', 'events.k8s.io', 'default'), true, `events.k8s.io events ${verb}`);
      }
    });

    it('denies the service account everything else', async () => {
      const denied: [verb: string, resource: string, group?: string, ns?: string][] = [
        ['get', 'secrets', '', namespace],
        ['list', 'secrets', '', namespace],
        ['delete', 'nodes'],
        ['update', 'nodes'],
        ['create', 'nodes'],
        ['delete', 'pods', '', namespace],
        ['create', 'pods', '', namespace],
        ['patch', 'pods'],
        ['watch', 'pods'],
        ['update', 'daemonsets', 'apps', namespace],
        ['delete', 'poddisruptionbudgets', 'policy', namespace],
        ['delete', 'events', '', 'default'],
        ['list', 'events', '', 'default'],
        ['get', 'configmaps', '', namespace],
        ['create', 'clusterrolebindings', 'rbac.authorization.k8s.io'],
      ];
      for (const [verb, resource, group, ns] of denied) assert.equal(await allowed(authz, verb, resource, group, ns), false, `${verb} ${resource} must be denied`);
    });
  });
});


describe('worker and CLI connected to Temporal through a profiles file', () => {
  const prefix = `dp-${uniqueSuffix()}`;
  const { files, nodes } = prefixedSite(prefix);
  const targets = nodes.slice(0, 2);
  const dir = mkdtempSync(join(tmpdir(), 'relabel-deploy-'));
  const profilesFile = join(dir, 'temporal.toml');
  let closed = 0;
  let env: Record<string, string> = {};
  let worker: ChildProcess | undefined;

  before(async () => {
    const { store, url } = await storeWithSite(files);
    await store.close();
    for (const name of targets) await createNode(adminCore(), name);
    closed = await closedPort();
    writeFileSync(
      profilesFile,
      [
        '[profile.relabel-deploy]',
        `address = "${temporalAddress()}"`,
        'namespace = "default"',
        '',
        '[profile.nowhere]',
        `address = "127.0.0.1:${closed}"`,
        'namespace = "default"',
        '',
      ].join('\n'),
    );
    env = {
      // Empty: unset for relabel, so only the profile says where Temporal is.
      TEMPORAL_ADDRESS: '',
      TEMPORAL_NAMESPACE: '',
      TEMPORAL_CONFIG_FILE: profilesFile,
      TEMPORAL_PROFILE: 'relabel-deploy',
      HOME: join(dir, 'home'),
      RELABEL_STORE_URL: url,
      RELABEL_TASK_QUEUE: `relabel-deploy-${prefix}`,
      KUBECONFIG: kubeconfigPath(),
    };
    worker = await startWorkerProcess(env);
  });

  after(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker?.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    for (const name of targets) await adminCore().deleteNode({ name }).catch(() => undefined);
  });

  it('runs update_labels: the CLI starts it and the worker carries it out, both through the profile', async () => {
    const run = exits(await relabel(['update-labels', '--nodes', targets.join(','), '--wait'], env), 0);
    assert.match(run.stdout, /^status: success: 2 of 2 node\(s\) succeeded, 0 failed, 2 written$/m);
    for (const name of targets) {
      const node = await adminCore().readNode({ name });
      assert.ok(node.metadata?.annotations?.['relabel.airshipit.org/owned-labels'], `${name} carries relabel's ownership record`);
    }
  });

  it('uses the profile TEMPORAL_PROFILE names: one pointing at a closed port fails with exit 6 naming it', async () => {
    const run = exits(await relabel(['runs', '--site', `${prefix}-site`], { ...env, TEMPORAL_PROFILE: 'nowhere' }), 6);
    assert.match(run.stderr, new RegExp(`cannot reach Temporal at 127\\.0\\.0\\.1:${closed} \\(namespace default\\): connection refused`));
  });

  it('refuses a profile the file does not have: the CLI exits 2 naming profile and file; document commands still work', async () => {
    const missing = { ...env, TEMPORAL_PROFILE: 'staging' };
    const run = exits(await relabel(['runs', '--site', `${prefix}-site`], missing), 2);
    assert.match(run.stderr, new RegExp(`Temporal connection settings \\(profile staging of ${profilesFile.replace(/[.]/g, '\\.')}\\): Profile 'staging' not found in config data`));
    exits(await relabel(['docs', 'list'], missing), 0);
  });

  it('refuses to start the API server with a profile the file does not have, exit 1, saying why', async () => {
    const run = exits(await relabel(['api', '--listen', '127.0.0.1:0'], { ...env, TEMPORAL_PROFILE: 'staging', RELABEL_API_TOKENS: 'deploy-test-token:admin' }), 1);
    assert.match(run.stderr, new RegExp(`^relabel api: Temporal connection settings \\(profile staging of ${profilesFile.replace(/[.]/g, '\\.')}\\): Profile 'staging' not found in config data$`, 'm'));
  });

  it('refuses to start the worker with a profile the file does not have, exit 1, saying why', async () => {
    const child = fork(new URL('../../src/worker.ts', import.meta.url).pathname, [], {
      env: { ...process.env, ...env, TEMPORAL_PROFILE: 'staging' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`^relabel-worker: Temporal connection settings \\(profile staging of ${profilesFile.replace(/[.]/g, '\\.')}\\): Profile 'staging' not found in config data$`, 'm'));
  });
});

describe('API readiness, apart from liveness', () => {
  let postgres: PostgresServer | undefined;
  const opened: Relabel[] = [];

  /** GETs `path` of an API server over `relabel` (no token), as JSON. */
  async function get(relabel: Relabel, path: string): Promise<{ status: number; json: any }> {
    const app = createApiServer({ relabel, nodes: { readNode: () => Promise.reject(new Error('unused')), patchNode: () => Promise.reject(new Error('unused')), listNodes: () => { throw new Error('unused'); } }, tokens: TOKENS });
    try {
      const res = await app.inject({ method: 'GET', url: path });
      return { status: res.statusCode, json: res.json() };
    } finally {
      await app.close();
    }
  }

  before(async () => {
    postgres = await startPostgres({ dir: mkdtempSync(join(tmpdir(), 'relabel-deploy-pg-')) });
  });
  after(async () => {
    for (const relabel of opened) await relabel.close().catch(() => undefined);
    await postgres?.stop();
  });

  it('is ready when Temporal and the PostgreSQL store both answer; then reports the store alone when PostgreSQL stops', async () => {
    const relabel = await openRelabel({ ...relabelConfigFromEnv(), storeUrl: postgres?.url });
    opened.push(relabel);
    for (const path of ['/health/ready', '/api/v1.0/health/ready']) {
      const ready = await get(relabel, path);
      assert.equal(ready.status, 200, path);
      assert.equal(ready.json.message, 'relabel API is ready');
      assert.deepEqual(ready.json.details, {
        errorCount: 0,
        messageList: [
          { message: `temporal: reachable at ${temporalAddress()} (namespace default)`, error: false },
          { message: 'revision store: reachable', error: false },
        ],
      });
    }

    await postgres?.stop();
    const t0 = performance.now();
    const down = await get(relabel, '/health/ready');
    assert.ok(performance.now() - t0 < 5000, 'answers within the checks\' bound');
    assert.equal(down.status, 503);
    assert.equal(down.json.reason, 'Unavailable');
    assert.equal(down.json.retry, true);
    assert.equal(down.json.message, 'relabel API is not ready: revision store not answering');
    assert.equal(down.json.details.errorCount, 1);
    assert.deepEqual(down.json.details.messageList[0], { message: `temporal: reachable at ${temporalAddress()} (namespace default)`, error: false });
    assert.equal(down.json.details.messageList[1].error, true);
    assert.match(down.json.details.messageList[1].message, /^revision store: .+/);
    assert.ok(down.json.details.messageList[1].message.length <= 320);
    // Liveness does not depend on either.
    assert.equal((await get(relabel, '/health')).status, 200);
  });

  it('reports Temporal alone when it cannot be reached, saying where and why', async () => {
    const port = await closedPort();
    const relabel = await openRelabel({ ...relabelConfigFromEnv(), temporalAddress: `127.0.0.1:${port}`, storeUrl: `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-deploy-')), 'revisions.db')}` });
    opened.push(relabel);
    const down = await get(relabel, '/api/v1.0/health/ready');
    assert.equal(down.status, 503);
    assert.equal(down.json.message, 'relabel API is not ready: temporal not answering');
    assert.deepEqual(down.json.details, {
      errorCount: 1,
      messageList: [
        { message: `temporal: cannot reach Temporal at 127.0.0.1:${port} (namespace default): connection refused`, error: true },
        { message: 'revision store: reachable', error: false },
      ],
    });
    assert.equal((await get(relabel, '/api/v1.0/health')).status, 200);
  });
});
