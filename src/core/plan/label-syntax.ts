/**
 * Kubernetes label syntax, checked exactly as the API server does
 * (k8s.io/apimachinery v0.36 `content.IsLabelKey`, `content.IsLabelValue`,
 * `IsDNS1123Subdomain`), with the same messages, so a document that passes
 * here is never rejected by the API server for its labels.
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len` does.
 */
import { quote } from './text.ts';

const labelNameFormat = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelNameRegExp = new RegExp(`^${labelNameFormat}$`);
const labelNameMessage = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelNameMaxBytes = 63;

const labelValueFormat = `(${labelNameFormat})?`;
const labelValueRegExp = new RegExp(`^${labelValueFormat}$`);
const labelValueMessage =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Longest label value Kubernetes accepts, in bytes. */
export const LABEL_VALUE_MAX_BYTES = 63;

const dns1123LabelFormat = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFormat = `${dns1123LabelFormat}(\\.${dns1123LabelFormat})*`;
const dns1123SubdomainRegExp = new RegExp(`^${dns1123SubdomainFormat}$`);
const dns1123SubdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** Longest DNS-1123 subdomain (label prefix, node name) Kubernetes accepts, in bytes. */
export const DNS1123_SUBDOMAIN_MAX_BYTES = 253;

/**
 * Length of a string in UTF-8 bytes. Kubernetes limits are in bytes; a JS
 * `length` counts UTF-16 units and would disagree on non-ASCII input.
 */
export function utf8Length(value: string): number {
  let bytes = 0;
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

function maxLengthError(bytes: number): string {
  return `must be no more than ${bytes} bytes`;
}

// Same shape as apimachinery's RegexError, including its double space
// before "or", so messages match the API server's character for character.
function regExpError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  const shown = examples.map((example, i) => `${i > 0 ? ' or ' : ''}'${example}', `).join('');
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

/**
 * Checks a DNS-1123 subdomain (lowercase, dot-separated, at most 253 bytes),
 * the syntax of a label key prefix and of a Node name.
 *
 * @returns Kubernetes' messages, empty when the value is valid.
 */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (utf8Length(value) > DNS1123_SUBDOMAIN_MAX_BYTES) {
    errors.push(maxLengthError(DNS1123_SUBDOMAIN_MAX_BYTES));
  }
  if (!dns1123SubdomainRegExp.test(value)) {
    errors.push(regExpError(dns1123SubdomainMessage, dns1123SubdomainFormat, 'example.com'));
  }
  return errors;
}

/**
 * Checks a label key: an optional DNS-1123 subdomain prefix and `/`, then a
 * name of at most 63 bytes matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
 *
 * @returns Kubernetes' messages (as `IsLabelKey`), empty when the key is valid.
 */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  const errors: string[] = [];
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) {
      errors.push('prefix part must be non-empty');
    } else {
      errors.push(...dns1123SubdomainErrors(prefix).map((message) => `prefix part ${message}`));
    }
  } else {
    return [
      `a valid label key ${regExpError(labelNameMessage, labelNameFormat, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) {
    errors.push('name part must be non-empty');
  } else if (utf8Length(name) > labelNameMaxBytes) {
    errors.push(`name part ${maxLengthError(labelNameMaxBytes)}`);
  }
  if (!labelNameRegExp.test(name)) {
    errors.push(`name part ${regExpError(labelNameMessage, labelNameFormat, 'MyName', 'my.name', '123-abc')}`);
  }
  return errors;
}

/**
 * Checks a label value: empty, or at most 63 bytes matching the label name
 * syntax.
 *
 * @returns Kubernetes' messages (as `IsLabelValue`), empty when the value is valid.
 */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (utf8Length(value) > LABEL_VALUE_MAX_BYTES) errors.push(maxLengthError(LABEL_VALUE_MAX_BYTES));
  if (!labelValueRegExp.test(value)) {
    errors.push(regExpError(labelValueMessage, labelValueFormat, 'MyValue', 'my_value', '12345'));
  }
  return errors;
}

// Go's strings.ToLower maps each code point by Unicode's simple case
// mapping. JavaScript's toLowerCase uses the full mapping, which differs only
// for U+0130 (LATIN CAPITAL LETTER I WITH DOT ABOVE: Go gives "i", JavaScript
// "i\u0307"); taken one code point at a time it also ignores the final-sigma
// context, as Go does.
function goToLower(value: string): string {
  if (/^[\x00-\x7f]*$/.test(value)) return value.toLowerCase();
  let lower = '';
  for (const char of value) lower += char === '\u0130' ? 'i' : char.toLowerCase();
  return lower;
}

/**
 * Checks an annotation key as the API server does (`ValidateAnnotations`):
 * the label-key rule applied to the key lower-cased, so `Example.com/x` is a
 * valid annotation key though not a valid label key. Lower-casing is Go's
 * (see `goToLower`): the Kelvin sign U+212A lower-cases to `k`, so the API
 * server accepts it, and so does this.
 *
 * @returns Kubernetes' messages, empty when the key is valid.
 */
export function annotationKeyErrors(key: string): string[] {
  return labelKeyErrors(goToLower(key));
}

/** True when `key` is a syntactically valid Kubernetes annotation key (see {@link annotationKeyErrors}). */
export function isValidAnnotationKey(key: string): boolean {
  return annotationKeyErrors(key).length === 0;
}

/**
 * Wraps a syntax message the way the API server reports a field error:
 * `Invalid value: "<value>": <message>`.
 */
export function invalidValue(value: string, message: string): string {
  return `Invalid value: ${quote(value)}: ${message}`;
}

/** True when `key` is a syntactically valid Kubernetes label key. */
export function isValidLabelKey(key: string): boolean {
  return labelKeyErrors(key).length === 0;
}
