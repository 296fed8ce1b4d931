/**
 * Lenient reading of what a document declares, for the checks that run
 * whether or not the document passed its schema: each field is read on its
 * own, and only where it has the type its checks need, so a schema error in
 * one field (say a taint's effect) never hides the defects of another (a
 * label key two lines up). Whatever is left out here is a schema error,
 * reported by the schema; checks reading a view never report it again.
 */
import { TAINT_EFFECTS, type TaintEffect } from '../plan/constants.ts';
import type { LabelPlugin, PluginSource } from './label-plugin.ts';
import type { LabelPolicyData } from './label-policy.ts';
import { DOCUMENT_METADATA_SCHEMA, SchemaName } from './schema.ts';

/** A map as written (label or annotation keys to values); values of any type are kept, for their key's checks. */
export type MapView = Readonly<Record<string, unknown>>;

/** One entry of a taint list, read leniently. */
export type TaintView = {
  /** Position in the document's list. */
  index: number;
  /** The key, when it is a non-empty string. */
  key: string | undefined;
  /** The value, when it is a string. */
  value: string | undefined;
  /** The effect when it is one Kubernetes knows, `invalid` when given but not one, undefined when absent. */
  effect: TaintEffect | 'invalid' | undefined;
};

/** What a node or host profile declares in `data.metadata`, read leniently. */
export type HostView = {
  ownerData: MapView | undefined;
  annotations: MapView | undefined;
  taints: TaintView[];
  /** The tags that are non-empty strings, with their position in the list. */
  tags: { index: number; tag: string }[];
};

function mapping(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The value at `path` in a parsed document, or undefined when any step is missing or not a mapping or list. */
export function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** A document's `metadata.name` when it is a non-empty string. */
export function nameOf(document: unknown): string | undefined {
  const name = valueAt(document, ['metadata', 'name']);
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The mapping at `path` of a document (a rack's `data.labels`, say), or undefined when it is not one. */
export function mapAt(document: unknown, path: readonly string[]): MapView | undefined {
  return mapping(valueAt(document, path));
}

function taintView(entry: unknown, index: number): TaintView | undefined {
  const taint = mapping(entry);
  if (taint === undefined) return undefined;
  const { key, value, effect } = taint;
  const known = (TAINT_EFFECTS as readonly unknown[]).includes(effect);
  return {
    index,
    key: typeof key === 'string' && key !== '' ? key : undefined,
    value: typeof value === 'string' ? value : undefined,
    effect: effect === undefined ? undefined : known ? (effect as TaintEffect) : 'invalid',
  };
}

/** What a node or host profile document declares under `data.metadata`, read leniently (see the module's comment). */
export function hostView(document: unknown): HostView {
  const metadata = mapAt(document, ['data', 'metadata']);
  const taints = Array.isArray(metadata?.['taints']) ? (metadata['taints'] as unknown[]) : [];
  const tags = Array.isArray(metadata?.['tags']) ? (metadata['tags'] as unknown[]) : [];
  return {
    ownerData: mapping(metadata?.['owner_data']),
    annotations: mapping(metadata?.['annotations']),
    taints: taints.flatMap((entry, i) => taintView(entry, i) ?? []),
    tags: tags.flatMap((tag, index) => (typeof tag === 'string' && tag !== '' ? [{ index, tag }] : [])),
  };
}

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.map((entry) => (typeof entry === 'string' ? entry : '')) : undefined);

/**
 * A label policy's `data` read leniently, for its checks (`policyProblems`)
 * when the document failed its schema: what has the right type as written,
 * and a neutral stand-in for the rest (a generator flag off, the default
 * domain, an empty string for a protected entry that is not one). A finding
 * at a place the schema already refused is the stand-in's, and is dropped
 * by the caller.
 */
export function policyView(document: unknown): LabelPolicyData {
  const data = mapAt(document, ['data']);
  const flags = mapping(data?.['generated_labels']);
  const flag = (name: string) => flags?.[name] === true;
  const domain = data?.['label_domain'];
  const joinTaint = data?.['join_taint_key'];
  return {
    ...(typeof domain === 'string' ? { label_domain: domain } : {}),
    ...(typeof joinTaint === 'string' ? { join_taint_key: joinTaint } : {}),
    generated_labels: { rack: flag('rack'), host_profile: flag('host_profile'), tags: flag('tags'), rack_labels: flag('rack_labels'), site: flag('site') },
    protected_keys: strings(data?.['protected_keys']) ?? [],
    reconcile_os_arch_aliases: false,
    lift_uninitialized_taint: false,
    default_concurrency: 1,
  };
}

/**
 * A label plugin document read leniently, for its checks (`pluginProblems`)
 * when it failed its schema, as {@link policyView}: an unknown `source` is
 * kept as written, so that no check of one source's rules applies to it.
 */
export function pluginView(document: unknown): LabelPlugin {
  const data = mapAt(document, ['data']);
  const path = data?.['path'];
  const timeout = data?.['timeout_seconds'];
  const args = strings(data?.['args']);
  return {
    schema: SchemaName.LabelPlugin,
    metadata: { schema: DOCUMENT_METADATA_SCHEMA, name: nameOf(document) ?? '' },
    data: {
      // Neither json nor exec when not one of them: the checks that depend on the source then skip it.
      source: data?.['source'] as PluginSource,
      path: typeof path === 'string' ? path : '',
      namespaces: strings(data?.['namespaces']) ?? [],
      ...(args === undefined ? {} : { args }),
      ...(typeof timeout === 'number' ? { timeout_seconds: timeout } : {}),
    },
  };
}
