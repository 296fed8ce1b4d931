/**
 * relabel's own policy document, `relabel/LabelPolicy/v1`: which labels are
 * generated from the design and under which domain, which keys are
 * protected, and run options. At most one per site; without one,
 * {@link DEFAULT_SITE_POLICY} applies.
 */
import { quote } from '../plan/text.ts';
import { z } from 'zod';
import { DEFAULT_LABEL_DOMAIN, UNINITIALIZED_TAINT_KEY } from '../plan/constants.ts';
import { joinTaintKeyErrors } from '../plan/taints.ts';
import { DNS1123_SUBDOMAIN_MAX_BYTES, dns1123SubdomainErrors, labelKeyErrors, utf8Length } from '../plan/label-syntax.ts';
import type { PathSegment } from '../plan/site-error.ts';
import { documentEnvelope, SchemaName } from './schema.ts';
import { DriftAction, OrphanAction } from '../plan/drift.ts';
import { ApprovalGate, MAX_HEALTH_TIMEOUT_SECONDS, parseWaveGrouping, parseWaveSize, type Rollout } from '../plan/waves.ts';

/**
 * `rollout` of a label policy: how the site's runs roll out unless a run
 * says otherwise. `waves` is `rack`, `label:<key>` or `none`; `wave_size` a
 * count or a percentage (`10%`).
 */
export const RolloutPolicy = z
  .object({
    waves: z
      .string()
      .refine((v) => parseWaveGrouping(v).ok, { message: 'expected rack, label:<key> or none' })
      .optional(),
    wave_size: z
      .union([z.int(), z.string()])
      .refine((v) => parseWaveSize(v).ok, { message: 'expected a positive count or a percentage from 1% to 100%' })
      .optional(),
    canary: z.int().min(1).optional(),
    approval: z.enum([ApprovalGate.none, ApprovalGate.first, ApprovalGate.each]).optional(),
    health_timeout_seconds: z.int().min(0).max(MAX_HEALTH_TIMEOUT_SECONDS).optional(),
    max_failed_nodes: z.int().min(0).optional(),
  })
  .strict();
/** `rollout` of a label policy document. */
export type RolloutPolicy = z.infer<typeof RolloutPolicy>;

/** A validated policy `rollout` as the runs' {@link Rollout}. */
export function rolloutFrom(data: RolloutPolicy): Rollout {
  const by = data.waves === undefined ? undefined : parseWaveGrouping(data.waves);
  const size = data.wave_size === undefined ? undefined : parseWaveSize(data.wave_size);
  return {
    ...(by?.ok ? { by: by.value } : {}),
    ...(size?.ok ? { size: size.value } : {}),
    ...(data.canary !== undefined ? { canary: data.canary } : {}),
    ...(data.approval !== undefined ? { approval: data.approval } : {}),
    ...(data.health_timeout_seconds !== undefined ? { healthTimeoutSeconds: data.health_timeout_seconds } : {}),
    ...(data.max_failed_nodes !== undefined ? { maxFailedNodes: data.max_failed_nodes } : {}),
  };
}

/**
 * `max_removal_fraction` when a policy does not give one: a run may remove
 * at most half of the labels relabel owns on its targets unless it is
 * explicitly allowed to remove more.
 */
export const DEFAULT_MAX_REMOVAL_FRACTION = 0.5;

/** Largest `default_concurrency` accepted (nodes relabelled at once). */
export const MAX_CONCURRENCY = 1000;

/**
 * `data` of a `relabel/LabelPolicy/v1`. Every field but `label_domain`
 * (default {@link DEFAULT_LABEL_DOMAIN}), `drift` (default `report`) and
 * `update_on_plugin_change` (default off) is required: the policy decides what
 * gets written to every node, so nothing is defaulted silently.
 */
