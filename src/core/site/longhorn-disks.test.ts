import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkDisksConfig, goCleanPath } from './longhorn-disks.ts';

// Each case: a rule as longhorn-manager v1.12 applies it, a value, and every defect relabel names.
const fields = 'name, path, diskType, diskDriver, allowScheduling, evictionRequested, storageReserved, tags';
const cases: [rule: string, value: string, errors: string[]][] = [
  ['D1 JSON syntax (UnmarshalToDisks)', '[{"path":"/mnt/a"},', ['is not valid JSON (Unexpected end of JSON input); Longhorn discards it (UnmarshalToDisks)']],
  [
    'D2 a JSON array of disks (UnmarshalToDisks)',
    '{"path":"/mnt/a"}',
    ['must be a JSON array of disks, not an object (Longhorn: UnmarshalToDisks reads it as a Go []DiskSpecWithName)'],
  ],
  ['D2 null is no disk (UnmarshalToDisks)', 'null', []],
  [
    'D2 each disk an object (UnmarshalToDisks)',
    '["/mnt/a"]',
    ['disks[0] must be an object, not "/mnt/a" (Longhorn: UnmarshalToDisks reads it as a Go DiskSpecWithName)'],
  ],
  ['D3 strings are strings (UnmarshalToDisks)', '[{"path":7}]', ['disks[0].path must be a string, not 7 (Longhorn: UnmarshalToDisks reads it as a Go string)']],
  [
    'D3 booleans are true or false (UnmarshalToDisks)',
    '[{"path":"/a","allowScheduling":"true"}]',
    ['disks[0].allowScheduling must be true or false, not "true" (Longhorn: UnmarshalToDisks reads it as a Go bool)'],
  ],
  [
    'D3 tags are an array of strings (UnmarshalToDisks)',
    '[{"path":"/a","tags":"ssd"}]',
    ['disks[0].tags must be a JSON array of tags, not "ssd" (Longhorn: UnmarshalToDisks reads it as a Go []string)'],
  ],
  ['D3 null is the zero value (UnmarshalToDisks)', '[{"path":"/a","name":null,"diskType":null,"allowScheduling":null,"storageReserved":null,"tags":null}]', []],
  [
    'D4 storageReserved has no exponent (UnmarshalToDisks, Go int64)',
    '[{"path":"/a","storageReserved":1e3}]',
    [
      'disks[0].storageReserved must be a whole number of bytes written without fraction or exponent, not 1e3 (Longhorn: UnmarshalToDisks reads it as a Go int64)',
    ],
  ],
  [
    'D4 storageReserved has no fraction, even .0 (UnmarshalToDisks, Go int64)',
    '[{"path":"/a","storageReserved":1024.0}]',
    [
      'disks[0].storageReserved must be a whole number of bytes written without fraction or exponent, not 1024.0 (Longhorn: UnmarshalToDisks reads it as a Go int64)',
    ],
  ],
  [
    'D4 storageReserved fits an int64 (UnmarshalToDisks, Go int64)',
    '[{"path":"/a","storageReserved":9223372036854775808}]',
    ['disks[0].storageReserved 9223372036854775808 does not fit a Go int64 (Longhorn: UnmarshalToDisks)'],
  ],
  [
    'D4 storageReserved is a number, not a string (UnmarshalToDisks, Go int64)',
    '[{"path":"/a","storageReserved":"1024"}]',
    ['disks[0].storageReserved must be a whole number, not "1024" (Longhorn: UnmarshalToDisks reads it as a Go int64)'],
  ],
  [
    'D4 storageReserved up to the int64 maximum (UnmarshalToDisks, Go int64)',
    '[{"path":"/a","storageReserved":9223372036854775807},{"path":"/b","storageReserved":-0}]',
    [],
  ],
  [
    'D5 field names spelled as Longhorn (relabel, stricter)',
    '[{"Path":"/a"}]',
    [`disks[0]: field "Path" is not spelled as Longhorn's "path" (relabel's rule, stricter than Longhorn, whose JSON reader ignores letter case)`],
  ],
  [
    'D5 unknown fields (relabel, stricter)',
    '[{"path":"/a","size":10}]',
    [`disks[0]: unknown field "size" (relabel's rule, stricter than Longhorn, which ignores it; Longhorn's fields are ${fields})`],
  ],
  [
    'D5 storageReservedPercentage is a setting (relabel, stricter)',
    '[{"path":"/a","storageReservedPercentage":10}]',
    [
      `disks[0]: unknown field "storageReservedPercentage" (relabel's rule, stricter than Longhorn, which ignores it; Longhorn's fields are ${fields}); the reserved percentage is the Longhorn setting storage-reserved-percentage-for-default-disk, applied when storageReserved is 0`,
    ],
  ],
  [
    'D6 a field given twice (relabel, stricter)',
    '[{"path":"/a","path":"/b"}]',
    [`disks[0]: field "path" is given twice (relabel's rule, stricter than Longhorn, which takes the last)`],
  ],
  [
    'D7 a path is required (CreateDisksFromAnnotation)',
    '[{"allowScheduling":true},{"path":""},null]',
    [
      'disks[0] has no path (Longhorn: CreateDisksFromAnnotation, "invalid disk")',
      'disks[1] has no path (Longhorn: CreateDisksFromAnnotation, "invalid disk")',
      'disks[2] is null, a disk without a path to Longhorn (Longhorn: CreateDisksFromAnnotation, "invalid disk")',
    ],
  ],
  [
    'D8 the path is absolute (relabel, stricter)',
    '[{"path":"var/lib/longhorn"},{"path":"0000:00:1e.0","diskType":"block"}]',
    [
      `disks[0].path must be an absolute path, not "var/lib/longhorn" (relabel's rule, stricter than Longhorn, which looks the path up on the host as written)`,
      `disks[1].path must be an absolute path, not "0000:00:1e.0" (relabel's rule, stricter than Longhorn, which looks the path up on the host as written)`,
    ],
  ],
  [
    'D8 the path is one Linux can stat (GetDiskStat)',
    `[{"path":"/a\\u0000b"},{"path":"/${'x'.repeat(4095)}"}]`,
    [
      'disks[0].path contains a NUL character, which no Linux path can (Longhorn: CreateDisksFromAnnotation cannot stat it)',
      "disks[1].path is longer than Linux's 4095 bytes (Longhorn: CreateDisksFromAnnotation cannot stat it)",
    ],
  ],
  [
    'D9 paths are unique (CreateDisksFromAnnotation)',
    '[{"path":"/mnt/a"},{"path":"/mnt/a"}]',
    ['disks[1].path "/mnt/a" is disks[0]\'s path; a node has one disk per path (Longhorn: CreateDisksFromAnnotation, validateNodeDiskPaths)'],
  ],
  [
    'D9 paths are unique once cleaned as filepath.Clean (validateNodeDiskPaths)',
    '[{"path":"/mnt/a"},{"path":"/mnt/a/"},{"path":"//mnt/./b/../a"}]',
    [
      `disks[1].path "/mnt/a/" is disks[0]'s path once cleaned (both are "/mnt/a"); a node has one disk per path (Longhorn: CreateDisksFromAnnotation, validateNodeDiskPaths)`,
      `disks[2].path "//mnt/./b/../a" is disks[0]'s path once cleaned (both are "/mnt/a"); a node has one disk per path (Longhorn: CreateDisksFromAnnotation, validateNodeDiskPaths)`,
    ],
  ],
  [
    'D10 storageReserved is not negative (CreateDisksFromAnnotation, node validator)',
    '[{"path":"/a","storageReserved":-1}]',
    ['disks[0].storageReserved must not be negative, not -1 (Longhorn: CreateDisksFromAnnotation and the node validator)'],
  ],
  [
    'D11 diskType is filesystem or block (Node CRD enum, node mutator)',
    '[{"path":"/a","diskType":"Block"},{"path":"/b","diskType":""},{"path":"/c","diskType":"filesystem"}]',
    ['disks[0].diskType must be "filesystem" or "block" (absent means filesystem), not "Block" (Longhorn: the Node CRD\'s enum)'],
  ],
  [
    "D12 diskDriver is one of Longhorn's (Node CRD enum)",
    '[{"path":"/dev/sdb","diskType":"block","diskDriver":"scsi"}]',
    ['disks[0].diskDriver must be one of "", "auto", "aio", "nvme", not "scsi" (Longhorn: the Node CRD\'s enum)'],
  ],
  [
    'D13 only a block disk takes a driver (node validator)',
    '[{"path":"/a","diskDriver":"aio"},{"path":"/dev/sdb","diskType":"block","diskDriver":"nvme"},{"path":"/dev/sdc","diskType":"block"}]',
    ['disks[0].diskDriver "aio" is given on a filesystem disk; only a block disk takes a driver (Longhorn: the node validator)'],
  ],
  [
    'D14 scheduling and eviction exclude each other (node validator)',
    '[{"path":"/a","allowScheduling":true,"evictionRequested":true},{"path":"/b","evictionRequested":true}]',
    ['disks[0] has allowScheduling and evictionRequested both true; Longhorn schedules nothing on a disk it evicts (Longhorn: the node validator)'],
  ],
  [
    'D15 names are unique (CreateDisksFromAnnotation)',
    '[{"name":"d","path":"/a"},{"name":"d","path":"/b"},{"name":"D","path":"/c"}]',
    ['disks[1].name "d" is also disks[0]\'s; each disk\'s name is unique on a node (Longhorn: CreateDisksFromAnnotation)'],
  ],
  [
    'D16 a name fits a JSON patch path (node mutator)',
    '[{"name":"ssd/1","path":"/a"},{"name":"a~1","path":"/b"},{"name":"q\\"","path":"/c"},{"name":"b\\\\","path":"/d"},{"name":"tab\\t","path":"/e"},{"name":"ok-é.1","path":"/f"}]',
    [
      'disks[0].name "ssd/1" contains "/", which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)',
      'disks[1].name "a~1" contains "~", which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)',
      'disks[2].name "q\\"" contains "\\"", which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)',
      'disks[3].name "b\\\\" contains "\\\\", which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)',
      'disks[4].name "tab\\t" contains "\\t", which breaks the JSON patch path /spec/disks/<name>/tags it is written into unescaped (Longhorn: the node mutator)',
    ],
  ],
  [
    'D17 disk tags as node tags (util.ValidateTags)',
    '[{"path":"/a","tags":["ssd","-x",7,"ssd"]}]',
    [
      "disks[0].tags[1]: tag \"-x\" is not a valid Longhorn tag: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') (Longhorn: util.ValidateTags, a Kubernetes qualified name)",
      'disks[0].tags[2] must be a string, not 7 (Longhorn: UnmarshalToDisks reads it as a Go []string)',
      'disks[0].tags[3]: tag "ssd" is listed twice (relabel\'s rule, stricter than Longhorn, which drops the repeat: util.ValidateTags)',
    ],
  ],
];

