/**
 * What the HTTP API is built over: the one facade the CLI uses too, the
 * Kubernetes node API for Promenade's synchronous node-labels, and the
 * listing of recent runs.
 */
import type { NodeApi } from '../activities/kube-nodes.ts';
import type { Relabel } from '../facade/index.ts';
import type { RunList } from './run-list.ts';

/** The API's dependencies. */
export interface ApiDeps {
  relabel: Relabel;
  nodes: NodeApi;
  /** Recent runs for `GET actions`; without it that route answers 501. */
  runList?: RunList;
}
