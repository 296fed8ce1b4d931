/**
 * One page of Nodes read as plain JSON. The client's typed answer costs
 * more than the JSON itself (it walks every field of every Node to build
 * its model classes): at 50,000 nodes that was about two seconds of the
 * worker's CPU per LIST, plus the garbage. The request is the client's
 * own: same server, authentication and connection pool as every other
 * request of `kc`; only the answer is read differently. Items keep the
 * API's JSON shape (times stay RFC 3339 text), which is all `toNodeState`
 * reads.
 */
import { ApiException, createConfiguration, HttpMethod, ServerConfiguration, type KubeConfig, type V1NodeList } from '@kubernetes/client-node';

/** Lists one page: `limit` Nodes from `_continue` on; a non-2xx answer is the client's `ApiException`, as the typed call throws it. */
export type NodePageLister = (params: { limit: number; _continue?: string }) => Promise<V1NodeList>;

/** A {@link NodePageLister} over `kc`'s current cluster and user. */
export function nodePageLister(kc: KubeConfig): NodePageLister {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const config = createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: kc } });
  return async ({ limit, _continue }) => {
    const request = config.baseServer.makeRequestContext('/api/v1/nodes', HttpMethod.GET);
    request.setHeaderParam('Accept', 'application/json');
    request.setQueryParam('limit', String(limit));
    if (_continue !== undefined) request.setQueryParam('continue', _continue);
    await config.authMethods.default?.applySecurityAuthentication(request);
    const response = await config.httpApi.send(request).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      throw new ApiException(response.httpStatusCode, `HTTP ${response.httpStatusCode} listing nodes`, text, response.headers);
    }
    const list = JSON.parse(text) as { items?: V1NodeList['items'] | null; metadata?: { continue?: string } };
    return { items: list.items ?? [], metadata: list.metadata?.continue ? { _continue: list.metadata.continue } : {} };
  };
}