describe('Longhorn default disks: one case per rule', () => {
  for (const [rule, value, errors] of cases) {
    it(rule, () => assert.deepEqual(checkDisksConfig(value).errors, errors));
  }

  it("accepts Longhorn's documented example and every field with its type", () => {
    const example =
      '[{"path":"/mnt/disk1","allowScheduling":false},{"path":"/mnt/disk2","allowScheduling":false,"storageReserved":1024,"tags":["ssd","fast"]}]';
    assert.deepEqual(checkDisksConfig(example), { errors: [], disks: 2 });
    const full = [
      { name: 'd1', path: '/dev/sdb', diskType: 'block', diskDriver: 'auto', allowScheduling: true, evictionRequested: false, storageReserved: 0, tags: [] },
    ];
    assert.deepEqual(checkDisksConfig(JSON.stringify(full)), { errors: [], disks: 1 });
  });

  it('never throws, and every message is bounded whatever the value (property)', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 2000 }),
      fc.json({ maxDepth: 6 }),
      fc.array(fc.json({ maxDepth: 2 }).map((v) => `{"path":${v},"tags":${v},"name":${v}}`)).map((d) => `[${d.join(',')}]`),
    );
    fc.assert(
      fc.property(value, (text) => {
        for (const message of checkDisksConfig(text).errors) assert.ok(message.length < 2000, message);
      }),
    );
  });

  it('counts the disks listed, for the create-default-disk rule', () => {
    assert.equal(checkDisksConfig('[]').disks, 0);
    assert.equal(checkDisksConfig('null').disks, 0);
    assert.equal(checkDisksConfig('[{"path":"/a"},{"path":"/b"}]').disks, 2);
  });
});

