import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LONGHORN_CREATE_DEFAULT_DISK, LONGHORN_DISKS_CONFIG, LONGHORN_NODE_TAGS, longhornDefects, MAX_LONGHORN_DEFECTS } from './longhorn.ts';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, profileDoc, source } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';

const validDisks =
  '[{"path":"/var/lib/longhorn/d1","allowScheduling":false},{"path":"/var/lib/longhorn/d2","allowScheduling":true,"storageReserved":1024,"tags":["ssd","fast"]}]';
const noDisk = 'Longhorn would create no disk (Longhorn: syncDefaultDisks)';

// Each case: the create-default-disk rule as syncDefaultDisks applies it, the label and disks annotation, and the label's defect.
const labelCases: [rule: string, label: string, disks: string | undefined, defect: string | undefined][] = [
  ['L1 "true" needs no annotation', 'true', undefined, undefined],
  ['L1 the value in any letter case', 'TRUE', undefined, undefined],
  [
    'L1 only true or config',
    'yes',
    validDisks,
    'is "yes"; Longhorn knows only "true" and "config" (in any letter case) and ignores any other value (Longhorn: syncDefaultDisks)',
  ],
  [
    'L1 false is not a value Longhorn knows',
    'false',
    undefined,
    'is "false"; Longhorn knows only "true" and "config" (in any letter case) and ignores any other value (Longhorn: syncDefaultDisks)',
  ],
  ['L1 config with valid disks', 'config', validDisks, undefined],
  [
    'L2 config needs the disks annotation',
    'Config',
    undefined,
    `is "Config" but the node has no "node.longhorn.io/default-disks-config" annotation; ${noDisk}`,
  ],
  [
    'L3 config needs a valid disks annotation',
    'config',
    '[{"path":"/a","storageReserved":1e3}]',
    `is "config" but the node has an invalid "node.longhorn.io/default-disks-config" annotation; ${noDisk}`,
  ],
  ['L4 config needs a disk listed', 'CONFIG', '[]', `is "CONFIG" but the node's "node.longhorn.io/default-disks-config" annotation lists no disk; ${noDisk}`],
  ['L4 null lists no disk', 'config', 'null', `is "config" but the node's "node.longhorn.io/default-disks-config" annotation lists no disk; ${noDisk}`],
];

describe('Longhorn create-default-disk label: one case per rule', () => {
  for (const [rule, label, disks, defect] of labelCases) {
    it(rule, () => {
      const annotations: Record<string, string> = disks === undefined ? {} : { [LONGHORN_DISKS_CONFIG]: disks };
      const found = longhornDefects({ [LONGHORN_CREATE_DEFAULT_DISK]: label }, annotations).filter((d) => d.key === LONGHORN_CREATE_DEFAULT_DISK);
      assert.deepEqual(found, defect === undefined ? [] : [{ key: LONGHORN_CREATE_DEFAULT_DISK, message: defect }]);
    });
  }

  it('any letter case of config is config (property)', () => {
    const cased = fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }).map((upper) => [...'config'].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
    fc.assert(
      fc.property(cased, (value) =>
        assert.equal(longhornDefects({ [LONGHORN_CREATE_DEFAULT_DISK]: value }, { [LONGHORN_DISKS_CONFIG]: validDisks }).length, 0),
      ),
    );
  });
});

describe('longhornDefects on a node', () => {
  it('checks the annotations without the label, and nothing without Longhorn configuration', () => {
    assert.deepEqual(longhornDefects({}, {}), []);
    assert.deepEqual(longhornDefects({}, { [LONGHORN_DISKS_CONFIG]: validDisks, [LONGHORN_NODE_TAGS]: '["fast"]' }), []);
    assert.deepEqual(
      longhornDefects({}, { [LONGHORN_DISKS_CONFIG]: '[{"path":"/a"},{"path":"/a/"}]' }).map((d) => d.key),
      [LONGHORN_DISKS_CONFIG],
    );
  });

  it('lists at most MAX_LONGHORN_DEFECTS per annotation, then counts the rest', () => {
    const tags = JSON.stringify(Array.from({ length: 50 }, () => '-bad'));
    const defects = longhornDefects({}, { [LONGHORN_NODE_TAGS]: tags });
    assert.equal(defects.length, MAX_LONGHORN_DEFECTS + 1);
    assert.equal(defects.at(-1)?.message, `30 more defect(s) not listed (at most ${MAX_LONGHORN_DEFECTS} are)`);
  });
});

