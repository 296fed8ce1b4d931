/**
 * Counts read from the kube-apiserver's own /metrics: writes are counted by
 * the server, not assumed by the client. Used by the tests and benchmarks of
 * the local stack (an admin kubeconfig reads /metrics).
 */
import { request as httpsRequest } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { metricValue } from './prometheus.ts';

/**
 * The body of the API server's answer to a GET of `path` (`/metrics`,
 * `/api/v1/nodes?limit=50`), as the server sent it, read with the admin
 * kubeconfig's token; throws on any status but 200.
 */
export async function apiserverGet(adminKubeconfig: string, path: string): Promise<string> {
  return (await apiserverGetBytes(adminKubeconfig, path)).toString('utf8');
}

/** GETs `path` of the API server as {@link apiserverGet} does, its answer as bytes (a pprof profile, say). */
export async function apiserverGetBytes(adminKubeconfig: string, path: string): Promise<Buffer> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  if (!cluster || !token) throw new Error(`${adminKubeconfig} lacks a cluster or token`);
  return new Promise<Buffer>((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, cluster.server),
      { ca: Buffer.from(cluster.caData ?? '', 'base64'), headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${path} answered ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * Number of requests on Nodes (no subresource) with `verb` the API server
 * has answered so far, from `apiserver_request_total`; with `code`, only
 * those answered with that HTTP status (200: the writes that landed).
 */
export async function nodeRequestCount(adminKubeconfig: string, verb: string, options: { code?: number } = {}): Promise<number> {
  return metricValue(await apiserverGet(adminKubeconfig, '/metrics'), 'apiserver_request_total', {
    resource: 'nodes',
    verb,
    subresource: '',
    ...(options.code !== undefined ? { code: String(options.code) } : {}),
  });
}
