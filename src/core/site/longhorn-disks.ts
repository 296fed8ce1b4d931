/**
 * Longhorn's `node.longhorn.io/default-disks-config` annotation, checked
 * rule for rule as longhorn-manager v1.12 applies it: Go's JSON reader into
 * `[]DiskSpecWithName` (`UnmarshalToDisks`), then
 * `CreateDisksFromAnnotation`, then the Longhorn Node's admission webhooks
 * (the node mutator and validator) and the Node CRD's enums. Longhorn
 * discards the whole annotation on any defect, so every defect is listed.
 * Rules that need the host (the path exists, one disk per filesystem, the
 * reserve fits the disk) or a Longhorn setting cannot be checked here.
 */
import { utf8Length } from '../plan/label-syntax.ts';
import { describeJson, goFoldKey, goInt64, type Json, JsonNumber, JsonObject, readJson } from './longhorn-json.ts';
import { tagListErrors } from './longhorn-tags.ts';
import { quote } from '../plan/text.ts';

/** A disk's fields, each with the Go type Longhorn reads it as. */
const diskFields = {
  name: 'string',
  path: 'string',
  diskType: 'string',
  diskDriver: 'string',
  allowScheduling: 'bool',
  evictionRequested: 'bool',
  storageReserved: 'int64',
  tags: 'tags',
} as const;
type DiskField = keyof typeof diskFields;
const fieldNames = Object.keys(diskFields) as DiskField[];
const foldedFields = new Map(fieldNames.map((field) => [goFoldKey(field), field]));

const diskTypes = ['filesystem', 'block'];
const diskDrivers = ['', 'auto', 'aio', 'nvme'];
// Linux refuses a path of PATH_MAX (4096) bytes or more, its closing NUL counted.
const PATH_MAX_BYTES = 4095;
// The node mutator writes a disk's name unescaped into a JSON patch path (`/spec/disks/<name>/tags`).
const namePatchBreakers = /[/~"\\\u0000-\u001f]/;

/**
 * Go's `filepath.Clean` on Linux: the shortest path naming the same file by
 * lexical processing (repeated and trailing `/` dropped, `.` removed, `..`
 * resolved; `..` above the root stays at the root; `''` is `.`).
 */
export function goCleanPath(path: string): string {
  const rooted = path.startsWith('/');
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') parts.push(part);
    else if (parts.length > 0 && parts.at(-1) !== '..') parts.pop();
    else if (!rooted) parts.push('..');
  }
  const body = parts.join('/');
  return rooted ? `/${body}` : body === '' ? '.' : body;
}

/** A disk as Go decodes it: absent or null fields are zero. */
type Disk = { name: string; path: string; diskType: string; diskDriver: string; allowScheduling: boolean; evictionRequested: boolean; storageReserved: bigint };
const zeroDisk: Readonly<Disk> = { name: '', path: '', diskType: '', diskDriver: '', allowScheduling: false, evictionRequested: false, storageReserved: 0n };

/** The type errors of one field (Go would fail to decode it), or its decoded value. */
function decodeField(field: DiskField, value: Json, where: string): { errors: string[] } | { value: Json | bigint } {
  const kind = diskFields[field];
  const goType = { string: 'a string', bool: 'true or false', int64: 'a whole number', tags: 'a JSON array of tags' }[kind];
  const typeError = {
    errors: [`${where} must be ${goType}, not ${describeJson(value)} (Longhorn: UnmarshalToDisks reads it as a Go ${kind === 'tags' ? '[]string' : kind})`],
  };
  if (value === null) return { value };
  if (kind === 'tags') {
    const errors = tagListErrors(value, where, 'UnmarshalToDisks');
    return errors.length > 0 ? { errors } : { value };
  }
  if (kind === 'string') return typeof value === 'string' ? { value } : typeError;
  if (kind === 'bool') return typeof value === 'boolean' ? { value } : typeError;
  if (!(value instanceof JsonNumber)) return typeError;
  const number = goInt64(value);
  if (number === 'fraction') {
    return {
      errors: [
        `${where} must be a whole number of bytes written without fraction or exponent, not ${describeJson(value)} (Longhorn: UnmarshalToDisks reads it as a Go int64)`,
      ],
    };
  }
  if (number === 'overflow') return { errors: [`${where} ${describeJson(value)} does not fit a Go int64 (Longhorn: UnmarshalToDisks)`] };
  return { value: number };
}

/** Reads one disk object field by field, as Go does (the last of a repeated field wins), listing every defect. */
function readDisk(fields: JsonObject, i: number, errors: string[]): { disk: Disk; failed: Set<DiskField> } {
  const disk: Disk = { ...zeroDisk };
  const failed = new Set<DiskField>();
  const seen = new Set<string>();
  for (const [key, value] of fields.members) {
    // Go fills a field from any key equal to its name but for letter case.
    const field = foldedFields.get(goFoldKey(key));
    if (field === undefined) {
      const hint =
        goFoldKey(key) === goFoldKey('storageReservedPercentage')
          ? '; the reserved percentage is the Longhorn setting storage-reserved-percentage-for-default-disk, applied when storageReserved is 0'
          : '';
      errors.push(
        `disks[${i}]: unknown field ${quote(key)} (relabel's rule, stricter than Longhorn, which ignores it; Longhorn's fields are ${fieldNames.join(', ')})${hint}`,
      );
      continue;
    }
    if (key !== field) {
      errors.push(
        `disks[${i}]: field ${quote(key)} is not spelled as Longhorn's ${quote(field)} (relabel's rule, stricter than Longhorn, whose JSON reader ignores letter case)`,
      );
    }
    if (seen.has(field)) errors.push(`disks[${i}]: field ${quote(field)} is given twice (relabel's rule, stricter than Longhorn, which takes the last)`);
    seen.add(field);
    const decoded = decodeField(field, value, `disks[${i}].${field}`);
    if ('errors' in decoded) {
      errors.push(...decoded.errors);
      failed.add(field);
    } else if (field !== 'tags') {
      Object.assign(disk, { [field]: decoded.value ?? zeroDisk[field] });
    }
  }
  return { disk, failed };
}

