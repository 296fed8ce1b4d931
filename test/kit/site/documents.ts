/**
 * Builders of small sites for the tests of the core, the facade and the
 * CLI: YAML documents whose lines are easy to count. Test kit, not product
 * code: pure, so the core's unit tests may use it.
 */
import type { SiteSource } from '../../../src/core/site/yaml-source.ts';

/**
 * One YAML document (with its leading `---`). The document occupies
 * lines 1–6 relative to its `---`, and `body` starts on line 7, so test
 * positions are easy to compute: `data:` is line 6.
 */
export function yamlDoc(schema: string, name: string, body: string): string {
  const data = body === '' ? 'data: {}\n' : `data:\n${body.endsWith('\n') ? body : `${body}\n`}`;
  return `---\nschema: ${schema}\nmetadata:\n  schema: metadata/Document/v1\n  name: ${name}\n${data}`;
}

/** A `drydock/BaremetalNode/v1` document. */
export function nodeDoc(name: string, body: string): string {
  return yamlDoc('drydock/BaremetalNode/v1', name, body);
}

/** A `drydock/HostProfile/v1` document. */
export function profileDoc(name: string, body: string): string {
  return yamlDoc('drydock/HostProfile/v1', name, body);
}

/** A `relabel/NodeSet/v1` document. */
export function nodeSetDoc(name: string, body: string): string {
  return yamlDoc('relabel/NodeSet/v1', name, body);
}

/** A `drydock/Rack/v1` document with the given rack labels. */
export function rackDoc(name: string, labels: Record<string, string> = {}): string {
  const entries = Object.entries(labels).map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}\n`);
  return yamlDoc('drydock/Rack/v1', name, entries.length === 0 ? '  labels: {}' : `  labels:\n${entries.join('')}`);
}

/** A `relabel/LabelPolicy/v1` document; `overrides` replaces whole lines of `data`. */
export function policyDoc(name: string, overrides: Partial<Record<string, string>> = {}): string {
  const lines: Record<string, string> = {
    label_domain: 'label_domain: relabel.airshipit.org',
    generated_labels: 'generated_labels: {rack: true, host_profile: true, tags: true, rack_labels: true, site: true}',
    protected_keys: 'protected_keys: []',
    reconcile_os_arch_aliases: 'reconcile_os_arch_aliases: true',
    lift_uninitialized_taint: 'lift_uninitialized_taint: false',
    default_concurrency: 'default_concurrency: 4',
    ...overrides,
  };
  const body = Object.values(lines)
    .filter((line) => line !== '')
    .map((line) => `  ${line}\n`)
    .join('');
  return yamlDoc('relabel/LabelPolicy/v1', name, body);
}

/** Wraps documents into one source named `source`. */
export function source(name: string, ...documents: string[]): SiteSource {
  return { source: name, text: documents.join('') };
}
