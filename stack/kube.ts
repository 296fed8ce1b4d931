/**
 * etcd and kube-apiserver on loopback, with token authentication and RBAC on,
 * and the kubeconfigs clients use: an admin one and a least-privilege one for
 * relabel's worker.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, Health, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from '@kubernetes/client-node';
import { startProcess, stopProcess, waitUntil, portOpen, type ManagedProcess } from './processes.ts';
import { toolPath } from './tools.ts';

/** The Kubernetes part of a running stack. */
export interface KubeStack {
  etcd: ManagedProcess;
  apiserver: ManagedProcess;
  /** https URL of the API server. */
  server: string;
  /** kubeconfig for a cluster administrator (system:masters). */
  adminKubeconfig: string;
  /** kubeconfig for relabel's worker: may only read and patch Nodes, record Events, and read DaemonSets, Pods and PodDisruptionBudgets; asks for uncompressed answers (`disable-compression`). */
  kubeconfig: string;
  /** The service-account signing key (PEM) the API server verifies tokens with; the controller manager signs with it. */
  serviceAccountKey: string;
  /** PEM file holding the API server's serving certificate and the CA that signed it. */
  caFile: string;
  /** The user `kubeconfig` authenticates as (`relabel-worker` unless told otherwise). */
  relabelUser: string;
  /** The API server's audit log (JSON lines, one per write to a Node), when it keeps one. */
  auditLog?: string;
}

/** How {@link startKube} sets up the API server beyond its ports. */
export interface KubeOptions {
  /** The user relabel's kubeconfig authenticates as: a fleet's sites each give their worker its own. */
  relabelUser?: string;
  /** Keep an audit log of every write to a Node (not its status): who wrote which Node, and when. */
  auditNodeWrites?: boolean;
}

/** The ClusterRole relabel's worker is bound to: exactly what relabelling needs (as deploy/rbac.yaml grants). */
export const RELABEL_CLUSTER_ROLE: V1ClusterRole = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'relabel-worker' },
  rules: [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get', 'list'] },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list'] },
  ],
};

const RELABEL_USER = 'relabel-worker';

/**
 * The audit policy of {@link KubeOptions.auditNodeWrites}: metadata only
 * (who, which Node, the answer's code) of creates, updates, patches and
 * deletes of Nodes themselves. `nodes` names no subresource, so KWOK's
 * status heartbeats and every read stay out of the log.
 */
const NODE_WRITES_AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', verbs: ['create', 'update', 'patch', 'delete'], resources: [{ group: '', resources: ['nodes'] }] }, { level: 'None' }],
};

/**
 * `kc` as a kubeconfig file, its clusters marked `disable-compression: true`
 * (a field the client does not write): on loopback, as relabel in its own
 * cluster, answers come uncompressed.
 */
function uncompressedConfig(kc: KubeConfig): string {
  const config = JSON.parse(kc.exportConfig()) as { clusters: { cluster: Record<string, unknown> }[] };
  for (const c of config.clusters) c.cluster['disable-compression'] = true;
  return JSON.stringify(config);
}

/**
 * A kubeconfig for `user` (token authentication) on the local cluster,
 * built by the Kubernetes client and written in its own format (JSON, which
 * every kubeconfig reader accepts).
 */
function kubeconfigFor(server: string, caData: string, user: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'relabel-local', server, caData, skipTLSVerify: false }],
    users: [{ name: user, token }],
    contexts: [{ name: `${user}@relabel-local`, cluster: 'relabel-local', user }],
    currentContext: `${user}@relabel-local`,
  });
  return kc;
}

/** Service-account keys and static tokens the API server authenticates with. */
interface Credentials {
  saKey: string;
  saPub: string;
  tokens: string;
  adminToken: string;
  relabelToken: string;
}

/** Writes fresh tokens (and, once, the service-account key pair) under `pki`. */
function writeCredentials(pki: string, relabelUser: string): Credentials {
  mkdirSync(pki, { recursive: true });
  const saKey = join(pki, 'sa.key');
  const saPub = join(pki, 'sa.pub');
  if (!existsSync(saKey)) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(saKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(saPub, publicKey.export({ type: 'spki', format: 'pem' }));
  }
  const adminToken = randomBytes(24).toString('hex');
  const relabelToken = randomBytes(24).toString('hex');
  const tokens = join(pki, 'tokens.csv');
  writeFileSync(tokens, `${adminToken},relabel-admin,relabel-admin,"system:masters"\n${relabelToken},${relabelUser},${relabelUser}\n`, { mode: 0o600 });
  return { saKey, saPub, tokens, adminToken, relabelToken };
}

