/**
 * The core's entry point: validate a whole site and resolve its design, or
 * report every error found, all-or-nothing.
 */
import {
  danglingProfile,
  duplicateNameErrors,
  indexSite,
  profileGraphErrors,
  resolveEntries,
  resolveHosts,
  type ResolvedHost,
  type SiteIndex,
} from './design-resolve.ts';
import type { LabelSelector } from '../plan/label-selector.ts';
import { machineOnlyLabelWarnings, nodeSetEntries, ownedLabelKeys, selectorOwnershipErrors, type NodeSetEntry } from './node-set-resolve.ts';
import type { CheckedDocument } from './document-check.ts';
import { valueAt } from './document-view.ts';
import { pluginSpecFrom, type PluginSpec } from './label-plugin.ts';
import { SchemaName } from './schema.ts';
import { conflictErrors, desiredLabels } from './desired-labels.ts';
import type { LabelConflict } from './desired-labels.ts';
import type { SitePolicy } from './label-policy.ts';
import { nodeSetSource, type LabelSource } from './label-provenance.ts';
import { nodeMetadataConflicts } from './node-metadata-checks.ts';
import { policyDependentErrors, siteRegionOf, sitePolicyOf } from './site-checks.ts';
import type { SiteError } from '../plan/site-error.ts';
import { sortErrors } from '../plan/site-error.ts';
import type { Taint } from '../plan/taints.ts';
import { DEFAULT_SITE } from '../plan/constants.ts';
import { checkEachDocument, duplicateErrors } from './validate-documents.ts';
import { documentRef } from './yaml-source.ts';
import type { LoadedDocument, SiteSource } from './yaml-source.ts';

/** A node of the resolved design. */
export type DesignNode = {
  /** Kubernetes Node name (`metadata.name` of its `drydock/BaremetalNode/v1`). */
  name: string;
  /** The node's own `host_profile`, or null. */
  hostProfile: string | null;
  /** Host profiles it inherits from, nearest first. */
  profileChain: string[];
  /** Effective rack after inheritance, or null. */
  rack: string | null;
  /** Effective tags after inheritance, sorted. */
  tags: string[];
  /** Effective owner_data after inheritance, keys sorted. */
  ownerData: Record<string, string>;
  /** Desired labels: owner_data and generated labels, keys sorted. */
  labels: Record<string, string>;
  /** Where each desired label came from: exactly the keys of `labels` (see `label-provenance.ts`). */
  labelSources: Record<string, LabelSource>;
  /** Desired annotations after inheritance, keys sorted. */
  annotations: Record<string, string>;
  /** Desired taints after inheritance, sorted by key and effect. */
  taints: Taint[];
};

/**
 * A node set of the resolved design (`relabel/NodeSet/v1`): resolved once as
 * a node named after the set would be; each member node is managed with
 * these labels, annotations and taints.
 */
export type DesignNodeSet = DesignNode & {
  /** Which nodes are members: those it matches that no BaremetalNode names. */
  selector: LabelSelector;
};

/** A rack of the resolved design. */
export type DesignRack = { name: string; labels: Record<string, string> };

/**
 * A validated site, resolved. Plain JSON (no Maps, no undefined), keys
 * sorted, so it can cross a Temporal boundary and compares structurally.
 * It is a `PlannedDesign` (plan/node-wants.ts): what the plan side reads.
 */
export type Design = {
  policy: SitePolicy;
  /** The `drydock/Region/v1` name, or {@link DEFAULT_SITE} without one. */
  site: string;
  nodes: Record<string, DesignNode>;
  racks: Record<string, DesignRack>;
  /** Names of all host profiles, sorted. */
  hostProfiles: string[];
  /** The site's label plugins (`relabel/LabelPlugin/v1`), sorted by name; absent when it has none. */
  plugins?: PluginSpec[];
  /** The site's node sets (`relabel/NodeSet/v1`), by name, sorted; absent when it has none. */
  nodeSets?: Record<string, DesignNodeSet>;
};

/** One document of a valid site, as read (documents of every schema, in input order). */
export type SiteDocument = {
  source: string;
  /** 1-based position in its source. */
  index: number;
  schema: string;
  name: string;
  data: unknown;
};

/**
 * Either a valid site (with its warnings, when any: a node-set selector
 * reading a label Cluster API keeps on Machines only), or every error found
 * in it; never both.
 */
