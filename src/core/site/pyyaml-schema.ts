/**
 * Plain scalars read as Airship reads them. Deckhand, Drydock and Pegleg
 * load documents with PyYAML's safe loader, which follows YAML 1.1: `0555`
 * is the octal 365 (a file mode), `yes` and `off` are booleans, `1_000` is
 * a thousand, `<<` merges a mapping. A site read otherwise would hand
 * Promenade or Armada other values than Deckhand does. These tags replace
 * the `yaml` package's own YAML 1.1 scalars where PyYAML's resolver differs
 * from them (PyYAML has no `y`/`n` booleans, wants a dot in a float and a
 * sign in its exponent, and keeps timestamps as text here, since a date is
 * no value a document relabel reads takes). Pure.
 */
import type { ScalarTag, Tags } from 'yaml';

const BOOL = 'tag:yaml.org,2002:bool';
const INT = 'tag:yaml.org,2002:int';
const FLOAT = 'tag:yaml.org,2002:float';

// Base 60, as PyYAML reads `1:30` (90) or `1:30.5`.
function sexagesimal(text: string): number {
  return text.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

function signed(text: string, read: (digits: string) => number): number {
  const negative = text.startsWith('-');
  const digits = text.replace(/^[-+]/, '').replace(/_/g, '');
  const value = read(digits);
  return negative ? -value : value;
}

function int(text: string): number {
  return signed(text, (d) => {
    if (d === '0') return 0;
    if (d.startsWith('0b')) return parseInt(d.slice(2), 2);
    if (d.startsWith('0x')) return parseInt(d.slice(2), 16);
    if (d.includes(':')) return sexagesimal(d);
    if (d.startsWith('0')) return parseInt(d, 8);
    return parseInt(d, 10);
  });
}

function float(text: string): number {
  const lower = text.toLowerCase();
  if (lower.endsWith('.inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  if (lower === '.nan') return NaN;
  return signed(lower, (d) => (d.includes(':') ? sexagesimal(d) : Number(d)));
}

/** PyYAML's booleans, integers and floats (its `Resolver` patterns), as `yaml` scalar tags. */
export const PYYAML_SCALARS: ScalarTag[] = [
  { tag: BOOL, default: true, test: /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/, resolve: () => true, identify: (v) => v === true },
  { tag: BOOL, default: true, test: /^(?:no|No|NO|false|False|FALSE|off|Off|OFF)$/, resolve: () => false, identify: (v) => v === false },
  {
    tag: INT,
    default: true,
    test: /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
    resolve: int,
    identify: (v) => typeof v === 'number' && Number.isInteger(v),
  },
  {
    tag: FLOAT,
    default: true,
    test: /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
    resolve: float,
    identify: (v) => typeof v === 'number',
  },
];

const REPLACED = new Set([BOOL, INT, FLOAT, 'tag:yaml.org,2002:timestamp']);

/** The tags of a YAML 1.1 schema with PyYAML's scalars in place of `yaml`'s own. */
export function pyyamlTags(tags: Tags): Tags {
  // A schema's own tags are objects; names of tags (strings) only appear in options.
  return [...tags.filter((t) => typeof t === 'string' || !REPLACED.has(t.tag)), ...PYYAML_SCALARS];
}

/**
 * `yaml` options that read and write scalars as PyYAML does: what relabel
 * reads documents with, and what anything writing documents for relabel or
 * Airship to read should write them with (a string `yes` is then quoted).
 */
export const PYYAML_OPTIONS = { version: '1.1', merge: true, customTags: pyyamlTags } as const;
