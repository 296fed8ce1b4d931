/**
 * A generated site written in Deckhand's layers, for the rendering
 * benchmark: a layering policy (global, type, site), abstract global host
 * profiles, abstract type profiles layered onto them (merge), concrete site
 * profiles layered onto those (replace a section, merge the rest, one
 * substitution each), and BaremetalNodes each taking a value from a
 * common-addresses document by substitution (into a field relabel does not
 * read, through a pattern). The same site pre-rendered is what Deckhand
 * would hand Drydock: its rendered documents as plain documents.
 */
import { renderedDocuments } from '../src/core/site/render-site.ts';
import type { SiteSource } from '../src/core/site/yaml-source.ts';

const meta = (name: string, layer: string, extra: Record<string, unknown> = {}) => ({
  schema: 'metadata/Document/v1',
  name,
  layeringDefinition: { layer, ...((extra['layeringDefinition'] as object | undefined) ?? {}) },
  storagePolicy: 'cleartext',
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'layeringDefinition')),
});

function ownerData(prefix: string, count: number, i: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, k) => [`${prefix}-${k}.example.com/role`, `v${(i + k) % 7}`]));
}

const docText = (doc: unknown) => `---\n${JSON.stringify(doc)}\n`;

/** The layered site of `nodes` nodes over `profiles` host profiles, as YAML sources (one file per layer and kind). */
export function layeredSite(nodes: number, profiles: number): SiteSource[] {
  const policy = {
    schema: 'deckhand/LayeringPolicy/v1',
    metadata: { schema: 'metadata/Control/v1', name: 'layering-policy' },
    data: { layerOrder: ['global', 'type', 'site'] },
  };
  const region = { schema: 'drydock/Region/v1', metadata: meta('bench-site', 'site'), data: { tag_definitions: [], authorized_keys: [] } };
  const addresses = {
    schema: 'pegleg/CommonAddresses/v1',
    metadata: meta('common-addresses', 'site'),
    data: { dns: { servers: '10.0.0.1,10.0.0.2' }, ntp: { servers: ['10.0.0.3'] }, node_ports: { oob: '623' } },
  };
  const globals: unknown[] = [];
  const types: unknown[] = [];
  const sites: unknown[] = [];
  for (let i = 0; i < profiles; i++) {
    globals.push({
      schema: 'drydock/HostProfile/v1',
      metadata: meta(`p${i}-global`, 'global', { labels: { hosttype: `p${i}-global` }, layeringDefinition: { abstract: true } }),
      data: {
        oob: { type: 'ipmi', network: 'oob', account: 'root' },
        storage: { physical_devices: { sda: { labels: { bootdrive: 'true' }, partitions: [{ name: 'root', size: '30g', filesystem: { mountpoint: '/' } }] } } },
        interfaces: { pxe: { device_link: 'pxe', slaves: ['eno1'], networks: ['pxe'] } },
        platform: { image: 'bionic', kernel: 'hwe-16.04' },
        metadata: { owner_data: ownerData('global', 40, i) },
      },
    });
    types.push({
      schema: 'drydock/HostProfile/v1',
      metadata: meta(`p${i}-type`, 'type', {
        labels: { hosttype: `p${i}-type` },
        layeringDefinition: { abstract: true, parentSelector: { hosttype: `p${i}-global` }, actions: [{ method: 'merge', path: '.' }] },
      }),
      data: { platform: { kernel_params: { hugepages: '512' } }, metadata: { owner_data: ownerData('type', 10, i) } },
    });
    sites.push({
      schema: 'drydock/HostProfile/v1',
      metadata: meta(`p${i}`, 'site', {
        layeringDefinition: {
          parentSelector: { hosttype: `p${i}-type` },
          actions: [
            { method: 'replace', path: '.interfaces' },
            { method: 'merge', path: '.' },
          ],
        },
        substitutions: [{ src: { schema: 'pegleg/CommonAddresses/v1', name: 'common-addresses', path: '.node_ports.oob' }, dest: { path: '.oob.port' } }],
      }),
      data: {
        interfaces: { bond0: { device_link: 'data', slaves: ['enp3s0f0', 'enp3s0f1'], networks: ['oam', 'storage'] } },
        metadata: { owner_data: ownerData('site', 2, i) },
      },
    });
  }
  const baremetal = Array.from({ length: nodes }, (_, i) => ({
    schema: 'drydock/BaremetalNode/v1',
    metadata: meta(`node-${String(i).padStart(5, '0')}`, 'site', {
      substitutions: [
        { src: { schema: 'pegleg/CommonAddresses/v1', name: 'common-addresses', path: '.dns.servers' }, dest: { path: '.oob.dns', pattern: 'DNS' } },
      ],
    }),
    data: {
      host_profile: `p${i % profiles}`,
      oob: { address: `10.${(i >> 8) & 255}.${i & 255}.11`, dns: 'DNS' },
      addressing: [{ network: 'oob', address: `10.${(i >> 8) & 255}.${i & 255}.11` }],
      metadata: { rack: `rack${i % 20}`, tags: ['bench'], boot_mac: '52:54:00:00:00:01' },
    },
  }));
  return [
    { source: 'site/site.yaml', text: [policy, region, addresses].map(docText).join('') },
    { source: 'global/profiles.yaml', text: globals.map(docText).join('') },
    { source: 'type/profiles.yaml', text: types.map(docText).join('') },
    { source: 'site/profiles.yaml', text: sites.map(docText).join('') },
    { source: 'site/nodes.yaml', text: baremetal.map(docText).join('') },
  ];
}

/** The same site rendered, as plain documents: what Drydock reads from Deckhand. */
export function preRendered(sources: readonly SiteSource[]): SiteSource[] {
  const rendered = renderedDocuments(sources);
  if (!rendered.ok) throw new Error(`the layered bench site does not render: ${rendered.errors[0]?.message}`);
  const plain = rendered.documents.map((doc) => {
    const metadata = { ...(doc['metadata'] as Record<string, unknown>) };
    delete metadata['substitutions'];
    delete metadata['labels'];
    metadata['layeringDefinition'] = { layer: 'site' };
    return { ...doc, metadata };
  });
  return [{ source: 'rendered.yaml', text: plain.map(docText).join('') }];
}
