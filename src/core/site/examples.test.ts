// The sample sites under examples/. This test reads files (node:fs): it is a
// test of the core, not part of it, and the core itself stays free of I/O.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseNodeFilter, selectNodes } from './node-filter.ts';
import { formatError } from '../plan/site-error.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function readSite(name: string): SiteSource[] {
  const dir = new URL(`../../../examples/${name}/`, import.meta.url);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => ({ source: `${name}/${file}`, text: readFileSync(new URL(file, dir), 'utf8') }));
}

describe('examples/site', () => {
  const result = validateSite(readSite('site'));

  it('validates cleanly', () => {
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
  });

  it('has the advertised shape: 24 nodes, 5 host profiles, 3 racks, a site and a policy', () => {
    assert.ok(result.ok);
    const { design } = result;
    assert.equal(Object.keys(design.nodes).length, 24);
    assert.deepEqual(design.hostProfiles, ['base', 'compute', 'compute-dpdk', 'cp', 'storage']);
    assert.deepEqual(Object.keys(design.racks), ['cab23', 'cab24', 'cab25']);
    assert.equal(design.site, 'atl-lab1');
    assert.equal(design.policy.defaultConcurrency, 8);
    assert.ok(result.documents.some((d) => d.schema === 'deckhand/LayeringPolicy/v1'));
  });

  it('resolves a DPDK compute node through three levels, with deletions', () => {
    assert.ok(result.ok);
    assert.deepEqual(result.design.nodes['cab25-r720-16']?.labels, {
      fluentd: 'enabled',
      gpu: 'nvidia-t4',
      'hugepages-1gi': 'enabled',
      'network-fabric': 'fabric-2',
      'node-exporter': 'enabled',
      'node-role.kubernetes.io/worker': '',
      'openstack-compute-node': 'enabled',
      'openstack-libvirt': 'kernel',
      openvswitch: 'dpdk',
      'power-domain': 'pd-c',
      'datacenter-row': 'row-f',
      'relabel.airshipit.org/host-profile': 'compute-dpdk',
      'relabel.airshipit.org/rack': 'cab25',
      'relabel.airshipit.org/site': 'atl-lab1',
      'tag.relabel.airshipit.org/baremetal': 'true',
      'tag.relabel.airshipit.org/compute': 'true',
      'tag.relabel.airshipit.org/dpdk': 'true',
      'tag.relabel.airshipit.org/gpu': 'true',
      'tag.relabel.airshipit.org/monitored': 'true',
    });
  });

  it('selects the storage nodes of one rack with a Drydock filter', () => {
    assert.ok(result.ok);
    const filter = parseNodeFilter({
      filter_set_type: 'intersection',
      filter_set: [
        { filter_type: 'union', node_labels: { 'ceph-osd': 'enabled' } },
        { filter_type: 'union', rack_labels: { 'power-domain': 'pd-a' } },
      ],
    });
    assert.ok(filter.ok);
    assert.deepEqual(selectNodes(result.design, filter.filter).nodes, ['cab23-r720-17', 'cab23-r720-18']);
  });
});

describe('examples/broken-site', () => {
  it('reports all five defects at once, each at its place', () => {
    const result = validateSite(readSite('broken-site'));
    assert.equal(result.ok, false);
    const lines = result.ok ? [] : result.errors.map(formatError);
    assert.deepEqual(lines, [
      'broken-site/nodes.yaml:242:3 drydock/BaremetalNode/v1 "cab24-r720-13": Flow sequence in block collection must be sufficiently indented and end with a ]',
      'broken-site/nodes.yaml:410:17 drydock/BaremetalNode/v1 "cab25-r720-12" data.host_profile: host profile "computee" is not defined (no drydock/HostProfile/v1 document named "computee")',
      `broken-site/profiles.yaml:86:26 drydock/HostProfile/v1 "compute" data.metadata.owner_data["openstack-libvirt"]: Invalid value: "kernel mode": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      'broken-site/profiles.yaml:101:17 drydock/HostProfile/v1 "compute-dpdk" data.host_profile: host profile inheritance cycle: compute-dpdk -> compute-dpdk',
      'broken-site/racks.yaml:42:5 drydock/Rack/v1 "cab24" data.labels["topology.kubernetes.io/zone"]: label "topology.kubernetes.io/zone" is owned by the kubelet; documents may not set it (relabel never writes or removes it)',
    ]);
  });
});

describe('examples/plugins', () => {
  it('validates with the sample site and declares its two plugins', () => {
    const result = validateSite([...readSite('site'), ...readSite('plugins')]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.deepEqual(
      result.design.plugins?.map((p) => [p.name, p.source, p.namespaces]),
      [
        ['gpu-inventory', 'json', ['gpu.example.com/*']],
        ['nic-speeds', 'exec', ['nic.example.com/*']],
      ],
    );
  });
});

describe('examples/fleet-site', () => {
  const result = validateSite(readSite('fleet-site'));

  it('validates cleanly: no BaremetalNode, two node sets', () => {
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.deepEqual(Object.keys(result.design.nodes), []);
    assert.deepEqual(Object.keys(result.design.nodeSets ?? {}), ['capi-md-0', 'karpenter-gpu']);
    assert.equal(result.design.policy.maxNodeSetMembers, 500);
  });

  it('resolves the Karpenter set as a node: its profile, tags, taint, and its own labels credited to the set', () => {
    assert.ok(result.ok);
    const set = result.design.nodeSets?.['karpenter-gpu'];
    assert.deepEqual(set?.selector, {
      matchLabels: { 'karpenter.sh/nodepool': 'gpu' },
      matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['g5.2xlarge', 'g5.4xlarge'] }],
    });
    assert.equal(set?.labels['tag.relabel.example.com/gpu'], 'true');
    assert.equal(set?.labels['node-exporter'], 'enabled');
    assert.deepEqual(set?.labelSources['workload-class'], { kind: 'node_set', set: 'karpenter-gpu' });
    assert.deepEqual(set?.taints, [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }]);
  });
});
