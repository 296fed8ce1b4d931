import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, policyDoc, profileDoc, rackDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';
import { validateDocumentsAlone } from './validate-documents.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateSite(sources);
  assert.equal(result.ok, false, 'expected the site to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

const nameMessage =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const prefixMessage =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

// Four independent defects in one node document, one of them a schema error
// (an unknown taint effect): every one is reported, in one pass.
const fourDefects = nodeDoc(
  'n1',
  [
    '  metadata:',
    '    owner_data:',
    '      bad key: x',
    '    annotations:',
    '      Example.com/fine: upper case is fine in an annotation key',
    '      ex ample.com/a: y',
    '    taints:',
    "      - {key: 'bad/taint/key', effect: NoSchedule}",
    '      - {key: example.com/ok, effect: Sometimes}',
  ].join('\n'),
);

const expectedFour = [
  `n.yaml:9:7 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["bad key"]: Invalid value: "bad key": ${nameMessage}`,
  `n.yaml:12:7 drydock/BaremetalNode/v1 "n1" data.metadata.annotations["ex ample.com/a"]: Invalid value: "ex ample.com/a": ${prefixMessage}`,
  `n.yaml:14:15 drydock/BaremetalNode/v1 "n1" data.metadata.taints[0].key: taint key Invalid value: "bad/taint/key": a valid label key ${nameMessage.replace('name part ', '')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
  'n.yaml:15:39 drydock/BaremetalNode/v1 "n1" data.metadata.taints[1].effect: taint effect must be one of NoSchedule, PreferNoSchedule, NoExecute',
];

describe('validation reports every error of every field at once', () => {
  it('a node with a bad label key, annotation key and taint key, and an unknown taint effect: all four, each at its place', () => {
    assert.deepEqual(errorsOf([source('n.yaml', fourDefects)]), expectedFour);
  });

  it('staging a bucket reports the same four', () => {
    const result = validateDocumentsAlone([source('n.yaml', fourDefects)]);
    assert.ok(!result.ok);
    assert.deepEqual(result.errors.map(formatError), expectedFour);
  });

  it('a schema error in one field of a profile does not hide its other fields, nor the checks that need the policy', () => {
    const profile = profileDoc(
      'p1',
      [
        '  metadata:',
        '    tags: [fast disk, 7]',
        '    owner_data:',
        "      kubernetes.io/hostname: 'n1'",
        '      ok: -bad',
        '      numbers: 42',
        '    taints:',
        '      - {key: example.com/a, value: 3, effect: NoSchedule}',
        "      - {key: example.com/a, value: 'no', effect: NoSchedule}",
      ].join('\n'),
    );
    const messages = errorsOf([source('p.yaml', profile)]).map((e) => e.replace(/ \(e\.g\..*$/, ''));
    assert.deepEqual(messages, [
      `p.yaml:8:12 drydock/HostProfile/v1 "p1" data.metadata.tags[0]: tag "fast disk" cannot name generated label "tag.relabel.airshipit.org/fast disk": Invalid value: "tag.relabel.airshipit.org/fast disk": ${nameMessage.replace(/ \(e\.g\..*$/, '')}`,
      'p.yaml:8:23 drydock/HostProfile/v1 "p1" data.metadata.tags[1]: tag must be a string',
      'p.yaml:10:7 drydock/HostProfile/v1 "p1" data.metadata.owner_data["kubernetes.io/hostname"]: label "kubernetes.io/hostname" is owned by the kubelet; documents may not set it (relabel never writes or removes it)',
      `p.yaml:11:11 drydock/HostProfile/v1 "p1" data.metadata.owner_data.ok: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      'p.yaml:12:16 drydock/HostProfile/v1 "p1" data.metadata.owner_data.numbers: label values must be strings; quote it in YAML',
      'p.yaml:14:37 drydock/HostProfile/v1 "p1" data.metadata.taints[0].value: taint value must be a string; quote it in YAML',
      'p.yaml:15:15 drydock/HostProfile/v1 "p1" data.metadata.taints[1].key: taint "example.com/a:NoSchedule" is given twice (also at taints[0]); a node has one taint per key and effect',
    ]);
  });

  it('a node or profile failing its schema still has its references checked', () => {
    const errors = errorsOf([
      source(
        's.yaml',
        profileDoc('p1', '  host_profile: nowhere\n  colour: red'),
        nodeDoc('n1', '  host_profile: computee\n  metadata:\n    rack: r9\n    tags: 7'),
      ),
    ]);
    assert.deepEqual(errors, [
      's.yaml:7:17 drydock/HostProfile/v1 "p1" data.host_profile: host profile "nowhere" is not defined (no drydock/HostProfile/v1 document named "nowhere")',
      's.yaml:8:3 drydock/HostProfile/v1 "p1" data.colour: unknown field "colour"',
      's.yaml:15:17 drydock/BaremetalNode/v1 "n1" data.host_profile: host profile "computee" is not defined (no drydock/HostProfile/v1 document named "computee")',
      's.yaml:18:11 drydock/BaremetalNode/v1 "n1" data.metadata.tags: Invalid input: expected array, received number',
    ]);
  });

  it('a policy or plugin failing its schema still has its other fields checked', () => {
    const policy = policyDoc('p', {
      label_domain: 'label_domain: Labels.Example',
      protected_keys: "protected_keys: [7, 'bad key']",
      default_concurrency: 'default_concurrency: 0',
    });
    const plugin = yamlDoc('relabel/LabelPlugin/v1', 'Gpu', '  source: pipe\n  path: relative/gpu.sh\n  namespaces: [7, "a**"]');
    const errors = errorsOf([source('p.yaml', policy), source('q.yaml', plugin)]).map((e) => e.replace(/ \(e\.g\..*$/, ''));
    assert.deepEqual(errors, [
      'p.yaml:7:17 relabel/LabelPolicy/v1 "p" data.label_domain: Invalid value: "Labels.Example": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character',
      'p.yaml:9:20 relabel/LabelPolicy/v1 "p" data.protected_keys[0]: Invalid input: expected string, received number',
      `p.yaml:9:23 relabel/LabelPolicy/v1 "p" data.protected_keys[1]: Invalid value: "bad key": ${nameMessage.replace(/ \(e\.g\..*$/, '')}`,
      'p.yaml:12:24 relabel/LabelPolicy/v1 "p" data.default_concurrency: Too small: expected number to be >=1',
      `q.yaml:5:9 relabel/LabelPlugin/v1 "Gpu" metadata.name: a plugin name must be a DNS subdomain: Invalid value: "Gpu": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      'q.yaml:7:11 relabel/LabelPlugin/v1 "Gpu" data.source: source must be "json" or "exec"',
      'q.yaml:8:9 relabel/LabelPlugin/v1 "Gpu" data.path: "relative/gpu.sh": path must be absolute (start with "/")',
      'q.yaml:9:16 relabel/LabelPlugin/v1 "Gpu" data.namespaces[0]: each namespace must be a string',
      'q.yaml:9:19 relabel/LabelPlugin/v1 "Gpu" data.namespaces[1]: namespace "a**": "**" is not allowed; "*" already matches any run of characters other than "/"',
    ]);
  });

  it('a name given twice is reported though one of the documents failed its schema, in the site and in a bucket', () => {
    const sources = [source('a.yaml', nodeDoc('n1', '')), source('b.yaml', nodeDoc('n1', '  metadata:\n    taints: [{key: k, effect: Sometimes}]'))];
    const expected = [
      'a.yaml:5:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at b.yaml:5:9',
      'b.yaml:5:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at a.yaml:5:9',
      'b.yaml:8:31 drydock/BaremetalNode/v1 "n1" data.metadata.taints[0].effect: taint effect must be one of NoSchedule, PreferNoSchedule, NoExecute',
    ];
    assert.deepEqual(errorsOf(sources), expected);
    const alone = validateDocumentsAlone(sources);
    assert.ok(!alone.ok);
    assert.deepEqual(alone.errors.map(formatError), expected);
  });

  it('a rack with an unknown field still has its labels checked', () => {
    const rack = rackDoc('r1', { 'kubernetes.io/os': 'linux', 'good-key': 'bad value' }).replace('\ndata:\n', '\ndata:\n  colour: red\n');
    const errors = errorsOf([source('r.yaml', rack)]).map((e) => e.replace(/ \(e\.g\..*$/, ''));
    assert.deepEqual(errors, [
      'r.yaml:7:3 drydock/Rack/v1 "r1" data.colour: unknown field "colour"',
      'r.yaml:9:5 drydock/Rack/v1 "r1" data.labels["kubernetes.io/os"]: label "kubernetes.io/os" is owned by the kubelet; documents may not set it (relabel never writes or removes it)',
      `r.yaml:10:17 drydock/Rack/v1 "r1" data.labels["good-key"]: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    ]);
  });
});
