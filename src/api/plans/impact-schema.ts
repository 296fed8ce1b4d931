/**
 * The workload impact of a plan as the HTTP API answers it (snake_case, as
 * every answer): its schema, which the OpenAPI document describes and the
 * tests parse answers with, and the view built from the facade's plan.
 */
import { z } from 'zod';
import type { PlanImpact, Sampled } from '../../core/plan/workload-impact.ts';

const names = z.object({ count: z.int(), sample: z.array(z.string()).meta({ description: 'at most 20 node names; count has them all' }) }).strict();
const pods = z
  .object({
    count: z.int(),
    sample: z
      .array(
        z
          .object({
            pod: z.string(),
            node: z.string(),
            after_seconds: z.int().optional().meta({ description: 'evicted this long after the taint lands (0: at once)' }),
          })
          .strict(),
      )
      .meta({ description: 'at most 20 pods; count has them all' }),
  })
  .strict();

/** What a plan does to workloads, or why it was not weighed. */
export const WorkloadImpactView = z.union([
  z
    .object({
      daemon_sets: z
        .array(z.object({ namespace: z.string(), name: z.string(), gains: names, loses: names }).strict())
        .meta({ description: 'DaemonSets that would gain or lose pods, and on which nodes (most first, at most 20)' }),
      more_daemon_sets: z.int(),
      workloads: z
        .array(
          z
            .object({
              namespace: z.string(),
              workload: z.string().meta({ description: 'Kind/name of the pods’ controller, or Pod/name' }),
              evicted: pods.meta({ description: 'pods a planned NoExecute taint evicts' }),
              stranded: pods.meta({
                description: 'running pods whose node selector or required node affinity no longer matches (not evicted; unschedulable there if restarted)',
              }),
              disruption_budgets: z.array(z.string()),
            })
            .strict(),
        )
        .meta({ description: 'workloads with pods evicted or stranded (most first, at most 20)' }),
      more_workloads: z.int(),
      disruption_budgets: z.array(z.object({ namespace: z.string(), name: z.string(), evicted: z.int(), stranded: z.int() }).strict()),
      more_disruption_budgets: z.int(),
      totals: z
        .object({
          nodes_changed: z.int(),
          daemon_sets: z.int(),
          pods_gained: z.int(),
          pods_lost: z.int(),
          pods_evicted: z.int(),
          pods_stranded: z.int(),
          workloads: z.int(),
          disruption_budgets: z.int(),
        })
        .strict(),
    })
    .strict(),
  z.object({ unavailable: z.string().meta({ description: 'why the workloads could not be read' }) }).strict(),
]);
/** What a plan does to workloads, as answered. */
export type WorkloadImpactView = z.infer<typeof WorkloadImpactView>;

const podsView = (s: Sampled<{ pod: string; node: string; afterSeconds?: number }>) => ({
  count: s.count,
  sample: s.sample.map((p) => ({ pod: p.pod, node: p.node, ...(p.afterSeconds !== undefined ? { after_seconds: p.afterSeconds } : {}) })),
});

/** The API's view of a plan's impact (null when it was not weighed). */
export function impactView(impact: PlanImpact | null): WorkloadImpactView | null {
  if (impact === null) return null;
  if ('unavailable' in impact) return { unavailable: impact.unavailable };
  const t = impact.totals;
  return {
    daemon_sets: impact.daemonSets.map((d) => ({ namespace: d.namespace, name: d.name, gains: d.gains, loses: d.loses })),
    more_daemon_sets: impact.moreDaemonSets,
    workloads: impact.workloads.map((w) => ({
      namespace: w.namespace,
      workload: w.workload,
      evicted: podsView(w.evicted),
      stranded: podsView(w.stranded),
      disruption_budgets: w.disruptionBudgets,
    })),
    more_workloads: impact.moreWorkloads,
    disruption_budgets: impact.disruptionBudgets,
    more_disruption_budgets: impact.moreDisruptionBudgets,
    totals: {
      nodes_changed: t.nodesChanged,
      daemon_sets: t.daemonSets,
      pods_gained: t.podsGained,
      pods_lost: t.podsLost,
      pods_evicted: t.podsEvicted,
      pods_stranded: t.podsStranded,
      workloads: t.workloads,
      disruption_budgets: t.disruptionBudgets,
    },
  };
}
