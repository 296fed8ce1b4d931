/**
 * Lenient reading of what a document declares, for the checks that run
 * whether or not the document passed its schema: each field is read on its
 * own, and only where it has the type its checks need, so a schema error in
 * one field (say a taint's effect) never hides the defects of another (a
 * label key two lines up). Whatever is left out here is a schema error,
 * reported by the schema; checks reading a view never report it again.
 */
import { TAINT_EFFECTS, type TaintEffect } from './constants.ts';

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
