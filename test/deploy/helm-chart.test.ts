/**
 * The Helm chart (deploy/helm/relabel) with the real helm and the test
 * stack's real kube-apiserver.
 *
 * Offline: `helm lint --strict` passes with the defaults and with
 * ci/full-values.yaml (every option on); values.schema.json refuses
 * out-of-range values and unknown keys, and helm's error names the field;
 * the defaults render exactly the objects of the kustomize tree deploy/
 * (less its Namespace, which `helm install --create-namespace` makes, and
 * less Helm's own labels and the configuration checksum); every variable and
 * flag the chart sets is one relabel reads, and the worker parses the full
 * rendering's command line and environment to the values given; the
 * fleet's centre worker, off by default, gets only Temporal's settings.
 *
 * On the API server: every object of both renderings passes a server-side
 * dry-run create with strict field validation, without warnings (the
 * ServiceMonitor and PrometheusRule against the Prometheus Operator's own
 * CRDs, applied from the pinned module);
 * `helm install`, `helm upgrade` (defaults, then every option on) and
 * `helm uninstall` create, change and delete the objects, and the installed
 * service account may patch Nodes but not read Secrets. Without a controller
 * manager no Pod is made: the Deployments are checked as objects.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request, type RequestOptions } from 'node:https';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationV1Api, KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { API, CONNECTION, VARIABLES, WORKER } from '../../src/settings/table.ts';
import { temporalSettingsFromEnv } from '../../src/temporal/settings.ts';
import { ChartTool, toolPath } from '../../stack/tools.ts';
import { adminKubeconfigPath, exits, runNode, uniqueSuffix } from '../helpers.ts';

const root = new URL('../../', import.meta.url).pathname;
const chart = join(root, 'deploy', 'helm', 'relabel');
const fullValues = join(chart, 'ci', 'full-values.yaml');

type Manifest = KubernetesObject & Record<string, any>;

/** helm's own directories, so the tests never read or write the user's. */
const helmHome = mkdtempSync(join(tmpdir(), 'relabel-helm-'));
for (const dir of ['cache', 'config', 'data']) mkdirSync(join(helmHome, dir));

/** Runs helm with `args` against the test stack's API server as cluster-admin; never throws on a non-zero exit. */
function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    KUBECONFIG: adminKubeconfigPath(),
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
  };
  return new Promise((resolve, reject) => {
    execFile(toolPath(ChartTool.helm), args, { env, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
    });
  });
}

/** helm's run, asserted to exit 0 (its output shown when not). */
async function helmOk(args: string[]): Promise<string> {
  const run = await helm(args);
  assert.equal(run.code, 0, `helm ${args.join(' ')}: exit ${run.code}\n${run.stderr}`);
  return run.stdout;
}

/** The objects of a multi-document YAML text, empty documents left out. */
function parseObjects(text: string, what: string): Manifest[] {
  const objects: Manifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    assert.deepEqual(doc.errors, [], `${what}: YAML errors`);
    const object = doc.toJS() as Manifest | null;
    if (object !== null) objects.push(object);
  }
  return objects;
}

