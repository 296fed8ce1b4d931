/**
 * A site written in Deckhand's layers, on the real stack: global, type and
 * site documents staged as three buckets (as Shipyard's CLI uploads a
 * Pegleg site), committed, and relabelled through a Shipyard action; the
 * nodes carry what the layers mean (an abstract global profile's labels
 * through a type profile, a site profile's replace and merge, a
 * substitution from a common-addresses document), and the Deckhand API
 * answers the documents rendered.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { ActionView, CommitStatus } from '../../src/api/http/response-schemas.ts';
import { adminCore, type startRelabel, uniqueSuffix } from '../helpers.ts';
import { emptyStoreUrl, eventually, startApiAndWorker, type TestApi } from '../api-support.ts';

const prefix = `layer${uniqueSuffix()}`;
const nodes = [`${prefix}-cp1`, `${prefix}-w1`];

const doc = (schema: string, name: string, layer: string, data: unknown, metadata: Record<string, unknown> = {}) =>
  `---\n${JSON.stringify({ schema, metadata: { schema: 'metadata/Document/v1', name, layeringDefinition: { layer, ...(metadata['layering'] as object) }, storagePolicy: 'cleartext', ...metadata, layering: undefined }, data })}\n`;

const profile = 'drydock/HostProfile/v1';
const merge = [{ method: 'merge', path: '.' }];
const global =
  `---\n${JSON.stringify({ schema: 'deckhand/LayeringPolicy/v1', metadata: { schema: 'metadata/Control/v1', name: 'layering-policy' }, data: { layerOrder: ['global', 'type', 'site'] } })}\n` +
  doc(
    profile,
    'cp-global',
    'global',
    { interfaces: { pxe: {} }, metadata: { owner_data: { 'control-plane': 'enabled', 'ceph-mon': 'enabled', zone: 'global' } } },
    {
      labels: { hosttype: 'cp-global' },
      layering: { abstract: true },
    },
  ) +
  doc(
    profile,
    'worker-global',
    'global',
    { metadata: { owner_data: { 'openstack-compute-node': 'enabled' } } },
    { labels: { hosttype: 'worker-global' }, layering: { abstract: true } },
  );
const type = doc(
  profile,
  'cp-type',
  'type',
  { metadata: { owner_data: { 'ceph-mon': 'disabled', 'ucp-control-plane': 'enabled' } } },
  {
    labels: { hosttype: 'cp-type' },
    layering: { abstract: true, parentSelector: { hosttype: 'cp-global' }, actions: merge },
  },
);
const site =
  doc('drydock/Region/v1', `${prefix}-site`, 'site', { tag_definitions: [] }) +
  doc('pegleg/CommonAddresses/v1', 'common-addresses', 'site', { zone: { name: 'zone-b' } }) +
  doc(
    profile,
    'cp',
    'site',
    { interfaces: { bond0: {} }, metadata: { owner_data: {} } },
    {
      layering: { parentSelector: { hosttype: 'cp-type' }, actions: [{ method: 'replace', path: '.interfaces' }, ...merge] },
      substitutions: [
        { src: { schema: 'pegleg/CommonAddresses/v1', name: 'common-addresses', path: '.zone.name' }, dest: { path: '.metadata.owner_data.zone' } },
      ],
    },
  ) +
  doc(
    profile,
    'worker',
    'site',
    { metadata: { owner_data: { 'sriov-nic': 'enabled' } } },
    { layering: { parentSelector: { hosttype: 'worker-global' }, actions: merge } },
  ) +
  doc('drydock/BaremetalNode/v1', nodes[0] as string, 'site', { host_profile: 'cp', metadata: { rack: 'cab23' } }) +
  doc('drydock/BaremetalNode/v1', nodes[1] as string, 'site', { host_profile: 'worker', metadata: { rack: 'cab23' } });

describe('a layered site in three buckets, on the real stack', () => {
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;

  before(async () => {
    ({ worker, api } = await startApiAndWorker(emptyStoreUrl(), nodes, {}));
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('stages each layer, commits, relabels the nodes as the layers mean, and answers the documents rendered', async () => {
    for (const [bucket, body] of [
      ['global', global],
      ['type', type],
      ['site', site],
    ]) {
      const staged = await api.call('POST', `/api/v1.0/configdocs/${bucket}`, { body });
      assert.equal(staged.status, 201, staged.text);
    }
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs');
    assert.equal(commit.status, 200, commit.text);
    const revision = CommitStatus.parse(commit.json).revision.id;
    assert.equal((await api.call('POST', `/api/v1.0/revisions/${revision}/tags/site-action-success`)).status, 201);

    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { target_nodes: nodes.join(',') } } });
    assert.equal(created.status, 201, created.text);
    const location = created.headers.get('location') ?? '';
    const action = await eventually(
      async () => ActionView.parse((await api.call('GET', location)).json),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
      60_000,
      200,
    );
    assert.equal(action.action_lifecycle, 'Complete', JSON.stringify(action.result));

    const labels = async (name: string) => (await adminCore().readNode({ name })).metadata?.labels ?? {};
    const cp = await labels(nodes[0] as string);
    assert.equal(cp['control-plane'], 'enabled', 'from the abstract global profile, through the type profile');
    assert.equal(cp['ceph-mon'], 'disabled', 'the type layer overrides the global one');
    assert.equal(cp['ucp-control-plane'], 'enabled');
    assert.equal(cp['zone'], 'zone-b', 'substituted from the common-addresses document');
    assert.equal(cp['relabel.airshipit.org/host-profile'], 'cp');
    const w = await labels(nodes[1] as string);
    assert.equal(w['openstack-compute-node'], 'enabled');
    assert.equal(w['sriov-nic'], 'enabled');
    assert.equal(w['control-plane'], undefined);

    const rendered = await api.call('GET', `/api/v1.0/revisions/${revision}/rendered-documents`);
    assert.equal(rendered.status, 200, rendered.text);
    const docs = parseAllDocuments(rendered.text).map((d) => d.toJS() as { schema: string; metadata: { name: string }; data: { interfaces?: unknown } });
    const names = docs.map((d) => d.metadata.name);
    assert.ok(!names.includes('cp-global') && !names.includes('cp-type'), 'abstract documents are not answered');
    assert.deepEqual(docs.find((d) => d.metadata.name === 'cp')?.data.interfaces, { bond0: {} }, 'the site profile replaced the interfaces');
  });
});
