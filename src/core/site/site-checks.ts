/**
 * Site-wide checks between single-document validation and inheritance:
 * singleton documents (the policy, the region) and the checks that depend on
 * the policy (protected keys, names that become generated label values).
 */
import { quote } from '../plan/text.ts';
import type { CheckedDocument } from './document-check.ts';
import { hostView, mapAt, nameOf, valueAt, type MapView } from './document-view.ts';
import { isProtectedLabelKey } from '../plan/label-keys.ts';
import { DEFAULT_SITE_POLICY, generatedLabelKeys, sitePolicyFrom } from './label-policy.ts';
import type { SitePolicy } from './label-policy.ts';
import { invalidValue, labelKeyErrors, labelValueErrors } from '../plan/label-syntax.ts';
import { SchemaName } from './schema.ts';
import { joinTaintRefusal } from '../plan/taints.ts';
import type { SiteError } from '../plan/site-error.ts';
import { documentError, documentRef } from './yaml-source.ts';
import type { LoadedDocument } from './yaml-source.ts';

/**
 * Everything loaded, whether it validated or not: `checked` documents were
 * readable YAML, `broken` ones were not.
 */
export type SiteDocuments = { checked: readonly CheckedDocument[]; broken: readonly LoadedDocument[] };

function documentsOf(all: SiteDocuments, schema: string): LoadedDocument[] {
  const docs = [...all.checked.filter((c) => c.kind !== 'passThrough').map((c) => c.doc), ...all.broken];
  return docs.filter((doc) => documentRef(doc.index, doc.value).schema === schema);
}

function singletonErrors(docs: readonly LoadedDocument[], schema: string): SiteError[] {
  if (docs.length < 2) return [];
  return docs.map((doc) => {
    const others = docs
      .filter((other) => other !== doc)
      .map((other) => `${other.source}:${other.position([], 'value').line}`)
      .sort();
    return documentError(doc, [], `a site has at most one ${schema} document; another is at ${others.join(', ')}`);
  });
}

/**
 * The site's label policy: {@link DEFAULT_SITE_POLICY} without a policy
 * document, its content with exactly one valid document, `undefined` (not
 * known; checks depending on it are skipped) otherwise.
 */
export function sitePolicyOf(all: SiteDocuments): { policy: SitePolicy | undefined; errors: SiteError[] } {
  const docs = documentsOf(all, SchemaName.LabelPolicy);
  const errors = singletonErrors(docs, SchemaName.LabelPolicy);
  if (docs.length === 0) return { policy: DEFAULT_SITE_POLICY, errors };
  const valid = all.checked.flatMap((c) => (c.kind === 'policy' ? [c.value] : []));
  const only = valid[0];
  return { policy: docs.length === 1 && only !== undefined ? sitePolicyFrom(only.data) : undefined, errors };
}

/** The rank of each layer of the site's layering policy (0 the first), empty without one. */
function layerRanks(all: SiteDocuments): Map<string, number> {
  const policy = all.checked.find((c) => documentRef(c.doc.index, c.doc.value).schema?.startsWith('deckhand/LayeringPolicy/') === true);
  const order = valueAt(policy?.doc.value, ['data', 'layerOrder']);
  return new Map(Array.isArray(order) ? order.map((layer, i) => [String(layer), i]) : []);
}

/**
 * The site's region (its name is the site name): `null` without a region
 * document, `undefined` when it is not known (it failed validation, or two
 * are in the nearest layer). Of regions in several layers the one of the
 * lowest layer (a site's over a global one) is the site's, as Drydock keeps
 * the last it reads; two in one layer are refused, since which is last
 * would be the order of the files.
 */
export function siteRegionOf(all: SiteDocuments): {
  site: { name: string; doc: LoadedDocument } | null | undefined;
  errors: SiteError[];
} {
  const docs = documentsOf(all, SchemaName.Region);
  if (docs.length === 0) return { site: null, errors: [] };
  const ranks = layerRanks(all);
  const rank = (doc: LoadedDocument) => ranks.get(String(valueAt(doc.value, ['metadata', 'layeringDefinition', 'layer']))) ?? -1;
  const nearest = Math.max(...docs.map(rank));
  const kept = docs.filter((doc) => rank(doc) === nearest);
  const errors = singletonErrors(kept, SchemaName.Region);
  const valid = all.checked.flatMap((c) => (c.kind === 'region' && kept.includes(c.doc) ? [{ name: c.value.metadata.name, doc: c.doc }] : []));
  return { site: kept.length === 1 ? valid[0] : undefined, errors };
}

function valueNameErrors(doc: LoadedDocument, name: string, key: string): SiteError[] {
  return labelValueErrors(name).map((message) =>
    documentError(doc, ['metadata', 'name'], `name cannot be the value of generated label ${quote(key)}: ${invalidValue(name, message)}`),
  );
}

/**
 * Checks that depend on the policy: no document sets a protected key or
 * the policy's own join taint (`join_taint_key`; the default key is refused
 * by each document's own checks), and
 * every name or tag that becomes part of a generated label (when that
 * generator is on) is valid label syntax there. Made on what each node,
 * host profile, rack and region declares, read leniently, so a document
 * that failed its schema elsewhere is still checked here.
 */
export function policyDependentErrors(checked: readonly CheckedDocument[], policy: SitePolicy): SiteError[] {
  const errors: SiteError[] = [];
  const keys = generatedLabelKeys(policy.labelDomain);
  const on = policy.generatedLabels;
  const protectedKeyErrors = (doc: LoadedDocument, path: string[], labels: MapView) => {
    for (const key of Object.keys(labels)) {
      if (!key.startsWith('!') && isProtectedLabelKey(key, policy.protectedKeys)) {
        errors.push(documentError(doc, [...path, key], `label ${quote(key)} is protected by the label policy; relabel never writes or removes it`, 'key'));
      }
    }
  };
  const nameErrors = (doc: LoadedDocument, key: string) => {
    const name = nameOf(doc.value);
    if (name !== undefined) errors.push(...valueNameErrors(doc, name, key));
  };
  for (const c of checked) {
    const kind = c.kind === 'invalid' ? c.schemaKind : c.kind;
    if (kind === 'node' || kind === 'profile' || kind === 'nodeSet') {
      const view = hostView(c.doc.value);
      protectedKeyErrors(c.doc, ['data', 'metadata', 'owner_data'], view.ownerData ?? {});
      for (const { index, key } of view.taints) {
        if (policy.joinTaintKey !== undefined && key === policy.joinTaintKey)
          errors.push(documentError(c.doc, ['data', 'metadata', 'taints', index, 'key'], joinTaintRefusal(key)));
      }
      if (on.tags) {
        for (const { index, tag } of view.tags) {
          const name = tag.startsWith('!') ? tag.slice(1) : tag;
          const key = `${keys.tagPrefix}${name}`;
          for (const message of labelKeyErrors(key)) {
            errors.push(
              documentError(
                c.doc,
                ['data', 'metadata', 'tags', index],
                `tag ${quote(name)} cannot name generated label ${quote(key)}: ${invalidValue(key, message)}`,
              ),
            );
          }
        }
      }
    }
    if (kind === 'profile' && on.hostProfile) nameErrors(c.doc, keys.hostProfile);
    if (kind === 'rack') {
      protectedKeyErrors(c.doc, ['data', 'labels'], mapAt(c.doc.value, ['data', 'labels']) ?? {});
      if (on.rack) nameErrors(c.doc, keys.rack);
    }
    if (kind === 'region' && on.site) nameErrors(c.doc, keys.site);
  }
  return errors;
}