export type SiteValidation = { ok: true; design: Design; documents: SiteDocument[]; warnings?: SiteError[] } | { ok: false; errors: SiteError[] };

function sortedRecord<T>(entries: Iterable<[string, T]>): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function siteDocument(doc: LoadedDocument): SiteDocument {
  const ref = documentRef(doc.index, doc.value);
  const data = (doc.value as Record<string, unknown>)['data'];
  return { source: doc.source, index: doc.index, schema: ref.schema ?? '', name: ref.name ?? '', data };
}

/**
 * The references of the nodes and host profiles that failed their own
 * checks: they take no part in inheritance, but a host profile they name
 * that no document defines is still reported, as for a valid one.
 */
function failedHostReferenceErrors(checked: readonly CheckedDocument[], index: SiteIndex): SiteError[] {
  const errors: SiteError[] = [];
  for (const c of checked) {
    if (c.kind !== 'invalid' || (c.schemaKind !== 'node' && c.schemaKind !== 'profile' && c.schemaKind !== 'nodeSet')) continue;
    const parent = valueAt(c.doc.value, ['data', 'host_profile']);
    if (typeof parent === 'string' && parent !== '' && !index.profiles.has(parent) && !index.unresolvable.profiles.has(parent)) {
      errors.push(danglingProfile(c, parent));
    }
  }
  return errors;
}

/** The design's entry of a resolved node (or node set) whose desired labels are `desired`. */
function designNodeOf(host: ResolvedHost, desired: { labels: Record<string, string>; sources: Record<string, LabelSource> }): DesignNode {
  return {
    name: host.name,
    hostProfile: host.hostProfile,
    profileChain: host.profileChain,
    rack: host.rack?.name ?? null,
    tags: host.tags,
    ownerData: Object.fromEntries([...host.ownerData].map(([key, { value }]) => [key, value])),
    labels: desired.labels,
    labelSources: desired.sources,
    annotations: Object.fromEntries([...host.annotations].map(([key, { value }]) => [key, value])),
    taints: [...host.taints.values()].map(({ taint }) => taint),
  };
}

/**
 * Resolves the site's node sets as nodes (their own owner_data credited to
 * the set), adding their conflicts and errors (duplicate names, inheritance,
 * selectors reading keys relabel owns) to `into`. Needs the policy and site;
 * without them, only the names are checked.
 */
function nodeSetsOf(
  checked: readonly CheckedDocument[],
  index: SiteIndex,
  into: {
    policy: SitePolicy | undefined;
    site: { name: string; doc: LoadedDocument } | null | undefined;
    nodes: ReadonlyMap<string, DesignNode>;
    plugins: readonly PluginSpec[];
    conflicts: LabelConflict[];
    errors: SiteError[];
    /** Where the selectors' ownership errors go too, when given (staging reads them alone). */
    selectorErrors?: SiteError[];
  },
): Map<string, DesignNodeSet> {
  const { entries, errors } = nodeSetEntries(checked);
  into.errors.push(...errors);
  const resolved = resolveEntries(entries, index);
  into.errors.push(...resolved.errors);
  const sets = new Map<string, DesignNodeSet>();
  const { policy, site } = into;
  if (policy === undefined || site === undefined) return sets;
  for (const host of resolved.hosts.values()) {
    const entry = entries.get(host.name) as NodeSetEntry;
    const desired = desiredLabels(host, { policy, racks: index.racks, site }, nodeSetSource(host.name));
    into.conflicts.push(...desired.conflicts, ...nodeMetadataConflicts(host, desired.labels, { doc: entry.doc, path: ['metadata', 'name'] }));
    sets.set(host.name, { ...designNodeOf(host, desired), selector: entry.selector });
  }
  const keys = ownedLabelKeys({ nodes: into.nodes.values(), sets: sets.values(), profiles: index.profiles.values(), racks: index.racks.values() });
  const selectorErrors = selectorOwnershipErrors(entries.values(), { keys, policy: { labelDomain: policy.labelDomain }, plugins: into.plugins });
  into.errors.push(...selectorErrors);
  into.selectorErrors?.push(...selectorErrors);
  return sets;
}

/**
 * Validates a site given as YAML sources and resolves its design.
 *
 * Pure and deterministic: the design does not depend on the order of files
 * or documents, and errors are sorted by file, line and column. Every error
 * is collected, across all files (YAML syntax errors included) and all
 * checks, every field of every document checked even when another fails
 * its schema; a check is skipped only where an earlier error already
 * explains it (a node inheriting from a broken profile is not reported
 * again; a document that failed its own checks takes no part in
 * inheritance, so conflicts and node totals are not computed for it).
 */