/** The defects of one decoded disk on its own. */
function diskErrors(disk: Disk, failed: ReadonlySet<DiskField>, i: number): string[] {
  const errors: string[] = [];
  const at = (field: DiskField) => `disks[${i}].${field}`;
  if (!failed.has('path')) {
    if (disk.path === '') errors.push(`disks[${i}] has no path (Longhorn: CreateDisksFromAnnotation, "invalid disk")`);
    else if (disk.path.includes('\u0000'))
      errors.push(`${at('path')} contains a NUL character, which no Linux path can (Longhorn: CreateDisksFromAnnotation cannot stat it)`);
    else if (utf8Length(disk.path) > PATH_MAX_BYTES)
      errors.push(`${at('path')} is longer than Linux's ${PATH_MAX_BYTES} bytes (Longhorn: CreateDisksFromAnnotation cannot stat it)`);
    else if (!disk.path.startsWith('/')) {
      errors.push(
        `${at('path')} must be an absolute path, not ${quote(disk.path)} (relabel's rule, stricter than Longhorn, which looks the path up on the host as written)`,
      );
    }
  }
  if (!failed.has('storageReserved') && disk.storageReserved < 0n) {
    errors.push(`${at('storageReserved')} must not be negative, not ${disk.storageReserved} (Longhorn: CreateDisksFromAnnotation and the node validator)`);
  }
  const typeKnown = !failed.has('diskType') && (disk.diskType === '' || diskTypes.includes(disk.diskType));
  if (!typeKnown && !failed.has('diskType')) {
    errors.push(`${at('diskType')} must be "filesystem" or "block" (absent means filesystem), not ${quote(disk.diskType)} (Longhorn: the Node CRD's enum)`);
  }
  if (!failed.has('diskDriver')) {
    if (!diskDrivers.includes(disk.diskDriver)) {
      errors.push(
        `${at('diskDriver')} must be one of ${diskDrivers.map((d) => JSON.stringify(d)).join(', ')}, not ${quote(disk.diskDriver)} (Longhorn: the Node CRD's enum)`,
      );
    } else if (typeKnown && disk.diskDriver !== '' && disk.diskType !== 'block') {
      errors.push(
        `${at('diskDriver')} ${quote(disk.diskDriver)} is given on a filesystem disk; only a block disk takes a driver (Longhorn: the node validator)`,
      );
    }
  }
  if (disk.allowScheduling && disk.evictionRequested) {
    errors.push(
      `disks[${i}] has allowScheduling and evictionRequested both true; Longhorn schedules nothing on a disk it evicts (Longhorn: the node validator)`,
    );
  }
  const breaker = failed.has('name') ? undefined : namePatchBreakers.exec(disk.name)?.[0];
  if (breaker !== undefined) {
    errors.push(
      `${at('name')} ${quote(disk.name)} contains ${JSON.stringify(breaker)}, which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)`,
    );
  }
  return errors;
}

/** The result of checking a `default-disks-config` value: every defect, and how many disks it lists. */
export type DisksConfigCheck = { errors: string[]; disks: number };

/** Checks a `default-disks-config` value; no errors when Longhorn would create every disk it lists (host permitting). */
export function checkDisksConfig(raw: string): DisksConfigCheck {
  const read = readJson(raw);
  if ('error' in read) return { errors: [`is not valid JSON (${read.error}); Longhorn discards it (UnmarshalToDisks)`], disks: 0 };
  if (read.value === null) return { errors: [], disks: 0 };
  if (!Array.isArray(read.value)) {
    return {
      errors: [`must be a JSON array of disks, not ${describeJson(read.value)} (Longhorn: UnmarshalToDisks reads it as a Go []DiskSpecWithName)`],
      disks: 0,
    };
  }
  const list = read.value as readonly Json[];
  const errors: string[] = [];
  const paths = new Map<string, { i: number; path: string }>();
  const names = new Map<string, number>();
  list.forEach((item, i) => {
    if (item === null) {
      errors.push(`disks[${i}] is null, a disk without a path to Longhorn (Longhorn: CreateDisksFromAnnotation, "invalid disk")`);
      return;
    }
    if (!(item instanceof JsonObject)) {
      errors.push(`disks[${i}] must be an object, not ${describeJson(item)} (Longhorn: UnmarshalToDisks reads it as a Go DiskSpecWithName)`);
      return;
    }
    const { disk, failed } = readDisk(item, i, errors);
    errors.push(...diskErrors(disk, failed, i));
    if (disk.path !== '') {
      const clean = goCleanPath(disk.path);
      const first = paths.get(clean);
      if (first === undefined) paths.set(clean, { i, path: disk.path });
      else {
        const how = first.path === disk.path ? '' : ` once cleaned (both are ${quote(clean)})`;
        errors.push(
          `disks[${i}].path ${quote(disk.path)} is disks[${first.i}]'s path${how}; a node has one disk per path (Longhorn: CreateDisksFromAnnotation, validateNodeDiskPaths)`,
        );
      }
    }
    if (disk.name !== '') {
      const first = names.get(disk.name);
      if (first === undefined) names.set(disk.name, i);
      else
        errors.push(
          `disks[${i}].name ${quote(disk.name)} is also disks[${first}]'s; each disk's name is unique on a node (Longhorn: CreateDisksFromAnnotation)`,
        );
    }
  });
  return { errors, disks: list.length };
}
