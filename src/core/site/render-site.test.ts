import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatError } from '../plan/site-error.ts';
import { planLabels } from '../plan/label-plan.ts';
import { formatLabelSource } from './label-provenance.ts';
import { renderedDocuments } from './render-site.ts';
import { validateSite } from './validate-site.ts';
import { validateDocumentsAlone } from './validate-documents.ts';

const policy =
  '---\nschema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: layering-policy}\ndata: {layerOrder: [global, type, site]}\n';
const globalProfile = `---
schema: drydock/HostProfile/v1
metadata:
  schema: metadata/Document/v1
  name: cp-global
  labels: {hosttype: cp-global}
  layeringDefinition: {abstract: true, layer: global}
  storagePolicy: cleartext
data:
  interfaces: {pxe: {}}
  metadata:
    owner_data:
      control-plane: enabled
      ceph-mon: enabled
`;
const siteProfile = (extra = '') => `---
schema: drydock/HostProfile/v1
metadata:
  schema: metadata/Document/v1
  name: cp
  layeringDefinition:
    layer: site
    parentSelector: {hosttype: cp-global}
    actions:
      - {method: replace, path: .interfaces}
      - {method: merge, path: .}
  storagePolicy: cleartext
data:
  interfaces: {bond0: {}}
  metadata:
    owner_data:
      openstack-l3-agent: enabled
${extra}`;
const node = `---
schema: drydock/BaremetalNode/v1
metadata:
  schema: metadata/Document/v1
  name: n1
  layeringDefinition: {layer: site}
  storagePolicy: cleartext
data:
  host_profile: cp
`;

describe('a layered site, rendered before it is read', () => {
  it("gives a node its layered profile's labels, each credited to the document that wrote it", () => {
    const result = validateSite([
      { source: 'global/profiles.yaml', text: policy + globalProfile },
      { source: 'site/profiles.yaml', text: siteProfile() + node },
    ]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    const n1 = result.design.nodes['n1'];
    assert.deepEqual(n1?.ownerData, { 'ceph-mon': 'enabled', 'control-plane': 'enabled', 'openstack-l3-agent': 'enabled' });
    assert.equal(formatLabelSource(n1?.labelSources['control-plane'] ?? { kind: 'node' }), 'host profile cp ← cp-global (global) (depth 1)');
    assert.equal(formatLabelSource(n1?.labelSources['openstack-l3-agent'] ?? { kind: 'node' }), 'host profile cp (depth 1)');
    assert.deepEqual(result.design.hostProfiles, ['cp'], 'the abstract parent is no host profile of the design');
  });

  it('credits a change to a global document, on every node it reaches, to that document', () => {
    const site = (global: string) =>
      validateSite([
        { source: 'global/profiles.yaml', text: policy + global },
        { source: 'site/profiles.yaml', text: siteProfile() + node + node.replace('name: n1', 'name: n2') },
      ]);
    const before = site(globalProfile);
    const after = site(globalProfile.replace('ceph-mon: enabled', 'ceph-mon: disabled'));
    assert.ok(before.ok && after.ok);
    for (const name of ['n1', 'n2']) {
      const plan = planLabels({
        labels: before.design.nodes[name]?.labels ?? {},
        annotations: {},
        desired: after.design.nodes[name]?.labels ?? {},
        policy: after.design.policy,
      });
      assert.deepEqual(plan.set, { 'ceph-mon': 'disabled' });
      assert.equal(formatLabelSource(after.design.nodes[name]?.labelSources['ceph-mon'] ?? { kind: 'node' }), 'host profile cp ← cp-global (global) (depth 1)');
    }
  });

  it('refuses a site that does not render, naming the file, document and field, and nothing else', () => {
    const broken = siteProfile().replace('path: .interfaces', 'path: .storage');
    const result = validateSite([{ source: 'all.yaml', text: policy + globalProfile + broken + node }]);
    assert.equal(result.ok, false);
    assert.deepEqual(result.ok ? [] : result.errors.map(formatError), [
      'all.yaml:28:9 drydock/HostProfile/v1 "cp" metadata.layeringDefinition.actions[0]: replace .storage: this document has nothing at that path (layering onto [drydock/HostProfile/v1, global] "cp-global")',
    ]);
  });

  it('stages a layered document on its own by its envelope and layering fields only', () => {
    assert.deepEqual(validateDocumentsAlone([{ source: 's.yaml', text: siteProfile() }]), { ok: true, documents: 1 });
    const bad = validateDocumentsAlone([{ source: 's.yaml', text: siteProfile().replace('method: merge', 'method: copy') }]);
    assert.deepEqual(bad.ok ? [] : bad.errors.map(formatError), [
      's.yaml:11:18 drydock/HostProfile/v1 "cp" metadata.layeringDefinition.actions[1].method: method must be one of merge, replace, delete',
    ]);
  });

  it('answers the rendered documents as Deckhand does: abstract ones left out, secret paths redacted', () => {
    const secret =
      '---\nschema: deckhand/Passphrase/v1\nmetadata: {schema: metadata/Document/v1, name: pw, layeringDefinition: {layer: site}, storagePolicy: encrypted}\ndata: s3cret\n';
    const chart = `---\nschema: armada/Chart/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: c\n  layeringDefinition: {layer: site}\n  storagePolicy: cleartext\n  substitutions:\n    - {src: {schema: deckhand/Passphrase/v1, name: pw, path: .}, dest: {path: .password}}\ndata: {mode: 0555}\n`;
    const result = renderedDocuments([{ source: 'x.yaml', text: policy + globalProfile + siteProfile() + secret + chart }], (p) => `hidden(${p})`);
    assert.ok(result.ok);
    const c = result.documents.find((d) => (d['metadata'] as { name: string }).name === 'c');
    assert.deepEqual(c?.['data'], { mode: 365, password: 's3cret' });
    assert.deepEqual((c?.['metadata'] as Record<string, unknown>)['substitutions'], [
      { src: { schema: 'deckhand/Passphrase/v1', name: 'pw', path: 'hidden(.)' }, dest: { path: 'hidden(.password)' } },
    ]);
    assert.equal((c?.['metadata'] as Record<string, unknown>)['storagePolicy'], 'encrypted');
    assert.deepEqual(
      result.documents.map((d) => (d['metadata'] as { name: string }).name),
      ['layering-policy', 'cp', 'pw', 'c'],
    );
  });
});