/** `helm template RELEASE chart -n NAMESPACE …extra`, parsed. */
async function render(release: string, namespace: string, extra: string[] = []): Promise<Manifest[]> {
  return parseObjects(await helmOk(['template', release, chart, '--namespace', namespace, ...extra]), `helm template ${extra.join(' ')}`);
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

/**
 * deploy/ as `kubectl apply -k` renders it, for the fields its
 * kustomization uses (test/deploy/manifests.test.ts checks it keeps to them): the
 * listed files, the namespace on namespaced objects and binding subjects,
 * the image replaced.
 */
function renderKustomize(): Manifest[] {
  const dir = join(root, 'deploy');
  const k = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { namespace: string; resources: string[]; images: { name: string; newName: string; newTag: string }[] };
  const objects = k.resources.flatMap((file) => parseObjects(readFileSync(join(dir, file), 'utf8'), file));
  for (const o of objects) {
    if (!CLUSTER_SCOPED.has(o.kind ?? '')) o.metadata = { ...o.metadata, namespace: k.namespace };
    for (const s of o.subjects ?? []) if (s.kind === 'ServiceAccount') s.namespace = k.namespace;
    for (const c of o.spec?.template?.spec?.containers ?? []) {
      const image = k.images.find((i) => i.name === c.image);
      if (image) c.image = `${image.newName}:${image.newTag}`;
    }
  }
  return objects;
}

/** Labels Helm's conventions add that deploy/ does not carry. */
const HELM_LABELS = ['app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/version', 'app.kubernetes.io/component', 'helm.sh/chart'];

/** A chart object without what only Helm adds: its labels, the configuration checksum, a Service type spelled out as the default. */
function withoutHelmAdditions(object: Manifest): Manifest {
  const o = structuredClone(object);
  const strip = (labels?: Record<string, string>) => HELM_LABELS.forEach((l) => delete labels?.[l]);
  strip(o.metadata?.labels);
  strip(o.spec?.selector?.matchLabels);
  if (o.kind === 'Service') {
    strip(o.spec.selector);
    if (o.spec.type === 'ClusterIP') delete o.spec.type;
  }
  strip(o.spec?.template?.metadata?.labels);
  delete o.spec?.template?.metadata?.annotations?.['checksum/config'];
  return o;
}

const key = (o: Manifest) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
const byKey = (objects: Manifest[]) => new Map(objects.map((o) => [key(o), o]));
const find = (objects: Manifest[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata?.name === name) as Manifest;
const container = (objects: Manifest[], name: string) => find(objects, 'Deployment', name).spec.template.spec.containers[0];

/** The variables relabel reads: every row of the settings table with one, and those the Temporal SDK's environment configuration reads. */
const READ_VARIABLES = new Set([
  ...[CONNECTION, WORKER, API, VARIABLES].flatMap((table) => Object.values(table).flatMap((s: { env?: string }) => (s.env ? [s.env] : []))),
  // @temporalio/envconfig (src/temporal/settings.ts); the test of the full rendering shows these are read.
  'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'TEMPORAL_TLS_SERVER_NAME', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
]);

/** The long flags a table declares (`--kube-qps <n>` → `--kube-qps`). */
const flagsOf = (...tables: Record<string, { flags?: string }>[]) => new Set(tables.flatMap((t) => Object.values(t).flatMap((s) => (s.flags ? [s.flags.split(' ')[0] as string] : []))));

/** The flags on a command line after its script (`--a=1` and `--a 1` both give `--a`). */
function flagsAfter(command: string[], script: string): string[] {
  return command.slice(command.indexOf(script) + 1).filter((a) => a.startsWith('--')).map((a) => a.split('=')[0] as string);
}

/**
 * A container's environment as the kubelet would give it: the ConfigMap's
 * data, then its own variables, each value from a Secret given as `secret`.
 */
function environment(objects: Manifest[], c: any, secret: (ref: { name: string; key: string }) => string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) if (from.configMapRef) Object.assign(env, find(objects, 'ConfigMap', from.configMapRef.name).data);
  for (const e of c.env ?? []) env[e.name] = e.valueFrom?.secretKeyRef ? secret(e.valueFrom.secretKeyRef) : e.value;
  return env;
}

/** `make()`, run once when first asked for. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

const kustomize = renderKustomize();
/** The chart rendered as release `relabel` in namespace relabel, as deploy/ is: with its defaults, and with every option on. */
const defaults = once(() => render('relabel', 'relabel'));
const full = once(() => render('relabel', 'relabel', ['-f', fullValues]));

describe('the Helm chart, rendered', () => {
  it('passes helm lint --strict with its defaults and with every option on', async () => {
    for (const extra of [[], ['-f', fullValues]]) {
      const out = await helmOk(['lint', '--strict', chart, ...extra]);
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('renders with its defaults exactly the objects of deploy/, less the Namespace and Helm\'s own labels', async () => {
    const chartObjects = byKey((await defaults()).map(withoutHelmAdditions));
    const deployObjects = byKey(kustomize.filter((o) => o.kind !== 'Namespace'));
    assert.deepEqual([...chartObjects.keys()].sort(), [...deployObjects.keys()].sort());
    for (const [k, o] of deployObjects) assert.deepEqual(chartObjects.get(k), o, k);
  });

  it('keeps its pods restricted and its rights those of deploy/ with every option on', async () => {
    const objects = await full();
    const rules = find(kustomize, 'ClusterRole', 'relabel').rules;
    assert.deepEqual(find(objects, 'ClusterRole', 'relabel-full').rules, rules);
    assert.deepEqual(find(objects, 'ClusterRoleBinding', 'relabel-full').subjects, [{ kind: 'ServiceAccount', name: 'relabel-full-sa', namespace: 'relabel' }]);
    for (const name of ['relabel-full-worker', 'relabel-full-api', 'relabel-full-centre']) {
      const pod = find(objects, 'Deployment', name).spec.template.spec;
      assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 1001, runAsGroup: 1001, seccompProfile: { type: 'RuntimeDefault' } }, name);
      assert.deepEqual(pod.containers[0].securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }, name);
      assert.deepEqual(pod.volumes.find((v: any) => v.name === 'tmp'), { name: 'tmp', emptyDir: {} }, name);
      assert.deepEqual(pod.containers[0].volumeMounts.find((v: any) => v.name === 'tmp'), { name: 'tmp', mountPath: '/tmp' }, name);
    }
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata?.name}`).sort(),
      [
        'ClusterRole/relabel-full', 'ClusterRoleBinding/relabel-full', 'ConfigMap/relabel-full', 'ConfigMap/relabel-full-dashboard',
        'Deployment/relabel-full-api', 'Deployment/relabel-full-centre', 'Deployment/relabel-full-worker', 'PodDisruptionBudget/relabel-full-api', 'PodDisruptionBudget/relabel-full-worker',
        'PrometheusRule/relabel-full', 'Service/relabel-full-api', 'Service/relabel-full-worker-metrics', 'ServiceAccount/relabel-full-sa', 'ServiceMonitor/relabel-full',
      ],
    );
  });

  it('sets only variables and flags relabel reads', async () => {
    const workerFlags = flagsOf(CONNECTION, WORKER);
    const apiFlags = flagsOf(CONNECTION, API);
    for (const objects of [await defaults(), await full()]) {
      for (const cm of objects.filter((o) => o.kind === 'ConfigMap' && !o.metadata?.name?.endsWith('-dashboard'))) {
        for (const name of Object.keys(cm.data)) assert.ok(READ_VARIABLES.has(name), `ConfigMap ${cm.metadata?.name}: ${name} is read by nobody`);
      }
      for (const d of objects.filter((o) => o.kind === 'Deployment')) {
        const c = d.spec.template.spec.containers[0];
        // RELABEL_DEBUG is the full values' extraEnv: given by the user, yet read by relabel too.
        for (const e of c.env) assert.ok(READ_VARIABLES.has(e.name), `${d.metadata?.name}: ${e.name} is read by nobody`);
        const [script, known] = c.name === 'api' ? ['src/api/main.ts', apiFlags] : ['src/worker.ts', workerFlags];
        assert.ok(c.command.includes(script), `${d.metadata?.name} runs ${script}`);
        for (const flag of flagsAfter(c.command, script)) assert.ok(known.has(flag), `${d.metadata?.name}: ${flag} is not a flag of ${script}`);
      }
    }
    const api = container(await full(), 'relabel-full-api');
    assert.deepEqual(api.command, ['node', 'src/api/main.ts', '--listen', '0.0.0.0:8080', '--tokens-file', '/etc/relabel/tokens/tokens.yaml', '--body-limit=4194304']);
    const env = Object.fromEntries(api.env.filter((e: any) => e.name.startsWith('RELABEL_KEYSTONE_')).map((e: any) => [e.name, e.value]));
    assert.deepEqual(env, {
      RELABEL_KEYSTONE_URL: 'http://keystone-api.openstack.svc:5000/v3',
      RELABEL_KEYSTONE_USERNAME: 'relabel',
      RELABEL_KEYSTONE_PASSWORD_FILE: '/etc/relabel/keystone/password',
      RELABEL_KEYSTONE_PROJECT: 'service',
      RELABEL_KEYSTONE_USER_DOMAIN: 'Default',
      RELABEL_KEYSTONE_PROJECT_DOMAIN: 'Default',
      RELABEL_KEYSTONE_ROLES: 'admin=admin,admin_ucp=admin,reader=viewer',
      RELABEL_KEYSTONE_CACHE_SECONDS: '120',
    });
  });

  it('gives the worker settings it parses to the values given, and Temporal TLS and API key the SDK reads', async () => {
    const objects = await full();
    const worker = container(objects, 'relabel-full-worker');
    // The Temporal TLS Secret's files, where the pod would have them mounted.
    const tls = mkdtempSync(join(tmpdir(), 'relabel-helm-tls-'));
    for (const file of ['tls.crt', 'tls.key', 'ca.crt']) writeFileSync(join(tls, file), `${file} of the test\n`);
    const secrets: Record<string, string> = { 'relabel-store/url': 'postgres://relabel:pw@postgres.db.svc:5432/relabel', 'relabel-temporal-api-key/api-key': 'temporal-api-key-of-the-test' };
    const env = environment(objects, worker, (ref) => secrets[`${ref.name}/${ref.key}`] ?? assert.fail(`no Secret ${ref.name} key ${ref.key} in the full values`));
    for (const [name, value] of Object.entries(env)) if (value.startsWith('/etc/relabel/temporal-tls/')) env[name] = value.replace('/etc/relabel/temporal-tls', tls);

    const temporal = temporalSettingsFromEnv(env);
    assert.equal(temporal.configError, undefined);
    assert.equal(temporal.temporalAddress, 'relabel.a1b2c.tmprl.cloud:7233');
    assert.equal(temporal.namespace, 'relabel.a1b2c');
    assert.equal(temporal.taskQueue, 'relabel-site-a');
    assert.equal(temporal.connect?.apiKey, 'temporal-api-key-of-the-test');
    const t = temporal.connect?.tls as any;
    assert.equal(t.serverNameOverride, 'relabel.a1b2c.tmprl.cloud');
    assert.equal(Buffer.from(t.serverRootCACertificate).toString(), 'ca.crt of the test\n');
    assert.equal(Buffer.from(t.clientCertPair.crt).toString(), 'tls.crt of the test\n');
    assert.equal(Buffer.from(t.clientCertPair.key).toString(), 'tls.key of the test\n');

    // The worker's own parser, in a process of its own (a refused setting exits it), on the rendered command line.
    const script = 'src/worker.ts';
    const argv = ['node', script, ...worker.command.slice(worker.command.indexOf(script) + 1)];
    const parse = `import { parseWorkerSettings } from './src/worker/config.ts';
const s = parseWorkerSettings(${JSON.stringify(argv)});
const { connect: _c, ...config } = s.config;
console.log(JSON.stringify({ ...s, config }));`;
    // KUBECONFIG empty: unset for the worker, which the test's own would otherwise configure.
    const run = exits(await runNode(['--input-type=module', '-e', parse], { ...env, KUBECONFIG: '' }), 0);
    const settings = JSON.parse(run.stdout);
    assert.deepEqual(settings, {
      config: {
        role: 'site',
        temporalAddress: 'relabel.a1b2c.tmprl.cloud:7233',
        namespace: 'relabel.a1b2c',
        taskQueue: 'relabel-site-a',
        fleetTaskQueue: 'relabel-fleet',
        storeUrl: 'postgres://relabel:pw@postgres.db.svc:5432/relabel',
        kubeQps: 20,
        kubeBurst: 40,
        nodeCacheMax: 5000,
        searchAttributes: false,
        maxCachedWorkflows: 300,
        maxConcurrentWorkflowTasks: 200,
      },
      logLevel: 'debug',
      metricsAddress: '0.0.0.0',
      metricsPort: 9465,
    });
  });

  it("gives the fleet's centre worker, with every option on, only Temporal: no kubeconfig, store or ServiceAccount token", async () => {
    const objects = await full();
    assert.equal((await defaults()).find((o) => o.metadata?.name === 'relabel-centre'), undefined, 'a site install has no centre');
    const pod = find(objects, 'Deployment', 'relabel-full-centre').spec.template.spec;
    assert.deepEqual([pod.automountServiceAccountToken, pod.serviceAccountName], [false, undefined]);
    const centre = pod.containers[0];
    assert.ok(!centre.env.some((e: any) => e.name === 'RELABEL_STORE_URL' || e.name === 'KUBECONFIG'), 'no store or kubeconfig variable');
    const env = environment(objects, centre, (ref) => (ref.key === 'api-key' ? 'temporal-api-key-of-the-test' : assert.fail(`the centre reads Secret ${ref.name} key ${ref.key}`)));
    for (const [name, value] of Object.entries(env)) if (value.startsWith('/etc/relabel/')) delete env[name];
    const script = 'src/worker.ts';
    const argv = ['node', script, ...centre.command.slice(centre.command.indexOf(script) + 1)];
    const parse = `import { parseWorkerSettings } from './src/worker/config.ts';
const s = parseWorkerSettings(${JSON.stringify(argv)});
console.log(JSON.stringify({ role: s.config.role, fleetTaskQueue: s.config.fleetTaskQueue, kubeconfig: s.config.kubeconfig ?? null, storeUrl: s.config.storeUrl ?? null, port: s.metricsPort }));`;
    // The test's own KUBECONFIG stays in the environment: the centre drops it.
    const run = exits(await runNode(['--input-type=module', '-e', parse], env), 0);
    assert.deepEqual(JSON.parse(run.stdout), { role: 'centre', fleetTaskQueue: 'relabel-fleet-east', kubeconfig: null, storeUrl: null, port: 9466 });
  });

  describe('values.schema.json', () => {
    /** helm template with `args`, asserted refused by the schema naming `field` (its JSON pointer). */
    async function refused(args: string[], field: string, why: RegExp): Promise<void> {
      const run = await helm(['template', 'relabel', chart, ...args]);
      assert.notEqual(run.code, 0, `${args.join(' ')} must be refused`);
      assert.match(run.stderr, /values don't meet the specifications of the schema/, run.stderr);
      const line = run.stderr.split('\n').find((l) => l.includes(`'${field}'`));
      assert.ok(line, `helm's error names ${field}:\n${run.stderr}`);
      assert.match(line, why);
    }

    it('refuses a negative number of replicas, naming it', async () => {
      await refused(['--set', 'worker.replicas=-1'], '/worker/replicas', /minimum/);
      await refused(['--set', 'api.replicas=-1'], '/api/replicas', /minimum/);
    });

    it('refuses keys it does not know, naming them and where they are', async () => {
      await refused(['--set', 'worker.replica=2'], '/worker', /additional propert.*'replica'/);
      await refused(['--set', 'imageTag=1.0'], '', /additional propert.*'imageTag'/);
    });

    it('refuses values relabel would refuse at start', async () => {
      await refused(['--set', 'logLevel=verbose'], '/logLevel', /trace|enum|value must be one of/);
      await refused(['--set', 'worker.maxWorkflowTasks=1'], '/worker/maxWorkflowTasks', /minimum/);
      await refused(['--set', 'temporal.address=temporal'], '/temporal/address', /pattern|match/);
      await refused(['--set', 'api.keystone.roles=admin=root'], '/api/keystone/roles', /pattern|match/);
      await refused(['--set', 'api.keystone.enabled=true'], '/api/keystone/url', /minLength|length/);
    });

    it('refuses an API without tokens or Keystone, saying why', async () => {
      const run = await helm(['template', 'relabel', chart, '--set', 'api.tokens.enabled=false']);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /api\.tokens\.enabled: false needs api\.keystone\.enabled: true/);
    });
  });
});