export const LabelPolicyData = z
  .object({
    label_domain: z.string().optional(),
    generated_labels: z
      .object({
        rack: z.boolean(),
        host_profile: z.boolean(),
        tags: z.boolean(),
        rack_labels: z.boolean(),
        site: z.boolean(),
      })
      .strict(),
    protected_keys: z.array(z.string()),
    reconcile_os_arch_aliases: z.boolean(),
    lift_uninitialized_taint: z.boolean(),
    /**
     * Optional: the key of the join taint (effect NoSchedule) that holds a
     * new node until relabel has labelled it, and that `lift_uninitialized_taint`
     * lifts (default {@link UNINITIALIZED_TAINT_KEY}); an autoscaler's
     * startup-taint prefix lets it know the taint goes away.
     */
    join_taint_key: z.string().optional(),
    default_concurrency: z.int().min(1).max(MAX_CONCURRENCY),
    /**
     * Optional. What drift detection does with nodes someone changed behind
     * relabel's back: `report` them (the default), or `heal` them with a run
     * restoring each to the revision it carries; and with nodes that carry
     * this site's records but that the documents no longer hold: `keep`
     * what relabel wrote (the default: report only) or `release` it.
     */
    drift: z
      .object({ action: z.enum([DriftAction.report, DriftAction.heal]), orphans: z.enum([OrphanAction.keep, OrphanAction.release]).optional() })
      .strict()
      .optional(),
    update_on_plugin_change: z.boolean().optional(),
    /** Optional: the mass-removal brake's limit (0–1, default {@link DEFAULT_MAX_REMOVAL_FRACTION}). */
    max_removal_fraction: z.number().min(0).max(1).optional(),
    /** Optional: how the site's runs roll out (waves and their gates) unless a run says otherwise. */
    rollout: RolloutPolicy.optional(),
    /** Optional: most nodes one node set may match before a run is refused like a mass removal (default: no bound). */
    max_node_set_members: z.int().min(0).optional(),
  })
  .strict();
/** `data` of a label policy document. */
export type LabelPolicyData = z.infer<typeof LabelPolicyData>;

/** A `relabel/LabelPolicy/v1` document. */
export const LabelPolicy = documentEnvelope(SchemaName.LabelPolicy, LabelPolicyData);
/** A label policy document. */
export type LabelPolicy = z.infer<typeof LabelPolicy>;

/** The label policy in effect for a site, in the form the rest of the code uses. */
export type SitePolicy = {
  labelDomain: string;
  generatedLabels: {
    rack: boolean;
    hostProfile: boolean;
    tags: boolean;
    rackLabels: boolean;
    site: boolean;
  };
  protectedKeys: string[];
  reconcileOsArchAliases: boolean;
  liftUninitializedTaint: boolean;
  /** The join taint's key when the document names one (`join_taint_key`); absent: {@link UNINITIALIZED_TAINT_KEY}. */
  joinTaintKey?: string;
  defaultConcurrency: number;
  /** Drift detection's policy (`drift` in the document; `report` by default; `orphans` present only as `release`). */
  drift: { action: DriftAction; orphans?: typeof OrphanAction.release };
  /**
   * When a poll of the site's label plugins stores a set that changes some
   * nodes' plugin labels, start an update run for those nodes. Present only
   * when on (default off).
   */
  updateOnPluginChange?: true;
  /** Largest fraction of the owned labels on its targets a run may remove without being allowed to (0–1). */
  maxRemovalFraction: number;
  /** How the site's runs roll out unless a run says otherwise; absent: at once. */
  rollout?: Rollout;
  /** Most nodes one node set may match before a run (not a dry run) is refused, unless allowed; absent: no bound. */
  maxNodeSetMembers?: number;
};

/** The policy of a site without a `relabel/LabelPolicy/v1` document: every generator on. */
export const DEFAULT_SITE_POLICY: SitePolicy = {
  labelDomain: DEFAULT_LABEL_DOMAIN,
  generatedLabels: { rack: true, hostProfile: true, tags: true, rackLabels: true, site: true },
  protectedKeys: [],
  reconcileOsArchAliases: true,
  liftUninitializedTaint: false,
  defaultConcurrency: 10,
  drift: { action: DriftAction.report },
  maxRemovalFraction: DEFAULT_MAX_REMOVAL_FRACTION,
};

