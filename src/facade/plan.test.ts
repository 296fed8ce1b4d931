import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeDoc, policyDoc, profileDoc, rackDoc, source } from '../../test/kit/site/documents.ts';
import { validateSite } from '../core/site/validate-site.ts';
import { sourcedLabels } from './plan.ts';

describe("a planned node's desired labels with their sources", () => {
  const result = validateSite([
    source(
      'site.yaml',
      policyDoc('policy'),
      rackDoc('r1', { 'power-domain': 'pd-a' }),
      profileDoc('base', "  metadata:\n    rack: r1\n    owner_data:\n      x: '1'"),
      nodeDoc('n1', '  host_profile: base\n  metadata:\n    owner_data:\n      feature.example.com/doc: from-doc'),
    ),
  ]);
  assert.ok(result.ok);
  const { design } = result;

  it('credits a key a plugin gives to that plugin (the one sorting first), and leaves a key the documents give theirs', () => {
    const labels = sourcedLabels(design, 'n1', [
      { plugin: 'zeta', labels: { 'feature.example.com/gpu': 'z', 'feature.example.com/only-zeta': 'yes', 'feature.example.com/doc': 'other' } },
      { plugin: 'alpha', labels: { 'feature.example.com/gpu': 'a', 'power-domain': 'pd-a', x: '2' } },
    ]);
    assert.ok(labels);
    assert.deepEqual(labels['feature.example.com/gpu'], { value: 'a', source: { kind: 'plugin', plugin: 'alpha' } });
    assert.deepEqual(labels['feature.example.com/only-zeta'], { value: 'yes', source: { kind: 'plugin', plugin: 'zeta' } });
    assert.deepEqual(labels['feature.example.com/doc'], { value: 'from-doc', source: { kind: 'node' } }, 'the document wins with another value');
    assert.deepEqual(labels['power-domain'], { value: 'pd-a', source: { kind: 'rack', rack: 'r1' } }, 'and with the same value');
    assert.deepEqual(labels['x'], { value: '1', source: { kind: 'host_profile', profile: 'base', depth: 1 } });
    const plain = sourcedLabels(design, 'n1');
    assert.deepEqual(Object.keys(plain ?? {}), Object.keys(design.nodes['n1']?.labels ?? {}), "without plugins, the design's labels only");
    assert.equal(sourcedLabels(design, 'not-in-design', [{ plugin: 'alpha', labels: { 'feature.example.com/gpu': 'a' } }]), undefined);
  });
});
