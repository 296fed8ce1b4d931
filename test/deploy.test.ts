/**
 * The manifests under deploy/ against the stack's real kube-apiserver (RBAC
 * authorization on): rendered as kustomize renders them, every object is
 * applied with server-side apply, and SubjectAccessReviews for relabel's
 * service account show it may do exactly what relabel needs (nodes: get,
 * list, watch, patch; events: create, patch) and nothing else.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuthorizationV1Api, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { parseStoreUrl } from '../src/store/open-store.ts';
import { adminKubeconfigPath } from './helpers.ts';

const root = new URL('../', import.meta.url).pathname;

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
  it('hold a Namespace, a ServiceAccount, RBAC, the worker and API Deployments and a Service, all in one namespace', () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.name}`),
      [
        'Namespace/relabel',
        'ServiceAccount/relabel',
        'ClusterRole/relabel',
        'ClusterRoleBinding/relabel',
        'ConfigMap/relabel',
        'Deployment/relabel-worker',
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
      ]);
    });

    it('lets the service account read and patch Nodes and record Events', async () => {
      for (const verb of ['get', 'list', 'watch', 'patch']) assert.equal(await allowed(authz, verb, 'nodes'), true, `nodes ${verb}`);
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
        ['list', 'pods', '', namespace],
        ['list', 'pods'],
        ['delete', 'events', '', 'default'],
        ['list', 'events', '', 'default'],
        ['get', 'configmaps', '', namespace],
        ['create', 'clusterrolebindings', 'rbac.authorization.k8s.io'],
      ];
      for (const [verb, resource, group, ns] of denied) assert.equal(await allowed(authz, verb, resource, group, ns), false, `${verb} ${resource} must be denied`);
    });
  });
});
