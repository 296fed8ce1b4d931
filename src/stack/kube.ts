/**
 * etcd and kube-apiserver on loopback, with token authentication and RBAC on,
 * and the kubeconfigs clients use: an admin one and a least-privilege one for
 * relabel's worker.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
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
  /** kubeconfig for relabel's worker: may only read and patch Nodes. */
  kubeconfig: string;
}

/** The ClusterRole relabel's worker is bound to: exactly what relabelling needs. */
export const RELABEL_CLUSTER_ROLE = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'relabel-worker' },
  rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] }],
};

const RELABEL_USER = 'relabel-worker';

function kubeconfigYaml(server: string, caData: string, user: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: relabel-local',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${caData}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    `- name: ${user}@relabel-local`,
    '  context:',
    '    cluster: relabel-local',
    `    user: ${user}`,
    `current-context: ${user}@relabel-local`,
    '',
  ].join('\n');
}

/** One authenticated request to the API server, trusting its serving CA. */
function apiRequest(
  server: string,
  ca: Buffer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      {
        method,
        ca,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        timeout: 5000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * Starts etcd and kube-apiserver under `dir` on the given loopback ports and
 * waits until the API server is ready and relabel's RBAC is in place.
 * Throws, with the server's log tail, when either fails to come up.
 */
export async function startKube(
  dir: string,
  ports: { etcdClient: number; etcdPeer: number; apiserver: number },
  env: NodeJS.ProcessEnv = process.env,
): Promise<KubeStack> {
  const etcdBin = toolPath('etcd', env);
  const apiserverBin = toolPath('kube-apiserver', env);
  const pki = join(dir, 'pki');
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
  writeFileSync(
    tokens,
    `${adminToken},relabel-admin,relabel-admin,"system:masters"\n${relabelToken},${RELABEL_USER},${RELABEL_USER}\n`,
    { mode: 0o600 },
  );

  const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
  const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
  const etcd = await startProcess(
    'etcd',
    etcdBin,
    [
      '--name=relabel',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=relabel=${peerUrl}`,
      '--log-level=warn',
      // A throwaway local store: durability across power loss buys nothing here.
      '--unsafe-no-fsync',
    ],
    join(dir, 'etcd.log'),
    env,
  );
  try {
    return await startApiserver(dir, pki, etcdUrl, ports.apiserver, apiserverBin, { saKey, saPub, tokens, adminToken, relabelToken }, etcd, env);
  } catch (err) {
    await stopProcess(etcd);
    throw err;
  }
}

async function startApiserver(
  dir: string,
  pki: string,
  etcdUrl: string,
  port: number,
  apiserverBin: string,
  auth: { saKey: string; saPub: string; tokens: string; adminToken: string; relabelToken: string },
  etcd: ManagedProcess,
  env: NodeJS.ProcessEnv,
): Promise<KubeStack> {
  const { saKey, saPub, tokens, adminToken, relabelToken } = auth;
  await waitUntil(etcd, 'client port open', () => portOpen(Number(new URL(etcdUrl).port)), 30_000);

  const certDir = join(pki, 'serving');
  const apiserver = await startProcess(
    'kube-apiserver',
    apiserverBin,
    [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      `--token-auth-file=${tokens}`,
      '--authorization-mode=RBAC',
      '--anonymous-auth=false',
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.96.0.0/24',
      '--enable-priority-and-fairness=false',
      '--v=1',
    ],
    join(dir, 'kube-apiserver.log'),
    env,
  );

  try {
    return await finishApiserver(dir, certDir, port, apiserver, etcd, adminToken, relabelToken);
  } catch (err) {
    await stopProcess(apiserver);
    throw err;
  }
}

async function finishApiserver(
  dir: string,
  certDir: string,
  port: number,
  apiserver: ManagedProcess,
  etcd: ManagedProcess,
  adminToken: string,
  relabelToken: string,
): Promise<KubeStack> {
  const server = `https://127.0.0.1:${port}`;
  const servingCert = join(certDir, 'apiserver.crt');
  await waitUntil(apiserver, 'serving certificate written', async () => existsSync(servingCert), 60_000);
  // The generated serving certificate file holds the certificate and the CA that signed it.
  const ca = readFileSync(servingCert);
  await waitUntil(
    apiserver,
    '/readyz answering ok',
    async () => (await apiRequest(server, ca, adminToken, 'GET', '/readyz')).status === 200,
    120_000,
  );

  await ensureRbac(server, ca, adminToken);

  const caData = ca.toString('base64');
  const adminKubeconfig = join(dir, 'kubeconfig-admin.yaml');
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  writeFileSync(adminKubeconfig, kubeconfigYaml(server, caData, 'relabel-admin', adminToken), { mode: 0o600 });
  writeFileSync(kubeconfig, kubeconfigYaml(server, caData, RELABEL_USER, relabelToken), { mode: 0o600 });
  return { etcd, apiserver, server, adminKubeconfig, kubeconfig };
}

async function ensureRbac(server: string, ca: Buffer, adminToken: string): Promise<void> {
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'relabel-worker' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'relabel-worker' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: RELABEL_USER }],
  };
  for (const [path, body] of [
    ['/apis/rbac.authorization.k8s.io/v1/clusterroles', RELABEL_CLUSTER_ROLE],
    ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding],
  ] as const) {
    const res = await apiRequest(server, ca, adminToken, 'POST', path, body);
    if (res.status !== 201 && res.status !== 409) {
      throw new Error(`creating ${path} failed with HTTP ${res.status}: ${res.text}`);
    }
  }
}
