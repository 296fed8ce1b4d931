/**
 * What the HTTP API is built over: the one facade the CLI uses too, the
 * Kubernetes node API for Promenade's synchronous node-labels.
 */
import type { NodeApi } from '../../kube/nodes.ts';
import type { Relabel } from '../../facade/index.ts';

/** The API's dependencies. */
export interface ApiDeps {
  relabel: Relabel;
  nodes: NodeApi;
  /** How long `POST plans` waits for its dry run before answering 202 (default 30 s). */
  planWaitMs?: number;
}
