/**
 * Longhorn's node configuration, checked whole as longhorn-manager v1.12
 * reads it from the Kubernetes Node (its Kubernetes node controller, then
 * the Longhorn Node's admission webhooks). Longhorn discards an annotation
 * entirely on any defect, applying nothing of it; relabel refuses such
 * documents instead, naming every defect and the rule it breaks, so a node
 * never carries configuration Longhorn would silently ignore:
 *
 * - `node.longhorn.io/default-node-tags`: see `longhorn-tags.ts`;
 * - `node.longhorn.io/default-disks-config`: see `longhorn-disks.ts`;
 * - label `node.longhorn.io/create-default-disk`: `true` or `config` in any
 *   letter case; `config` needs a disks annotation that lists a disk and is
 *   valid.
 *
 * Where relabel is stricter than Longhorn, its message says so.
 */
import { checkDisksConfig } from './longhorn-disks.ts';
import { nodeTagsErrors } from './longhorn-tags.ts';
import { quote } from '../plan/text.ts';

/** Annotation giving a new Longhorn node its tags. */
export const LONGHORN_NODE_TAGS = 'node.longhorn.io/default-node-tags';
/** Annotation giving a new Longhorn node its default disks. */
export const LONGHORN_DISKS_CONFIG = 'node.longhorn.io/default-disks-config';
/** Label telling Longhorn how to create a node's default disks (`config`: from the disks annotation). */
export const LONGHORN_CREATE_DEFAULT_DISK = 'node.longhorn.io/create-default-disk';

/** Defects listed per annotation; the rest are counted in one more. */
export const MAX_LONGHORN_DEFECTS = 20;

/** One defect: the annotation (or label) it is in, and what is wrong. */
export type LonghornDefect = { key: string; message: string };

function capped(key: string, messages: readonly string[]): LonghornDefect[] {
  const listed = messages.slice(0, MAX_LONGHORN_DEFECTS).map((message) => ({ key, message }));
  const more = messages.length - listed.length;
  return more > 0 ? [...listed, { key, message: `${more} more defect(s) not listed (at most ${MAX_LONGHORN_DEFECTS} are)` }] : listed;
}

/**
 * What is wrong with the `create-default-disk` label's value, given what the
 * node's disks annotation holds (`undefined`: no annotation); undefined when
 * nothing is. Longhorn lower-cases the value (syncDefaultDisks).
 */
function createDefaultDiskError(value: string, disks: { errors: readonly string[]; disks: number } | undefined): string | undefined {
  const lowered = value.toLowerCase();
  if (lowered === 'true') return undefined;
  if (lowered !== 'config') {
    return `is ${quote(value)}; Longhorn knows only "true" and "config" (in any letter case) and ignores any other value (Longhorn: syncDefaultDisks)`;
  }
  const noDisk = 'Longhorn would create no disk (Longhorn: syncDefaultDisks)';
  if (disks === undefined) return `is ${quote(value)} but the node has no ${quote(LONGHORN_DISKS_CONFIG)} annotation; ${noDisk}`;
  if (disks.errors.length > 0) return `is ${quote(value)} but the node has an invalid ${quote(LONGHORN_DISKS_CONFIG)} annotation; ${noDisk}`;
  if (disks.disks === 0) return `is ${quote(value)} but the node's ${quote(LONGHORN_DISKS_CONFIG)} annotation lists no disk; ${noDisk}`;
  return undefined;
}

/**
 * Every defect of a node's Longhorn configuration, given its desired labels
 * and annotations; empty when there is none (or the node has no Longhorn
 * configuration). At most {@link MAX_LONGHORN_DEFECTS} per annotation are
 * listed, then how many more.
 */
export function longhornDefects(labels: Readonly<Record<string, string>>, annotations: Readonly<Record<string, string>>): LonghornDefect[] {
  const defects: LonghornDefect[] = [];
  const tags = annotations[LONGHORN_NODE_TAGS];
  if (tags !== undefined) defects.push(...capped(LONGHORN_NODE_TAGS, nodeTagsErrors(tags)));
  const raw = annotations[LONGHORN_DISKS_CONFIG];
  const disks = raw === undefined ? undefined : checkDisksConfig(raw);
  if (disks !== undefined) defects.push(...capped(LONGHORN_DISKS_CONFIG, disks.errors));
  const label = labels[LONGHORN_CREATE_DEFAULT_DISK];
  const labelError = label === undefined ? undefined : createDefaultDiskError(label, disks);
  if (labelError !== undefined) defects.push({ key: LONGHORN_CREATE_DEFAULT_DISK, message: labelError });
  return defects;
}