export function validateSite(sources: readonly SiteSource[]): SiteValidation {
  return resolveSite(sources);
}

/**
 * The errors of one rule alone in the site `sources` make: node-set
 * selectors reading a key relabel owns (see `selectorOwnershipErrors`),
 * sorted. What staging a bucket checks of the site it would make, since
 * the rule keeps membership stable whatever else the site still lacks.
 */
export function selectorOwnershipErrorsOf(sources: readonly SiteSource[]): SiteError[] {
  const selectorErrors: SiteError[] = [];
  resolveSite(sources, selectorErrors);
  return sortErrors(selectorErrors);
}

/** {@link validateSite}, adding the selectors' ownership errors to `selectorErrors` too when given. */
function resolveSite(sources: readonly SiteSource[], selectorErrors?: SiteError[]): SiteValidation {
  const { checked, broken, errors, unrendered } = checkEachDocument(sources, { render: true });
  // Nothing can be said of a site's design before it renders.
  if (unrendered === true) return { ok: false, errors: sortErrors(errors) };
  const failed = [...checked.filter((c) => c.kind === 'invalid').map((c) => c.doc), ...broken].map((doc) => documentRef(doc.index, doc.value));
  const { index, errors: indexErrors } = indexSite(checked, failed);
  const { policy, errors: policyErrors } = sitePolicyOf({ checked, broken });
  const { site, errors: siteErrors } = siteRegionOf({ checked, broken });
  errors.push(...indexErrors, ...policyErrors, ...siteErrors, ...profileGraphErrors(index), ...failedHostReferenceErrors(checked, index));
  // Names shared with a document that failed its own checks; the policy and region are singletons, reported as such.
  errors.push(...duplicateErrors(checked, { kinds: ['node', 'profile', 'rack', 'plugin', 'nodeSet'], withFailed: true }));
  if (policy !== undefined) errors.push(...policyDependentErrors(checked, policy));
  const { hosts, errors: hostErrors } = resolveHosts(index);
  errors.push(...hostErrors);

  const nodes = new Map<string, DesignNode>();
  const conflicts: LabelConflict[] = [];
  if (policy !== undefined && site !== undefined) {
    const sources = new Map<string, LabelSource>();
    for (const host of hosts.values()) {
      const desired = desiredLabels(host, { policy, racks: index.racks, site, sources });
      conflicts.push(...desired.conflicts);
      const node = index.nodes.get(host.name);
      if (node !== undefined) conflicts.push(...nodeMetadataConflicts(host, desired.labels, { doc: node.doc, path: ['metadata', 'name'] }));
      nodes.set(host.name, designNodeOf(host, desired));
    }
  }
  const pluginDocs = checked.flatMap((c) => (c.kind === 'plugin' ? [{ name: c.value.metadata.name, doc: c.doc, value: c.value }] : []));
  errors.push(...duplicateNameErrors(pluginDocs, SchemaName.LabelPlugin).errors);
  const plugins = pluginDocs.map((p) => pluginSpecFrom(p.value)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const sets = nodeSetsOf(checked, index, { policy, site, nodes, plugins, conflicts, errors, ...(selectorErrors ? { selectorErrors } : {}) });
  errors.push(...conflictErrors(conflicts));
  if (errors.length > 0 || policy === undefined || site === undefined) {
    return { ok: false, errors: sortErrors(errors) };
  }
  const racks = [...index.racks.values()].map((rack): [string, DesignRack] => [
    rack.name,
    { name: rack.name, labels: sortedRecord(Object.entries(rack.labels)) },
  ]);
  const design: Design = {
    policy,
    site: site?.name ?? DEFAULT_SITE,
    nodes: sortedRecord(nodes),
    racks: sortedRecord(racks),
    hostProfiles: [...index.profiles.keys()].sort(),
    ...(plugins.length > 0 ? { plugins } : {}),
    ...(sets.size > 0 ? { nodeSets: sortedRecord(sets) } : {}),
  };
  const warnings = machineOnlyLabelWarnings(checked);
  return { ok: true, design, documents: checked.map((c) => siteDocument(c.doc)), ...(warnings.length > 0 ? { warnings: sortErrors(warnings) } : {}) };
}