function etcdArgs(dataDir: string, clientUrl: string, peerUrl: string): string[] {
  return [
    '--name=relabel',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=relabel=${peerUrl}`,
    '--log-level=warn',
    // A throwaway local store: durability across power loss buys nothing here.
    '--unsafe-no-fsync',
  ];
}

function apiserverArgs(etcdUrl: string, port: number, certDir: string, creds: Credentials, audit?: { policy: string; log: string }): string[] {
  return [
    ...(audit ? [`--audit-policy-file=${audit.policy}`, `--audit-log-path=${audit.log}`, '--audit-log-format=json', '--audit-log-maxbackup=0'] : []),
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${certDir}`,
    `--token-auth-file=${creds.tokens}`,
    '--authorization-mode=RBAC',
    '--anonymous-auth=false',
    `--service-account-key-file=${creds.saPub}`,
    `--service-account-signing-key-file=${creds.saKey}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--service-cluster-ip-range=10.96.0.0/24',
    '--enable-priority-and-fairness=false',
    '--v=1',
  ];
}

/**
 * Starts etcd and kube-apiserver under `dir` on the given loopback ports and
 * waits until the API server is ready and relabel's RBAC is in place.
 * Throws, with the server's log tail, when either fails to come up; what it
 * had started is stopped first.
 */
export async function startKube(
  dir: string,
  ports: { etcdClient: number; etcdPeer: number; apiserver: number },
  env: NodeJS.ProcessEnv = process.env,
  options: KubeOptions = {},
): Promise<KubeStack> {
  const relabelUser = options.relabelUser ?? RELABEL_USER;
  const etcdBin = toolPath('etcd', env);
  const apiserverBin = toolPath('kube-apiserver', env);
  const pki = join(dir, 'pki');
  const creds = writeCredentials(pki, relabelUser);
  let audit: { policy: string; log: string } | undefined;
  if (options.auditNodeWrites) {
    audit = { policy: join(dir, 'audit-policy.json'), log: join(dir, 'audit.log') };
    writeFileSync(audit.policy, JSON.stringify(NODE_WRITES_AUDIT_POLICY));
  }
  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const certDir = join(pki, 'serving');
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const started: ManagedProcess[] = [];
  try {
    const etcd = await startProcess('etcd', etcdBin, etcdArgs(join(dir, 'etcd'), etcdUrl, `http://127.0.0.1:${ports.etcdPeer}`), join(dir, 'etcd.log'), env);
    started.push(etcd);
    await waitUntil(etcd, 'client port open', () => portOpen(ports.etcdClient), 30_000);

    const apiserver = await startProcess(
      'kube-apiserver',
      apiserverBin,
      apiserverArgs(etcdUrl, ports.apiserver, certDir, creds, audit),
      join(dir, 'kube-apiserver.log'),
      env,
    );
    started.push(apiserver);
    const servingCert = join(certDir, 'apiserver.crt');
    await waitUntil(apiserver, 'serving certificate written', async () => existsSync(servingCert), 60_000);
    // The generated serving certificate file holds the certificate and the CA that signed it.
    const caData = readFileSync(servingCert).toString('base64');
    const admin = kubeconfigFor(server, caData, 'relabel-admin', creds.adminToken);
    const health = new Health(admin);
    await waitUntil(apiserver, '/readyz answering ok', () => health.readyz({ timeout: 5000 }).catch(() => false), 120_000);
    await ensureRbac(admin, relabelUser);

    const adminKubeconfig = join(dir, 'kubeconfig-admin.yaml');
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(adminKubeconfig, admin.exportConfig(), { mode: 0o600 });
    writeFileSync(kubeconfig, uncompressedConfig(kubeconfigFor(server, caData, relabelUser, creds.relabelToken)), { mode: 0o600 });
    return {
      etcd,
      apiserver,
      server,
      adminKubeconfig,
      kubeconfig,
      serviceAccountKey: creds.saKey,
      caFile: servingCert,
      relabelUser,
      ...(audit ? { auditLog: audit.log } : {}),
    };
  } catch (err) {
    for (const p of started.reverse()) await stopProcess(p);
    throw err;
  }
}

/** Binds relabel's user to its ClusterRole; both may exist already (a restarted stack). */
async function ensureRbac(admin: KubeConfig, relabelUser: string): Promise<void> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const exists = (err: unknown) => {
    if (!(err instanceof ApiException && err.code === 409)) throw err;
  };
  // A restarted stack may hold the role of an older relabel: it gets today's rules.
  await rbac.createClusterRole({ body: RELABEL_CLUSTER_ROLE }).catch(async (err: unknown) => {
    exists(err);
    await rbac.replaceClusterRole({ name: 'relabel-worker', body: RELABEL_CLUSTER_ROLE });
  });
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: 'relabel-worker' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'relabel-worker' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: relabelUser }],
      },
    })
    .catch(exists);
}