// Absolute paths built of segments that Clean treats specially.
const segment = fc.constantFrom('', '.', '..', '...', 'a', 'b', 'longhorn', '.hidden', 'é');
const absolutePath = fc.array(segment, { maxLength: 8 }).map((parts) => `/${parts.join('/')}`);

describe('Longhorn disk paths: filepath.Clean equivalence (properties)', () => {
  it("goCleanPath is Node's posix.resolve on absolute paths, and idempotent", () => {
    fc.assert(
      fc.property(absolutePath, (path) => {
        assert.equal(goCleanPath(path), posix.resolve(path));
        assert.equal(goCleanPath(goCleanPath(path)), goCleanPath(path));
      }),
    );
  });

  it("goCleanPath follows Go's rules on relative paths", () => {
    const table: [string, string][] = [
      ['', '.'],
      ['.', '.'],
      ['a/..', '.'],
      ['../a', '../a'],
      ['a/../..', '..'],
      ['a//b/./', 'a/b'],
      ['/..', '/'],
    ];
    for (const [path, clean] of table) assert.equal(goCleanPath(path), clean, path);
  });

  it('two disks whose paths clean alike are refused; paths that clean apart are accepted', () => {
    fc.assert(
      fc.property(absolutePath, absolutePath, (a, b) => {
        const errors = checkDisksConfig(JSON.stringify([{ path: a }, { path: b }])).errors;
        const same = errors.some((e) => e.startsWith('disks[1].path') && e.includes("is disks[0]'s path"));
        assert.equal(same, goCleanPath(a) === goCleanPath(b));
      }),
    );
  });

  it('a trailing slash, a doubled slash, a /. or a x/.. never makes a second disk', () => {
    const alias = fc.tuple(absolutePath, fc.constantFrom('/', '//', '/.', '/x/..', '/./')).map(([path, tail]) => [path, `${path}${tail}`] as const);
    fc.assert(
      fc.property(alias, ([path, same]) => {
        assert.equal(checkDisksConfig(JSON.stringify([{ path }, { path: same }])).errors.length, 1);
      }),
    );
  });
});
