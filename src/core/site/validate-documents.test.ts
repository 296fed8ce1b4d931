import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, policyDoc, profileDoc, rackDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';
import { validateDocumentsAlone } from './validate-documents.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateDocumentsAlone(sources);
  assert.equal(result.ok, false, 'expected the documents to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

describe('validateDocumentsAlone: each document on its own, as a bucket is staged', () => {
  it('accepts documents whose references are elsewhere, which the whole site refuses', () => {
    // Bucket "nodes": a node naming a host profile, a rack and tags the label policy would judge; all of them live in other buckets.
    const nodes = [
      source(
        'nodes.yaml',
        nodeDoc('n1', "  host_profile: compute\n  metadata:\n    rack: r9\n    tags: ['!gone']\n    owner_data:\n      feature.node.kubernetes.io/cpu: x"),
      ),
      source('policies.yaml', policyDoc('p1'), policyDoc('p2')),
      source('regions.yaml', yamlDoc('drydock/Region/v1', 'a', ''), yamlDoc('drydock/Region/v1', 'b', '')),
    ];
    assert.deepEqual(validateDocumentsAlone(nodes), { ok: true, documents: 5 });
    const site = validateSite(nodes);
    assert.ok(!site.ok);
    assert.deepEqual(
      site.errors.map((e) => e.message.split(':')[0] ?? ''),
      [
        'host profile "compute" is not defined (no drydock/HostProfile/v1 document named "compute")',
        'a site has at most one relabel/LabelPolicy/v1 document; another is at policies.yaml',
        'a site has at most one relabel/LabelPolicy/v1 document; another is at policies.yaml',
        'a site has at most one drydock/Region/v1 document; another is at regions.yaml',
        'a site has at most one drydock/Region/v1 document; another is at regions.yaml',
      ],
    );
  });

  it('lists every YAML, schema and label syntax error, across files, sorted', () => {
    const errors = errorsOf([
      source('b.yaml', nodeDoc('n2', '  host_profile: nowhere\n  metadata:\n    rack: 42\n    owner_data:\n      ok: "-bad"')),
      source('a.yaml', 'schema: drydock/BaremetalNode/v1\nmetadata: {name: n1\n'),
      source('c.yaml', rackDoc('r1', { 'kubernetes.io/hostname': 'x' }), '---\n- not a mapping\n'),
    ]);
    assert.deepEqual(errors, [
      'a.yaml:3:1 drydock/BaremetalNode/v1 "n1": Flow map in block collection must be sufficiently indented and end with a }',
      'b.yaml:9:11 drydock/BaremetalNode/v1 "n2" data.metadata.rack: rack must be a string',
      // Reported though the document failed its schema (the rack above): every field is checked.
      `b.yaml:11:11 drydock/BaremetalNode/v1 "n2" data.metadata.owner_data.ok: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      'c.yaml:8:5 drydock/Rack/v1 "r1" data.labels["kubernetes.io/hostname"]: label "kubernetes.io/hostname" is owned by the kubelet; documents may not set it (relabel never writes or removes it)',
      'c.yaml:10:1 document 2: a document must be a mapping with schema, metadata and data',
    ]);
    assert.ok(!errors.some((e) => e.includes('nowhere')), 'a dangling reference is not a per-document error');
  });

  it('reports a name given twice in the same schema, each occurrence naming the other', () => {
    assert.deepEqual(errorsOf([source('a.yaml', nodeDoc('n1', ''), profileDoc('n1', '')), source('b.yaml', '# comment\n', nodeDoc('n1', ''))]), [
      'a.yaml:5:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at b.yaml:6:9',
      'b.yaml:6:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at a.yaml:5:9',
    ]);
    assert.deepEqual(errorsOf([source('r.yaml', yamlDoc('drydock/Region/v1', 'lab', ''), yamlDoc('drydock/Region/v1', 'lab', ''))]), [
      'r.yaml:5:9 drydock/Region/v1 "lab" metadata.name: duplicate drydock/Region/v1 "lab": also defined at r.yaml:11:9',
      'r.yaml:11:9 drydock/Region/v1 "lab" metadata.name: duplicate drydock/Region/v1 "lab": also defined at r.yaml:5:9',
    ]);
  });

  it('accepts the sample site split into buckets the way a whole-site check would refuse one alone', () => {
    const profiles = [source('profiles.yaml', profileDoc('base', ''), profileDoc('compute', '  host_profile: base'))];
    const nodes = [source('nodes.yaml', rackDoc('r1'), nodeDoc('n1', '  host_profile: compute\n  metadata:\n    rack: r1'))];
    assert.deepEqual(validateDocumentsAlone(nodes), { ok: true, documents: 2 });
    assert.deepEqual(validateDocumentsAlone(profiles), { ok: true, documents: 2 });
    assert.equal(validateSite(nodes).ok, false);
    assert.equal(validateSite([...nodes, ...profiles]).ok, true);
  });
});
