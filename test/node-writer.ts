/**
 * Another client writing Nodes as fast as the API server lets it, the way
 * kubelets and other controllers do: an unowned label and a status
 * condition on every node, sweeping the nodes evenly. It speaks HTTP/2 to
 * the API server itself, many requests in flight over one connection, so
 * that the API server, not this test process, limits its rate (a
 * @kubernetes/client-node request opens a TLS connection of its own).
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { KubeConfig } from '@kubernetes/client-node';
import { adminKubeconfigPath } from './helpers.ts';

/** The label the writer sets on every node (relabel neither owns nor reads it). */
export const WRITER_LABEL = 'ops.example.com/writer';
/** The type of the status condition the writer posts on every node. */
export const WRITER_CONDITION = 'ExampleHeartbeat';

export interface NodeWriter {
  /** Writes that landed on each node (a label and a status condition each count as one), in the order of the nodes given. */
  readonly perNode: readonly number[];
  /** When the last write that landed on each node was answered (ms since the epoch), in the order of the nodes given. */
  readonly writtenAt: readonly number[];
  /** Writes that landed in all. */
  readonly writes: number;
  /** The value of {@link WRITER_LABEL} the writer last set on each node. */
  readonly last: ReadonlyMap<string, string>;
  /** Stops once the writes in flight are answered; rejects if any write was refused or failed. */
  stop(): Promise<void>;
}

/** The admin kubeconfig's server, CA and bearer token. */
function adminCredentials(): { server: string; ca: Buffer; token: string } {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfigPath());
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  if (!cluster?.caData || !token) throw new Error('the admin kubeconfig lacks a CA or a token');
  return { server: cluster.server, ca: Buffer.from(cluster.caData, 'base64'), token };
}

/** Sends one PATCH on `session`; resolves once the API server answers 200, rejects with its answer otherwise. */
function patch(session: ClientHttp2Session, token: string, path: string, contentType: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'PATCH',
      ':path': path,
      authorization: `Bearer ${token}`,
      'content-type': contentType,
      accept: 'application/json',
    });
    let status = 0;
    let answer = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    // The body of a success is the whole Node, which the writer does not need; a refusal's says why.
    stream.on('data', (chunk: string) => {
      if (status !== 200) answer += chunk;
    });
    stream.on('end', () => (status === 200 ? resolve() : reject(new Error(`PATCH ${path} answered ${status}: ${answer.slice(0, 500)}`))));
    stream.on('error', reject);
    stream.end(body);
  });
}

/**
 * Starts writing `nodes` over `lanes` concurrent request lanes. Lane `l`
 * owns nodes l, l + lanes, …, and sweeps them in rounds: on each node, a
 * merge patch setting {@link WRITER_LABEL} to `r<round>`, then a strategic
 * merge patch of its {@link WRITER_CONDITION} condition. A node's writes are
 * thus never in flight together, and land in the order they were sent.
 */
export function startNodeWriter(nodes: readonly string[], lanes: number): NodeWriter {
  const { server, ca, token } = adminCredentials();
  const session = connect(server, { ca });
  const perNode = nodes.map(() => 0);
  const writtenAt = nodes.map(() => 0);
  const last = new Map<string, string>();
  let writes = 0;
  let stopping = false;
  let failure: unknown;
  session.on('error', (err) => (failure ??= err));
  const landed = (i: number): void => {
    perNode[i] = (perNode[i] ?? 0) + 1;
    writtenAt[i] = Date.now();
    writes++;
  };

  const lane = async (first: number): Promise<void> => {
    for (let round = 0; !stopping; round++) {
      for (let i = first; i < nodes.length && !stopping; i += lanes) {
        const name = encodeURIComponent(nodes[i] as string);
        const value = `r${round}`;
        await patch(
          session,
          token,
          `/api/v1/nodes/${name}`,
          'application/merge-patch+json',
          JSON.stringify({ metadata: { labels: { [WRITER_LABEL]: value } } }),
        );
        last.set(nodes[i] as string, value);
        landed(i);
        const condition = { type: WRITER_CONDITION, status: 'True', reason: value, lastHeartbeatTime: new Date().toISOString() };
        await patch(
          session,
          token,
          `/api/v1/nodes/${name}/status`,
          'application/strategic-merge-patch+json',
          JSON.stringify({ status: { conditions: [condition] } }),
        );
        landed(i);
      }
    }
  };
  // A failed lane stops them all: the test then fails on stop().
  const running = Array.from({ length: Math.min(lanes, nodes.length) }, (_, l) =>
    lane(l).catch((err: unknown) => {
      failure ??= err;
      stopping = true;
    }),
  );

  return {
    perNode,
    writtenAt,
    get writes() {
      return writes;
    },
    last,
    async stop() {
      stopping = true;
      await Promise.all(running);
      session.close();
      if (failure) throw failure;
    },
  };
}
