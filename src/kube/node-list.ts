/**
 * One page of Nodes, asked for in Kubernetes' protobuf encoding and read
 * without the client's model classes. The client's typed answer costs more
 * than the data itself (it walks every field of every Node): at 50,000
 * nodes that was about two seconds of the worker's CPU per LIST, plus the
 * garbage; and the API server encodes protobuf several times faster than
 * JSON. A server that answers JSON instead is read as plain JSON. The
 * request is the client's own: same server, authentication and connection
 * pool as every other request of `kc`; only the answer is read differently.
 * Items keep the fields `toNodeState` reads, in the API's JSON shape or
 * the client's (a protobuf taint's time is a Date, as the client's).
 * Pages come uncompressed when `kc`'s cluster says `disable-compression`,
 * and in the cluster (`compressionDisabled`). A protobuf page opens with
 * its list metadata: its continue token is told as soon as those bytes
 * arrive, so that the next page can be asked for while this one is still
 * read (the server encodes a page as it sends it).
 */
import { ApiException, createConfiguration, HttpMethod, ServerConfiguration, type KubeConfig, type V1NodeList } from '@kubernetes/client-node';
import { compressionDisabled } from './kubeconfig.ts';
import { decodeNodeList, decodeStatus, isProtobuf, listMetaPrefix, PROTOBUF_OR_JSON } from './node-protobuf.ts';

/** Bytes of an answer within which the list metadata is looked for: past them, the answer is read whole first. */
const META_WITHIN_BYTES = 64 * 1024;

/**
 * The whole body (the client's own `binary()` calls a method its fetch does
 * not have). With `onMeta`, each chunk that arrives while the metadata is
 * unknown is offered to `readMeta` with every byte so far, until it answers
 * (null: it cannot tell) or the first {@link META_WITHIN_BYTES} have come.
 */
async function bytesOf<M>(
  stream: ReadableStream<Uint8Array> | null,
  readMeta?: (prefix: Uint8Array) => M | null | undefined,
  onMeta?: (meta: M) => void,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let looking = readMeta !== undefined && onMeta !== undefined;
  if (stream)
    for await (const chunk of stream) {
      chunks.push(chunk);
      size += chunk.length;
      if (!looking) continue;
      const meta = readMeta?.(chunks.length === 1 ? chunk : Buffer.concat(chunks, size));
      if (meta !== undefined || size >= META_WITHIN_BYTES) looking = false;
      if (meta !== undefined && meta !== null) onMeta?.(meta);
    }
  return Buffer.concat(chunks, size);
}

/**
 * Lists one page: `limit` Nodes from `_continue` on; a non-2xx answer is the
 * client's `ApiException`, as the typed call throws it. `onContinue`, when
 * given, may be told the page's continue token (empty on the last page)
 * once, before the page is read whole: a protobuf answer opens with it.
 */
export type NodePageLister = (params: { limit: number; _continue?: string; onContinue?: (token: string) => void }) => Promise<V1NodeList>;

/** A {@link NodePageLister} over `kc`'s current cluster and user. */
export function nodePageLister(kc: KubeConfig): NodePageLister {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const config = createConfiguration({ baseServer: new ServerConfiguration(cluster.server, {}), authMethods: { default: kc } });
  const identity = compressionDisabled(kc);
  return async ({ limit, _continue, onContinue }) => {
    const request = config.baseServer.makeRequestContext('/api/v1/nodes', HttpMethod.GET);
    request.setHeaderParam('Accept', PROTOBUF_OR_JSON);
    // Uncompressed when the kubeconfig says so (see compressionDisabled); else the fetch asks for gzip.
    if (identity) request.setHeaderParam('Accept-Encoding', 'identity');
    request.setQueryParam('limit', String(limit));
    if (_continue !== undefined) request.setQueryParam('continue', _continue);
    await config.authMethods.default?.applySecurityAuthentication(request);
    const response = await config.httpApi.send(request).toPromise();
    const protobuf = isProtobuf(response.headers['content-type']);
    const early = protobuf && response.httpStatusCode >= 200 && response.httpStatusCode <= 299 ? onContinue : undefined;
    const bytes = await bytesOf(response.body.stream(), listMetaPrefix, early && ((meta) => early(meta.continue)));
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      // The error's body as the JSON API writes it, which is what callers read.
      let body = bytes.toString('utf8');
      if (protobuf) {
        try {
          body = JSON.stringify(decodeStatus(bytes));
        } catch {
          body = `(an undecodable protobuf answer of ${bytes.length} bytes)`;
        }
      }
      throw new ApiException(response.httpStatusCode, `HTTP ${response.httpStatusCode} listing nodes`, body, response.headers);
    }
    if (protobuf) {
      const page = decodeNodeList(bytes);
      return { items: page.items, metadata: listMeta(page.continue, page.resourceVersion, page.remainingItemCount) };
    }
    const list = JSON.parse(bytes.toString('utf8')) as {
      items?: V1NodeList['items'] | null;
      metadata?: { continue?: string; resourceVersion?: string; remainingItemCount?: number };
    };
    const meta = list.metadata;
    return { items: list.items ?? [], metadata: listMeta(meta?.continue, meta?.resourceVersion, meta?.remainingItemCount) };
  };
}

/** A page's list metadata as the client's types hold it, with only the fields the server sent. */
function listMeta(cont: string | undefined, resourceVersion: string | undefined, remainingItemCount: number | undefined): V1NodeList['metadata'] {
  return {
    ...(cont ? { _continue: cont } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    ...(typeof remainingItemCount === 'number' ? { remainingItemCount } : {}),
  };
}
