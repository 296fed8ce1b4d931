/**
 * Requests exactly as Airship's own Python clients send them, for the
 * contract tests: Shipyard's `ShipyardClient` (over `BaseClient.get_resp` /
 * `post_resp`) and Drydock's `DrydockClient` (over `DrydockSession`). Each
 * function names the client call it stands for; the method, path, query
 * (encoded as python-requests encodes a params dict: `str()` of each value,
 * `True`/`False` for booleans, a list as repeated keys, None left out),
 * headers and body are those the client code builds. Written from reading
 * the clients, not copied.
 */
import { randomUUID } from 'node:crypto';
import type { Answer, TestApi } from './api-support.ts';

/** A query value as python-requests takes it in a params dict. */
type PyValue = string | number | boolean | null | readonly string[];

/** Encodes a params dict as python-requests does (`urlencode(..., doseq=True)` of `str()` values; None dropped). */
export function pyQuery(params: Record<string, PyValue>): string {
  const pairs: string[] = [];
  const text = (v: string | number | boolean) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v));
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  for (const [key, value] of Object.entries(params)) {
    if (value === null) continue;
    for (const item of Array.isArray(value) ? value : [value as string | number | boolean]) pairs.push(`${enc(key)}=${enc(text(item))}`);
  }
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

/** One request as a client sends it, and what came back. */
export type Exchange = { method: string; path: string; headers: Record<string, string>; body?: string; answer: Answer };

async function send(api: TestApi, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Exchange> {
  const answer = await api.call(method, path, {
    token: null,
    headers,
    ...(body !== undefined ? { body, type: headers['content-type'] ?? 'application/json' } : {}),
  });
  return { method, path, headers, ...(body !== undefined ? { body } : {}), answer };
}

/**
 * Shipyard's client (`shipyard_client.api_client`): every request carries
 * `X-Context-Marker` and `X-Auth-Token`, and `verbosity` (the CLI's
 * default 1) is added to every query; a POST also sends `content-type`
 * (`application/x-yaml` unless JSON), and no body when its data is empty.
 */
export function shipyardClient(api: TestApi, token: string, verbosity = 1) {
  const marker = randomUUID();
  const get = (path: string, params: Record<string, PyValue> = {}) =>
    send(api, 'GET', `/api/v1.0/${path}${pyQuery({ ...params, verbosity })}`, { 'X-Context-Marker': marker, 'X-Auth-Token': token });
  const post = (path: string, params: Record<string, PyValue>, data?: string, contentType = 'application/x-yaml') =>
    send(
      api,
      'POST',
      `/api/v1.0/${path}${pyQuery({ ...params, verbosity })}`,
      { 'X-Context-Marker': marker, 'content-type': contentType, 'X-Auth-Token': token },
      data ? data : undefined,
    );
  return {
    /** `post_configdocs`: `buffermode` (None, the CLI's default, is left out), `empty-collection=True` only when set. */
    postConfigdocs: (collection: string, bufferMode: string | null, emptyCollection: boolean, data: string) =>
      post(`configdocs/${collection}`, { buffermode: bufferMode, ...(emptyCollection ? { 'empty-collection': true } : {}) }, data),
    /** `get_configdocs`: `version` (the CLI's default `buffer`), `cleartext-secrets=true` only when asked. */
    getConfigdocs: (collection: string, version = 'buffer', cleartextSecrets = false) =>
      get(`configdocs/${collection}`, { version, ...(cleartextSecrets ? { 'cleartext-secrets': 'true' } : {}) }),
    /** `get_configdocs_status`: `versions`, a list (the CLI's default committed and buffer) or None. */
    getConfigdocsStatus: (versions: readonly string[] | null = ['committed', 'buffer']) => get('configdocs', { versions }),
    /** `get_rendereddocs`: `version` (the CLI's default `buffer`). */
    getRendereddocs: (version = 'buffer', cleartextSecrets = false) =>
      get('renderedconfigdocs', { version, ...(cleartextSecrets ? { 'cleartext-secrets': 'true' } : {}) }),
    /** `commit_configdocs`: `force` and `dryrun` always sent (False by default), no body. */
    commitConfigdocs: (force = false, dryrun = false) => post('commitconfigdocs', { force, dryrun }),
  };
}

/**
 * Drydock's client (`drydock_client.client` over `DrydockSession`): the
 * session sends `X-Context-Marker`, `X-End-User` when it has one, and the
 * auth header its generator gives (`X-Auth-Token`); a POST sends its data
 * as JSON (`json=`), so `Content-Type: application/json`.
 */
export function drydockClient(api: TestApi, token: string, endUser?: string) {
  const headers = { 'X-Context-Marker': randomUUID(), ...(endUser ? { 'X-End-User': endUser } : {}), 'X-Auth-Token': token };
  return {
    /** `create_task(design_ref, task_action, node_filter)`: the three fields, node_filter null when not given. */
    createTask: (designRef: string, action: string, nodeFilter: unknown = null) =>
      send(
        api,
        'POST',
        '/api/v1.0/tasks',
        { ...headers, 'content-type': 'application/json' },
        JSON.stringify({ action, design_ref: designRef, node_filter: nodeFilter }),
      ),
    /** `get_task(task_id, builddata, subtaskerrors, layers)`: the query built by hand, only the options set. */
    getTask: (taskId: string, options: { builddata?: boolean; subtaskerrors?: boolean; layers?: number } = {}) => {
      const query = [
        ...(options.builddata ? ['builddata=true'] : []),
        ...(options.subtaskerrors ? ['subtaskerrors=true'] : []),
        ...(options.layers ? [`layers=${options.layers}`] : []),
      ];
      return send(api, 'GET', `/api/v1.0/tasks/${taskId}${query.length > 0 ? `?${query.join('&')}` : ''}`, headers);
    },
    /** `get_tasks()`: no query. */
    getTasks: () => send(api, 'GET', '/api/v1.0/tasks', headers),
  };
}

/** Shipyard's `gen_node_name_filter`: a union of one union filter naming the nodes. */
export const nodeNameFilter = (nodes: readonly string[]) => ({ filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: [...nodes] }] });

/** The design_ref Shipyard's DesignRefHelper gives a revision (Deckhand's rendered documents). */
export const deckhandDesignRef = (revision: number) =>
  `deckhand+http://deckhand-int.ucp.svc.cluster.local:9000/api/v1.0/revisions/${revision}/rendered-documents`;
