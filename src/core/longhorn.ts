/**
 * Longhorn's node configuration, checked whole as Longhorn reads it
 * (longhorn-manager: the node controller parses these from the Kubernetes
 * Node and discards an annotation entirely on any defect, applying nothing
 * of it). relabel refuses such documents instead, naming every defect, so a
 * node never carries configuration Longhorn would silently ignore:
 *
 * - `node.longhorn.io/default-node-tags`: a JSON array of tags, each a
 *   qualified name (label-key syntax, as Longhorn's `ValidateTags`), none twice;
 * - `node.longhorn.io/default-disks-config`: a JSON array of disks, each an
 *   object with Longhorn's fields only (`path` absolute and unique on the
 *   node, `name` unique when given, `diskType`, `diskDriver`,
 *   `allowScheduling`, `evictionRequested`, `storageReserved` a non-negative
 *   integer of bytes, `tags` as above);
 * - label `node.longhorn.io/create-default-disk: config` needs a valid disks
 *   annotation on the same node.
 */
import { labelKeyErrors } from './label-syntax.ts';
import { clip, quote } from './site-error.ts';

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

const diskTypes = ['filesystem', 'block'];
const diskDrivers = ['', 'auto', 'aio', 'nvme'];
// A PCI address (domain:bus:device.function), which a block disk driven by SPDK may name instead of a path.
const pciAddress = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$/;

type FieldCheck = (value: unknown, disk: Record<string, unknown>) => string | undefined;

const isBoolean: FieldCheck = (value) => (typeof value === 'boolean' ? undefined : `must be a boolean (true or false), not ${quote(value)}`);
const isString: FieldCheck = (value) => (typeof value === 'string' ? undefined : `must be a string, not ${quote(value)}`);
const oneOf = (allowed: readonly string[]): FieldCheck => (value) =>
  typeof value === 'string' && allowed.includes(value) ? undefined : `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}, not ${quote(value)}`;

// Longhorn's disk fields and their checks; `tags` is checked by tagErrors.
const diskFields: Record<string, FieldCheck> = {
  name: isString,
  path: (value, disk) => {
    if (typeof value !== 'string' || value === '') return `is required, an absolute path (not ${quote(value)})`;
    if (value.startsWith('/') || (disk['diskType'] === 'block' && pciAddress.test(value))) return undefined;
    return `must be an absolute path, not ${quote(value)}`;
  },
  diskType: oneOf(diskTypes),
  diskDriver: oneOf(diskDrivers),
  allowScheduling: isBoolean,
  evictionRequested: isBoolean,
  storageReserved: (value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? undefined : `must be a non-negative whole number of bytes, not ${quote(value)}`,
  tags: () => undefined,
};

function parsed(raw: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(raw) as unknown };
  } catch (err) {
    return { error: `is not valid JSON (${clip(err instanceof Error ? err.message : String(err), 200)})` };
  }
}

/** What is wrong with a list of Longhorn tags (`where` names it in messages); empty when valid. */
export function tagErrors(tags: unknown, where: string): string[] {
  if (!Array.isArray(tags)) return [`${where} must be a JSON array of tags, not ${quote(tags)}`];
  const errors: string[] = [];
  const seen = new Set<string>();
  tags.forEach((tag: unknown, i) => {
    if (typeof tag !== 'string') {
      errors.push(`${where}[${i}] must be a string, not ${quote(tag)}`);
      return;
    }
    const syntax = labelKeyErrors(tag);
    if (syntax.length > 0) errors.push(`${where}[${i}]: tag ${quote(tag)} is not a valid Longhorn tag: ${syntax.join('; ')}`);
    else if (seen.has(tag)) errors.push(`${where}[${i}]: tag ${quote(tag)} is listed twice`);
    seen.add(tag);
  });
  return errors;
}

/** What is wrong with a `default-disks-config` value; empty when Longhorn would accept every disk. */
export function disksConfigErrors(raw: string): string[] {
  const result = parsed(raw);
  if ('error' in result) return [result.error];
  if (!Array.isArray(result.value)) return [`must be a JSON array of disks, not ${quote(result.value)}`];
  const errors: string[] = [];
  const paths = new Map<string, number>();
  const names = new Map<string, number>();
  result.value.forEach((disk: unknown, i) => {
    if (typeof disk !== 'object' || disk === null || Array.isArray(disk)) {
      errors.push(`disks[${i}] must be an object, not ${quote(disk)}`);
      return;
    }
    const fields = disk as Record<string, unknown>;
    if (!Object.hasOwn(fields, 'path')) errors.push(`disks[${i}].path is required, an absolute path`);
    for (const [field, value] of Object.entries(fields)) {
      const check = Object.hasOwn(diskFields, field) ? diskFields[field] : undefined;
      if (check === undefined) {
        errors.push(`disks[${i}]: unknown field ${quote(field)} (Longhorn's are ${Object.keys(diskFields).join(', ')})`);
        continue;
      }
      const problem = check(value, fields);
      if (problem !== undefined) errors.push(`disks[${i}].${field} ${problem}`);
    }
    if (Object.hasOwn(fields, 'tags')) errors.push(...tagErrors(fields['tags'], `disks[${i}].tags`));
    const unique = (map: Map<string, number>, field: string) => {
      const value = fields[field];
      if (typeof value !== 'string' || value === '') return;
      const first = map.get(value);
      if (first === undefined) map.set(value, i);
      else errors.push(`disks[${i}].${field} ${quote(value)} is also disks[${first}]'s; each disk's ${field} is unique on a node`);
    };
    unique(paths, 'path');
    unique(names, 'name');
  });
  return errors;
}

/** What is wrong with a `default-node-tags` value; empty when valid. */
export function nodeTagsErrors(raw: string): string[] {
  const result = parsed(raw);
  return 'error' in result ? [result.error] : tagErrors(result.value, 'tags');
}

function capped(key: string, messages: readonly string[]): LonghornDefect[] {
  const listed = messages.slice(0, MAX_LONGHORN_DEFECTS).map((message) => ({ key, message }));
  const more = messages.length - listed.length;
  return more > 0 ? [...listed, { key, message: `${more} more defect(s) not listed (at most ${MAX_LONGHORN_DEFECTS} are)` }] : listed;
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
  const disks = annotations[LONGHORN_DISKS_CONFIG];
  const diskErrors = disks === undefined ? [] : disksConfigErrors(disks);
  defects.push(...capped(LONGHORN_DISKS_CONFIG, diskErrors));
  if (labels[LONGHORN_CREATE_DEFAULT_DISK] === 'config' && (disks === undefined || diskErrors.length > 0)) {
    const why = disks === undefined ? `no ${quote(LONGHORN_DISKS_CONFIG)} annotation` : `an invalid ${quote(LONGHORN_DISKS_CONFIG)} annotation`;
    defects.push({ key: LONGHORN_CREATE_DEFAULT_DISK, message: `is "config" but the node has ${why}; Longhorn would create no disk` });
  }
  return defects;
}