describe('the Helm chart on the real API server', () => {
  const suffix = uniqueSuffix();
  const namespace = `relabel-helm-${suffix}`;
  const kc = loadKubeConfig(adminKubeconfigPath());
  let client: KubernetesObjectApi;

  before(async () => {
    // The Prometheus Operator's CRDs, as its pinned release publishes them (tools/build-tools.sh). Left
    // in place: the stack is thrown away after the run, and a concurrent run of this file may use them.
    const dir = toolPath(ChartTool.prometheusOperatorCrds);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      for (const crd of parseObjects(readFileSync(join(dir, file), 'utf8'), file)) {
        const created = await kubeRequest(kc, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
        assert.ok(created.status === 201 || created.status === 409, `${file}: ${created.status} ${created.text}`);
        await established(crd.metadata?.name as string);
      }
    }
    const ns = await kubeRequest(kc, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    assert.equal(ns.status, 201, ns.text);
    client = KubernetesObjectApi.makeApiClient(kc);
  });

  after(async () => {
    await helm(['uninstall', `relabel-${suffix}`, '--namespace', `${namespace}-installed`, '--ignore-not-found']);
  });

  it('accepts every object of the defaults and of every option on in a server-side dry run', async () => {
    const renderings = [
      await render(`relabel-${suffix}`, namespace),
      await render(`relabel-${suffix}`, namespace, ['-f', fullValues, '--set', `fullnameOverride=relabel-full-${suffix}`]),
    ];
    for (const objects of renderings) {
      for (const object of objects) {
        const created = await dryRunCreate(kc, object);
        assert.equal(created.status, 201, `${key(object)}: ${created.status} ${created.text}`);
        assert.ok(created.json.metadata?.uid, `${key(object)} as the API server would store it`);
        assert.deepEqual(created.warnings, [], `${key(object)}: warnings`);
      }
    }
    assert.deepEqual(
      renderings[1]?.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1').map((o) => o.kind).sort(),
      ['PrometheusRule', 'ServiceMonitor'],
    );
    // Nothing was stored.
    await assert.rejects(client.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `relabel-${suffix}-worker`, namespace } }), /404|not found/i);
  });

  it('installs, upgrades to every option on, and uninstalls', async () => {
    const release = `relabel-${suffix}`;
    const ns = `${namespace}-installed`;
    const read = (apiVersion: string, kind: string, name: string, namespaced = true) =>
      client.read<Manifest>({ apiVersion, kind, metadata: { name, ...(namespaced ? { namespace: ns } : {}) } });

    const install = await helmOk(['install', release, chart, '--namespace', ns, '--create-namespace']);
    assert.match(install, /STATUS: deployed/);
    for (const object of parseObjects(await helmOk(['get', 'manifest', release, '--namespace', ns]), 'helm get manifest')) {
      const stored = await read(object.apiVersion as string, object.kind as string, object.metadata?.name as string, !CLUSTER_SCOPED.has(object.kind ?? ''));
      assert.equal(stored.metadata?.labels?.['app.kubernetes.io/managed-by'], 'Helm', key(object));
      assert.equal(stored.metadata?.annotations?.['meta.helm.sh/release-name'], release, key(object));
    }
    const worker = await read('apps/v1', 'Deployment', `${release}-worker`);
    assert.equal(worker.spec.replicas, 1);
    const checksum = worker.spec.template.metadata.annotations['checksum/config'];

    // The installed service account has deploy/'s rights, and no more.
    const authz = kc.makeApiClient(AuthorizationV1Api);
    const allowed = async (verb: string, resource: string, resourceNs?: string) =>
      (await authz.createSubjectAccessReview({ body: { spec: { user: `system:serviceaccount:${ns}:${release}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], resourceAttributes: { verb, resource, ...(resourceNs ? { namespace: resourceNs } : {}) } } } })).status?.allowed === true;
    assert.equal(await allowed('patch', 'nodes'), true);
    assert.equal(await allowed('get', 'secrets', ns), false);

    const upgrade = await helmOk(['upgrade', release, chart, '--namespace', ns, '-f', fullValues, '--set', `fullnameOverride=${release}`]);
    assert.match(upgrade, /STATUS: deployed/);
    assert.match(upgrade, /REVISION: 2/);
    const upgraded = await read('apps/v1', 'Deployment', `${release}-worker`);
    assert.equal(upgraded.spec.replicas, 3);
    assert.notEqual(upgraded.spec.template.metadata.annotations['checksum/config'], checksum, 'a changed ConfigMap rolls the pods');
    assert.equal((await read('v1', 'ConfigMap', release)).data.TEMPORAL_ADDRESS, 'relabel.a1b2c.tmprl.cloud:7233');
    for (const [apiVersion, kind, name] of [
      ['policy/v1', 'PodDisruptionBudget', `${release}-worker`],
      ['policy/v1', 'PodDisruptionBudget', `${release}-api`],
      ['monitoring.coreos.com/v1', 'ServiceMonitor', release],
      ['monitoring.coreos.com/v1', 'PrometheusRule', release],
      ['v1', 'ConfigMap', `${release}-dashboard`],
      ['v1', 'ServiceAccount', 'relabel-full-sa'],
    ] as const) {
      assert.equal((await read(apiVersion, kind, name)).metadata?.name, name, `${kind}/${name} after the upgrade`);
    }
    await assert.rejects(read('v1', 'ServiceAccount', release), /404|not found/i, 'the first service account is gone');
    const binding = await read('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', release, false);
    assert.deepEqual(JSON.parse(JSON.stringify(binding.subjects)), [{ kind: 'ServiceAccount', name: 'relabel-full-sa', namespace: ns }]);
    const history = JSON.parse(await helmOk(['history', release, '--namespace', ns, '-o', 'json'])) as { revision: number; status: string }[];
    assert.deepEqual(history.map((h) => [h.revision, h.status]), [[1, 'superseded'], [2, 'deployed']]);

    await helmOk(['uninstall', release, '--namespace', ns]);
    for (const [apiVersion, kind, name, namespaced] of [
      ['apps/v1', 'Deployment', `${release}-worker`, true],
      ['apps/v1', 'Deployment', `${release}-api`, true],
      ['monitoring.coreos.com/v1', 'PrometheusRule', release, true],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole', release, false],
    ] as const) {
      await assert.rejects(read(apiVersion, kind, name, namespaced), /404|not found/i, `${kind}/${name} after uninstall`);
    }
  });
});

/** An answer of the API server: its status, its body as text and parsed, its warnings. */
interface KubeAnswer {
  status: number;
  text: string;
  json: any;
  warnings: string[];
}

/**
 * One request to the test stack's API server with `kc`'s credentials, the
 * body sent as the JSON it is. Not through KubernetesObjectApi: its
 * serializer keeps only the fields its models know, so a misspelt field in
 * the chart (or a CRD's `x-kubernetes-int-or-string`) would never reach the
 * server; here the server sees what helm would send.
 */
async function kubeRequest(kc: KubeConfig, method: string, path: string, body?: unknown): Promise<KubeAnswer> {
  const server = new URL(kc.getCurrentCluster()?.server ?? assert.fail('no cluster in the kubeconfig'));
  const options: RequestOptions = { method, hostname: server.hostname, port: server.port, path, headers: { accept: 'application/json', 'content-type': 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const warning = res.headers.warning;
        resolve({ status: res.statusCode ?? 0, text, json: text ? JSON.parse(text) : undefined, warnings: warning === undefined ? [] : [warning].flat() });
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Where the API server keeps objects of `apiVersion`/`kind`, from its discovery: the collection path prefix, plural and scope. */
const discovered = new Map<string, { plural: string; namespaced: boolean }>();
async function resourceOf(kc: KubeConfig, apiVersion: string, kind: string): Promise<{ base: string; plural: string; namespaced: boolean }> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  if (!discovered.has(`${apiVersion}/${kind}`)) {
    const list = await kubeRequest(kc, 'GET', base);
    assert.equal(list.status, 200, `discovery of ${apiVersion}: ${list.text}`);
    for (const r of list.json.resources as { name: string; kind: string; namespaced: boolean }[]) {
      if (!r.name.includes('/')) discovered.set(`${apiVersion}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
    }
  }
  const found = discovered.get(`${apiVersion}/${kind}`) ?? assert.fail(`the API server serves no ${kind} in ${apiVersion}`);
  return { base, ...found };
}

/** Creates `object` in a server-side dry run (every admission and validation, nothing stored), refusing unknown and duplicate fields. */
async function dryRunCreate(kc: KubeConfig, object: Manifest): Promise<KubeAnswer> {
  const { base, plural, namespaced } = await resourceOf(kc, object.apiVersion as string, object.kind as string);
  const scope = namespaced ? `/namespaces/${object.metadata?.namespace}` : '';
  return kubeRequest(kc, 'POST', `${base}${scope}/${plural}?dryRun=All&fieldValidation=Strict`, object);
}

/** Waits until the API server serves CRD `name` (its Established condition). */
async function established(name: string): Promise<void> {
  const kc = loadKubeConfig(adminKubeconfigPath());
  for (let i = 0; i < 100; i++) {
    const crd = await kubeRequest(kc, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (crd.json?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`CRD ${name} was not established within 10 s`);
}
