import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { disksConfigErrors, longhornDefects, MAX_LONGHORN_DEFECTS, nodeTagsErrors } from './longhorn.ts';
import { formatError } from './site-error.ts';
import { nodeDoc, profileDoc, source } from './testing.ts';
import { validateSite } from './validate-site.ts';

const validDisks = '[{"path":"/var/lib/longhorn/d1","allowScheduling":false},{"path":"/var/lib/longhorn/d2","allowScheduling":true,"storageReserved":1024,"tags":["ssd","fast"]}]';

describe('Longhorn node tags', () => {
  it('accepts a JSON array of valid, distinct tags', () => {
    assert.deepEqual(nodeTagsErrors('["fast","storage"]'), []);
    assert.deepEqual(nodeTagsErrors('[]'), []);
  });

  it('refuses an invalid tag, a duplicate, a non-string, a non-array and bad JSON', () => {
    const [invalid, ...rest] = nodeTagsErrors('["slow",".*invalid-tag","slow",7]');
    assert.match(invalid ?? '', /^tags\[1\]: tag "\.\*invalid-tag" is not a valid Longhorn tag: name part must consist of alphanumeric/);
    assert.deepEqual(rest, ['tags[2]: tag "slow" is listed twice', 'tags[3] must be a string, not 7']);
    assert.deepEqual(nodeTagsErrors('{"a":1}'), ['tags must be a JSON array of tags, not an object']);
    assert.match(nodeTagsErrors('["slow"')[0] ?? '', /^is not valid JSON \(/);
  });
});

describe('Longhorn default disks', () => {
  it("accepts the documented example and every Longhorn field with Longhorn's types", () => {
    assert.deepEqual(disksConfigErrors(validDisks), []);
    const full = [{ name: 'd1', path: '/dev/sdb', diskType: 'block', diskDriver: 'auto', allowScheduling: true, evictionRequested: false, storageReserved: 0, tags: [] }];
    assert.deepEqual(disksConfigErrors(JSON.stringify(full)), []);
    assert.deepEqual(disksConfigErrors('[{"path":"0000:00:1e.0","diskType":"block","diskDriver":"nvme"}]'), []);
  });

  it('names every defect: types, absolute and unique paths, unique names, unknown fields, tags', () => {
    const disks = [
      { path: 'relative/dir', allowScheduling: 'yes' },
      { path: '/mnt/a', storageReserved: -1, tags: ['ok', '.*bad'] },
      { path: '/mnt/a', storageReserved: 1.5, name: 'x', size: 10 },
      { name: 'x', path: '/mnt/b', diskType: 'tape', diskDriver: 'scsi' },
      { allowScheduling: true },
      'not a disk',
    ];
    const errors = disksConfigErrors(JSON.stringify(disks));
    assert.deepEqual(errors.filter((e) => !e.includes('not a valid Longhorn tag')), [
      'disks[0].path must be an absolute path, not "relative/dir"',
      'disks[0].allowScheduling must be a boolean (true or false), not "yes"',
      'disks[1].storageReserved must be a non-negative whole number of bytes, not -1',
      'disks[2].storageReserved must be a non-negative whole number of bytes, not 1.5',
      "disks[2]: unknown field \"size\" (Longhorn's are name, path, diskType, diskDriver, allowScheduling, evictionRequested, storageReserved, tags)",
      'disks[2].path "/mnt/a" is also disks[1]\'s; each disk\'s path is unique on a node',
      'disks[3].diskType must be one of "filesystem", "block", not "tape"',
      'disks[3].diskDriver must be one of "", "auto", "aio", "nvme", not "scsi"',
      'disks[3].name "x" is also disks[2]\'s; each disk\'s name is unique on a node',
      'disks[4].path is required, an absolute path',
      'disks[5] must be an object, not "not a disk"',
    ]);
    assert.equal(errors.filter((e) => e.startsWith('disks[1].tags[1]: tag ".*bad" is not a valid Longhorn tag')).length, 1);
  });

  it("refuses the seed's malformed list as JSON", () => {
    assert.match(disksConfigErrors('[{"path":"/mnt/missing","allowScheduling":false},')[0] ?? '', /^is not valid JSON \(/);
  });
});

describe('longhornDefects on a node', () => {
  it('requires a valid disks annotation when create-default-disk is config', () => {
    const label = { 'node.longhorn.io/create-default-disk': 'config' };
    assert.deepEqual(longhornDefects(label, {}), [
      { key: 'node.longhorn.io/create-default-disk', message: 'is "config" but the node has no "node.longhorn.io/default-disks-config" annotation; Longhorn would create no disk' },
    ]);
    assert.deepEqual(longhornDefects(label, { 'node.longhorn.io/default-disks-config': validDisks }), []);
    assert.deepEqual(longhornDefects({ 'node.longhorn.io/create-default-disk': 'true' }, {}), []);
    const bad = longhornDefects(label, { 'node.longhorn.io/default-disks-config': '[1]' });
    assert.deepEqual(bad.map((d) => d.key), ['node.longhorn.io/default-disks-config', 'node.longhorn.io/create-default-disk']);
  });

  it('lists at most MAX_LONGHORN_DEFECTS per annotation, then counts the rest', () => {
    const tags = JSON.stringify(Array.from({ length: 50 }, () => '-bad'));
    const defects = longhornDefects({}, { 'node.longhorn.io/default-node-tags': tags });
    assert.equal(defects.length, MAX_LONGHORN_DEFECTS + 1);
    assert.equal(defects.at(-1)?.message, `30 more defect(s) not listed (at most ${MAX_LONGHORN_DEFECTS} are)`);
  });

  it('fails site validation naming the node, the annotation and each defect, grouped across nodes of a profile', () => {
    const storage =
      "  metadata:\n    owner_data:\n      node.longhorn.io/create-default-disk: config\n    annotations:\n" +
      `      node.longhorn.io/default-disks-config: '[{"path":"/mnt/missing","allowScheduling":false},'\n` +
      `      node.longhorn.io/default-node-tags: '["slow",".*invalid-tag"]'`;
    const result = validateSite([source('s.yaml', profileDoc('storage', storage), nodeDoc('n1', '  host_profile: storage'), nodeDoc('n2', '  host_profile: storage'))]);
    assert.equal(result.ok, false);
    const errors = result.ok ? [] : result.errors.map(formatError);
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.equal(
      errors[0],
      's.yaml:9:7 drydock/HostProfile/v1 "storage" data.metadata.owner_data["node.longhorn.io/create-default-disk"]: label "node.longhorn.io/create-default-disk": is "config" but the node has an invalid "node.longhorn.io/default-disks-config" annotation; Longhorn would create no disk on nodes "n1", "n2"',
    );
    assert.match(errors[1] ?? '', /^s\.yaml:11:7 .*annotations\["node\.longhorn\.io\/default-disks-config"\]: annotation "node\.longhorn\.io\/default-disks-config": is not valid JSON \(.*\) on nodes "n1", "n2"$/);
    assert.match(errors[2] ?? '', /^s\.yaml:12:7 .*annotation "node\.longhorn\.io\/default-node-tags": tags\[1\]: tag "\.\*invalid-tag" is not a valid Longhorn tag: .* on nodes "n1", "n2"$/);
  });
});
