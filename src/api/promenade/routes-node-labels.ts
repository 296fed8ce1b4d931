/**
 * Promenade's `PUT node-labels/{node}`: a synchronous, ownership-aware apply
 * of one node's labels (see `node-labels.ts`), under the label policy of the
 * latest committed design.
 */
import type { PlanPolicy } from '../../core/plan/label-plan.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import type { Documents } from '../../facade/documents/documents.ts';
import { RelabelError } from '../../facade/relabel-error.ts';
import type { ApiDeps } from '../http/deps.ts';
import { applyNodeLabels, DEFAULT_NODE_LABELS_POLICY } from './node-labels.ts';
import { defineRoute, type RouteDef } from '../http/route.ts';
import { NodeLabelsBody, NodePath } from '../http/schemas.ts';
import { NodeLabelsStatus, StatusBody } from '../http/response-schemas.ts';

/**
 * The planner policy of the latest committed revision (alias reconciliation,
 * protected keys), or {@link DEFAULT_NODE_LABELS_POLICY} before any commit.
 * Revisions are immutable, so the last one read is kept.
 */
function latestPolicy(documents: Documents): () => Promise<PlanPolicy> {
  let cached: { revision: number; policy: PlanPolicy } | undefined;
  return async () => {
    const latest = await documents.latest();
    if (!latest) return DEFAULT_NODE_LABELS_POLICY;
    if (cached?.revision === latest.id) return cached.policy;
    const { validation } = await documents.rendered(latest.id);
    if (!validation.ok) {
      throw new RelabelError(FailureType.DocumentValidationFailed, `the label policy cannot be read: revision ${latest.id} is invalid`, validation.errors);
    }
    const { reconcileOsArchAliases, protectedKeys } = validation.design.policy;
    cached = { revision: latest.id, policy: { reconcileOsArchAliases, protectedKeys } };
    return cached.policy;
  };
}

const error = { description: 'Airship Status error', schema: StatusBody };

/** The node-labels route. */
export function nodeLabelsRoutes({ relabel, nodes }: ApiDeps): RouteDef[] {
  const policy = latestPolicy(relabel.documents);
  return [
    defineRoute({
      method: 'PUT',
      path: '/api/v1.0/node-labels/:node',
      operationId: 'putNodeLabels',
      summary: "Brings a node's relabel-managed labels to exactly the body's set, synchronously",
      description:
        "Labels in the body are set; labels relabel set earlier (recorded in the node's ownership annotation) and absent from the body are removed; " +
        'every other label is left alone. One patch, guarded by tests of the keys it plans from (none when nothing changes). ' +
        'Keys the kubelet owns or the label policy protects, and bad label syntax, are refused (400).',
      tag: 'node-labels',
      access: 'write',
      params: NodePath,
      body: { media: 'json', schema: NodeLabelsBody, required: true, description: 'label key → value' },
      responses: {
        200: { description: 'applied', schema: NodeLabelsStatus },
        400: error,
        404: error,
        409: error,
        503: { description: 'Kubernetes is unreachable', schema: StatusBody },
      },
      async handle({ params, body }) {
        const outcome = await applyNodeLabels(nodes, params.node, body, await policy());
        const reply: NodeLabelsStatus = {
          kind: 'Status',
          apiVersion: 'v1.0',
          status: 'Success',
          message: outcome.written ? `labels of node ${params.node} updated` : `labels of node ${params.node} already as requested: nothing written`,
          reason: 'Update node labels',
          code: 200,
          retry: false,
          details: { set: outcome.set, removed: outcome.removed, unchanged: outcome.unchanged },
        };
        return { code: 200, body: reply };
      },
    }),
  ];
}
