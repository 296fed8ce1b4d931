/**
 * Node sets (`relabel/NodeSet/v1`) at validation: each set is resolved once,
 * as a node would be (host-profile inheritance, generated labels,
 * annotations, taints), and its selector is held to the rule that keeps
 * membership stable: it may read only label keys relabel never writes, so
 * relabel's own writes can never move a node in or out of a set.
 */
import type { LabelSelector } from '../plan/label-selector.ts';
import { machineOnlySelectorWarnings } from '../plan/machine-labels.ts';
import { quote } from '../plan/text.ts';
import type { PathSegment, SiteError } from '../plan/site-error.ts';
import type { CheckedDocument } from './document-check.ts';
import { duplicateNameErrors, type HostEntry } from './design-resolve.ts';
import { matchesNamespace, type PluginSpec } from './label-plugin.ts';
import { generatedLabelKeys } from './label-policy.ts';
import { SchemaName } from './schema.ts';
import { documentError } from './yaml-source.ts';

/** A valid node set document, by name, with its selector. */
export type NodeSetEntry = HostEntry & { selector: LabelSelector };

/**
 * The valid node set documents by name, sorted; every occurrence of a name
 * given to two sets reported (those sets left out).
 */
export function nodeSetEntries(checked: readonly CheckedDocument[]): { entries: Map<string, NodeSetEntry>; errors: SiteError[] } {
  const all = checked.flatMap((c): NodeSetEntry[] =>
    c.kind === 'nodeSet' ? [{ name: c.value.metadata.name, doc: c.doc, data: c.value.data, selector: c.value.data.selector as LabelSelector }] : [],
  );
  const { duplicated, errors } = duplicateNameErrors(all, SchemaName.NodeSet);
  const entries = new Map(all.filter((e) => !duplicated.has(e.name)).map((e): [string, NodeSetEntry] => [e.name, e]));
  return { entries: new Map([...entries].sort(([a], [b]) => (a < b ? -1 : 1))), errors };
}

/** What the site writes, as selectors must not read it: label keys with who sets them. */
export type OwnedLabels = {
  /** Exact keys, each with the first place found that sets it (`host profile "compute"`). */
  keys: ReadonlyMap<string, string>;
  policy: { labelDomain: string };
  plugins: readonly PluginSpec[];
};

/**
 * Why relabel owns `key` (words naming who writes it), or undefined when
 * it never writes it. Owned: every key a node, node set, host profile or
 * rack document of the site sets; the label domain's generated keys
 * (`<domain>/…`, `tag.<domain>/…`), whether or not their generator is on,
 * since a generator turned off removes what it wrote; and every key in a
 * label plugin's namespaces.
 */
export function ownerOf(key: string, owned: OwnedLabels): string | undefined {
  const setBy = owned.keys.get(key);
  if (setBy !== undefined) return `set by ${setBy}`;
  const generated = generatedLabelKeys(owned.policy.labelDomain);
  const domain = generated.rack.slice(0, -'rack'.length);
  if (key.startsWith(domain) || key.startsWith(generated.tagPrefix))
    return `in the label domain ${quote(owned.policy.labelDomain)}, where relabel generates labels`;
  for (const plugin of owned.plugins) {
    const glob = plugin.namespaces.find((g) => matchesNamespace(key, g));
    if (glob !== undefined) return `in namespace ${quote(glob)} of ${SchemaName.LabelPlugin} ${quote(plugin.name)}`;
  }
  return undefined;
}

/**
 * The label keys every document of the site sets, each with who sets it
 * first (nodes, sets, profiles and racks, in that order, each by name).
 */
export function ownedLabelKeys(input: {
  nodes: Iterable<{ name: string; labels: Readonly<Record<string, string>> }>;
  sets: Iterable<{ name: string; labels: Readonly<Record<string, string>> }>;
  profiles: Iterable<HostEntry>;
  racks: Iterable<{ name: string; labels: Readonly<Record<string, string>> }>;
}): Map<string, string> {
  const keys = new Map<string, string>();
  const add = (labels: Iterable<string>, by: string) => {
    for (const key of labels) if (!key.startsWith('!') && !keys.has(key)) keys.set(key, by);
  };
  for (const node of input.nodes) add(Object.keys(node.labels), `${SchemaName.BaremetalNode} ${quote(node.name)}`);
  for (const set of input.sets) add(Object.keys(set.labels), `${SchemaName.NodeSet} ${quote(set.name)}`);
  for (const profile of input.profiles) add(Object.keys(profile.data.metadata?.owner_data ?? {}), `${SchemaName.HostProfile} ${quote(profile.name)}`);
  for (const rack of input.racks) add(Object.keys(rack.labels), `${SchemaName.Rack} ${quote(rack.name)}`);
  return keys;
}

/**
 * Every key a set's selector reads that relabel owns (see {@link ownerOf}),
 * each refused at the selector's field that names it.
 */
export function selectorOwnershipErrors(entries: Iterable<NodeSetEntry>, owned: OwnedLabels): SiteError[] {
  const errors: SiteError[] = [];
  for (const entry of entries) {
    const refuse = (key: string, path: PathSegment[], target: 'key' | 'value') => {
      const owner = ownerOf(key, owned);
      if (owner === undefined) return;
      const message =
        `selector reads label ${quote(key)}, which relabel owns (${owner}); ` +
        'a selector may read only labels relabel never writes, so that its own writes cannot move a node in or out of the set';
      errors.push(documentError(entry.doc, ['data', 'selector', ...path], message, target));
    };
    for (const key of Object.keys(entry.selector.matchLabels ?? {})) refuse(key, ['matchLabels', key], 'key');
    (entry.selector.matchExpressions ?? []).forEach((r, i) => refuse(r.key, ['matchExpressions', i, 'key'], 'value'));
  }
  return errors;
}

/**
 * Warnings, not errors: each selector field of a valid node set document
 * among `checked` that reads a label Cluster API keeps on Machines only
 * (see `machine-labels.ts`), at that field, with the reason. Such a set
 * matches no Node unless the machine controller's
 * `--additional-sync-machine-labels` names the key, which relabel cannot see.
 */
export function machineOnlyLabelWarnings(checked: readonly CheckedDocument[]): SiteError[] {
  return checked.flatMap((c) =>
    c.kind !== 'nodeSet'
      ? []
      : machineOnlySelectorWarnings(c.value.data.selector as LabelSelector).map((w) =>
          documentError(c.doc, ['data', 'selector', ...w.path], w.message, w.path[0] === 'matchLabels' ? 'key' : 'value'),
        ),
  );
}