/** Converts a validated policy document's `data` to a {@link SitePolicy}. */
export function sitePolicyFrom(data: LabelPolicyData): SitePolicy {
  return {
    labelDomain: data.label_domain ?? DEFAULT_LABEL_DOMAIN,
    generatedLabels: {
      rack: data.generated_labels.rack,
      hostProfile: data.generated_labels.host_profile,
      tags: data.generated_labels.tags,
      rackLabels: data.generated_labels.rack_labels,
      site: data.generated_labels.site,
    },
    protectedKeys: [...new Set(data.protected_keys)].sort(),
    reconcileOsArchAliases: data.reconcile_os_arch_aliases,
    liftUninitializedTaint: data.lift_uninitialized_taint,
    ...(data.join_taint_key !== undefined && data.join_taint_key !== UNINITIALIZED_TAINT_KEY ? { joinTaintKey: data.join_taint_key } : {}),
    defaultConcurrency: data.default_concurrency,
    drift: { action: data.drift?.action ?? DriftAction.report, ...(data.drift?.orphans === OrphanAction.release ? { orphans: OrphanAction.release } : {}) },
    ...(data.update_on_plugin_change === true ? { updateOnPluginChange: true as const } : {}),
    maxRemovalFraction: data.max_removal_fraction ?? DEFAULT_MAX_REMOVAL_FRACTION,
    ...(data.rollout ? { rollout: rolloutFrom(data.rollout) } : {}),
    ...(data.max_node_set_members !== undefined ? { maxNodeSetMembers: data.max_node_set_members } : {}),
  };
}

/**
 * Keys of the generated labels under `domain`:
 * `<domain>/rack`, `<domain>/host-profile`, `<domain>/site`, and one
 * `tag.<domain>/<tag>` per tag.
 */
export function generatedLabelKeys(domain: string) {
  return {
    rack: `${domain}/rack`,
    hostProfile: `${domain}/host-profile`,
    site: `${domain}/site`,
    tagPrefix: `tag.${domain}/`,
  } as const;
}

/** A problem inside a policy's `data`, at a path relative to the document. */
export type PolicyProblem = { path: PathSegment[]; message: string; target: 'key' | 'value' };

/**
 * Checks what zod cannot: the label domain is a DNS-1123 subdomain short
 * enough for `tag.<domain>`; each protected entry is a label key, or a
 * prefix `<subdomain>/`; the join taint's key is a taint key Kubernetes
 * does not own; no protected entry covers a generated label that is
 * switched on (relabel could then never write it).
 */
export function policyProblems(data: LabelPolicyData): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  const domain = data.label_domain ?? DEFAULT_LABEL_DOMAIN;
  const domainErrors = dns1123SubdomainErrors(domain);
  if (domainErrors.length === 0 && utf8Length(`tag.${domain}`) > DNS1123_SUBDOMAIN_MAX_BYTES) {
    domainErrors.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_BYTES - 4} bytes, so that "tag.<domain>" is a valid label prefix`);
  }
  for (const message of domainErrors) {
    problems.push({ path: ['data', 'label_domain'], message: `Invalid value: ${quote(domain)}: ${message}`, target: 'value' });
  }
  if (data.join_taint_key !== undefined) {
    for (const message of joinTaintKeyErrors(data.join_taint_key)) problems.push({ path: ['data', 'join_taint_key'], message, target: 'value' });
  }
  const keys = generatedLabelKeys(domain);
  const on = data.generated_labels;
  data.protected_keys.forEach((entry, i) => {
    const path = ['data', 'protected_keys', i];
    const errors = entry.endsWith('/') ? dns1123SubdomainErrors(entry.slice(0, -1)).map((m) => `prefix part ${m}`) : labelKeyErrors(entry);
    for (const message of errors) {
      problems.push({ path, message: `Invalid value: ${quote(entry)}: ${message}`, target: 'value' });
    }
    const covers = (key: string) => (entry.endsWith('/') ? key.startsWith(entry) : key === entry);
    const clashes = [
      on.rack && covers(keys.rack) ? keys.rack : undefined,
      on.host_profile && covers(keys.hostProfile) ? keys.hostProfile : undefined,
      on.site && covers(keys.site) ? keys.site : undefined,
      on.tags && entry.startsWith(keys.tagPrefix) ? `${keys.tagPrefix}*` : undefined,
    ].filter((key) => key !== undefined);
    for (const key of clashes) {
      problems.push({
        path,
        message: `protected entry ${quote(entry)} covers generated label "${key}", which relabel could then never write; turn that generator off or unprotect it`,
        target: 'value',
      });
    }
  });
  return problems;
}