describe('Longhorn checks in site validation', () => {
  it('fails site validation naming the node, the annotation and each defect, grouped across nodes of a profile', () => {
    const storage =
      '  metadata:\n    owner_data:\n      node.longhorn.io/create-default-disk: config\n    annotations:\n' +
      `      node.longhorn.io/default-disks-config: '[{"path":"/mnt/missing","allowScheduling":false},'\n` +
      `      node.longhorn.io/default-node-tags: '["slow",".*invalid-tag"]'`;
    const result = validateSite([
      source('s.yaml', profileDoc('storage', storage), nodeDoc('n1', '  host_profile: storage'), nodeDoc('n2', '  host_profile: storage')),
    ]);
    assert.equal(result.ok, false);
    const errors = result.ok ? [] : result.errors.map(formatError);
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.equal(
      errors[0],
      's.yaml:9:7 drydock/HostProfile/v1 "storage" data.metadata.owner_data["node.longhorn.io/create-default-disk"]: label "node.longhorn.io/create-default-disk": is "config" but the node has an invalid "node.longhorn.io/default-disks-config" annotation; Longhorn would create no disk (Longhorn: syncDefaultDisks) on nodes "n1", "n2"',
    );
    assert.match(
      errors[1] ?? '',
      /^s\.yaml:11:7 .*annotations\["node\.longhorn\.io\/default-disks-config"\]: annotation "node\.longhorn\.io\/default-disks-config": is not valid JSON \(.*\); Longhorn discards it \(UnmarshalToDisks\) on nodes "n1", "n2"$/,
    );
    assert.match(
      errors[2] ?? '',
      /^s\.yaml:12:7 .*annotation "node\.longhorn\.io\/default-node-tags": tags\[1\]: tag "\.\*invalid-tag" is not a valid Longhorn tag: .* \(Longhorn: util\.ValidateTags, a Kubernetes qualified name\) on nodes "n1", "n2"$/,
    );
  });

  it("refuses a node's disks that Longhorn would discard (a path given twice but for a trailing /, 1e3 bytes), naming the node and the rule", () => {
    const profile = '  metadata:\n    owner_data: {}\n';
    const node =
      '  host_profile: base\n  metadata:\n    owner_data:\n      node.longhorn.io/create-default-disk: config\n    annotations:\n' +
      `      node.longhorn.io/default-disks-config: '[{"path":"/var/lib/longhorn"},{"path":"/var/lib/longhorn/","storageReserved":1e3}]'\n`;
    const result = validateSite([source('site.yaml', profileDoc('base', profile), nodeDoc('storage-7', node))]);
    assert.equal(result.ok, false);
    const errors = result.ok ? [] : result.errors.map(formatError);
    const at =
      'site.yaml:20:7 drydock/BaremetalNode/v1 "storage-7" data.metadata.annotations["node.longhorn.io/default-disks-config"]: annotation "node.longhorn.io/default-disks-config"';
    // Errors at one place are listed in message order.
    assert.deepEqual(errors, [
      'site.yaml:18:7 drydock/BaremetalNode/v1 "storage-7" data.metadata.owner_data["node.longhorn.io/create-default-disk"]: label "node.longhorn.io/create-default-disk": is "config" but the node has an invalid "node.longhorn.io/default-disks-config" annotation; Longhorn would create no disk (Longhorn: syncDefaultDisks) on node "storage-7"',
      `${at}: disks[1].path "/var/lib/longhorn/" is disks[0]'s path once cleaned (both are "/var/lib/longhorn"); a node has one disk per path (Longhorn: CreateDisksFromAnnotation, validateNodeDiskPaths) on node "storage-7"`,
      `${at}: disks[1].storageReserved must be a whole number of bytes written without fraction or exponent, not 1e3 (Longhorn: UnmarshalToDisks reads it as a Go int64) on node "storage-7"`,
    ]);
  });
});
