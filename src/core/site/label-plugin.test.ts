import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesNamespace, namespaceGlobErrors, pluginPathErrors } from './label-plugin.ts';
import { checkPluginOutput, MAX_OUTPUT_ERRORS } from './plugin-output.ts';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';

const pluginDoc = (name: string, body: string) => yamlDoc('relabel/LabelPlugin/v1', name, body);

describe('label plugin documents', () => {
  it('a valid site carries its plugins, defaults filled in, sorted by name', () => {
    const v = validateSite([
      source(
        's.yaml',
        nodeDoc('n1', ''),
        pluginDoc(
          'nics',
          '  source: exec\n  path: /opt/relabel/nics.sh\n  args: [--json]\n  namespaces: ["nic.example.com/*"]\n  timeout_seconds: 5\n  max_output_bytes: 4096',
        ),
        pluginDoc('gpu', '  source: json\n  path: /var/lib/relabel/gpu.json\n  namespaces: ["*.node.kubernetes.io/*", "gpu.example.com/*"]'),
      ),
    ]);
    assert.ok(v.ok, v.ok ? '' : v.errors.map(formatError).join('\n'));
    assert.deepEqual(v.design.plugins, [
      {
        name: 'gpu',
        source: 'json',
        path: '/var/lib/relabel/gpu.json',
        args: [],
        namespaces: ['*.node.kubernetes.io/*', 'gpu.example.com/*'],
        timeoutSeconds: 30,
        maxOutputBytes: 16 * 1024 * 1024,
      },
      {
        name: 'nics',
        source: 'exec',
        path: '/opt/relabel/nics.sh',
        args: ['--json'],
        namespaces: ['nic.example.com/*'],
        timeoutSeconds: 5,
        maxOutputBytes: 4096,
      },
    ]);
  });

  it('bad globs, paths, fields and duplicate names are errors naming document and field', () => {
    const v = validateSite([
      source(
        'p.yaml',
        nodeDoc('n1', ''),
        pluginDoc('a', '  source: exec\n  path: relative/run.exe\n  namespaces: ["bad glob/*", "a**/x", "Example.COM/*"]'),
        pluginDoc('b', '  source: json\n  path: /etc/../labels.yaml\n  args: [x]\n  namespaces: []'),
        pluginDoc('c', '  source: json\n  path: /l.json\n  namespaces: ["c.example.com/*"]'),
        pluginDoc('c', '  source: shell\n  path: /l.json\n  namespaces: ["c.example.com/*"]'),
      ),
    ]);
    assert.ok(!v.ok);
    const lines = v.errors.map(formatError);
    const has = (re: RegExp) =>
      assert.ok(
        lines.some((l) => re.test(l)),
        `expected ${re} in:\n${lines.join('\n')}`,
      );
    has(/relabel\/LabelPlugin\/v1 "a" data\.path: "relative\/run\.exe": path must be absolute/);
    has(/"a" data\.path: .*an exec plugin must have no extension or one of \.sh, \.bash, \.py, \.js, \.mjs \(got "\.exe"\)/);
    has(/"a" data\.namespaces\[0\]: namespace "bad glob\/\*": namespace glob may hold only/);
    has(/"a" data\.namespaces\[1\]: namespace "a\*\*\/x": "\*\*" is not allowed/);
    has(/"a" data\.namespaces\[2\]: namespace "Example\.COM\/\*": with "\*" taken as a letter, prefix part/);
    has(/"b" data\.namespaces: namespaces must list at least one glob/);
    has(/relabel\/LabelPlugin\/v1 "c" data\.source: source must be "json" or "exec"/);
  });

  it('duplicate plugin names are refused site-wide', () => {
    const v = validateSite([
      source('a.yaml', nodeDoc('n1', ''), pluginDoc('c', '  source: json\n  path: /l.json\n  namespaces: ["c.example.com/*"]')),
      source('b.yaml', pluginDoc('c', '  source: json\n  path: /m.json\n  namespaces: ["c.example.com/*"]')),
    ]);
    assert.ok(!v.ok);
    assert.equal(v.errors.filter((e) => /duplicate relabel\/LabelPlugin\/v1 "c"/.test(e.message)).length, 2);
  });

  it('paths: json files end in .json; exec files have a whitelisted extension or none', () => {
    assert.deepEqual(pluginPathErrors('exec', '/usr/local/bin/nic-labels'), []);
    assert.deepEqual(pluginPathErrors('exec', '/opt/x/run.py'), []);
    assert.equal(pluginPathErrors('exec', '/opt/x/run.rb').length, 1);
    assert.equal(pluginPathErrors('json', '/opt/x/labels.yaml').length, 1);
    assert.ok(pluginPathErrors('json', '/opt//x.json').some((m) => /normalised/.test(m)));
  });
});

describe('namespace globs', () => {
  it('"*" matches one or more characters other than "/"', () => {
    assert.ok(matchesNamespace('feature.node.kubernetes.io/cpu-avx', '*.node.kubernetes.io/*'));
    assert.ok(matchesNamespace('a.b.node.kubernetes.io/x', '*.node.kubernetes.io/*'));
    assert.ok(!matchesNamespace('node.kubernetes.io/x', '*.node.kubernetes.io/*'));
    assert.ok(!matchesNamespace('featureXnode.kubernetes.io/x', '*.node.kubernetes.io/*'), '"." is literal');
    assert.ok(matchesNamespace('example.com/gpu-a100', 'example.com/gpu-*'));
    assert.ok(!matchesNamespace('example.com/cpu', 'example.com/gpu-*'));
    assert.ok(!matchesNamespace('evil.com/x', 'feature.example.com/*'));
    assert.deepEqual(namespaceGlobErrors('feature.example.com/*'), []);
    assert.deepEqual(namespaceGlobErrors('gpu-*'), []);
  });
});

describe('plugin output, checked whole', () => {
  const plugin = { namespaces: ['feature.example.com/*'] };

  it('good output is kept as is, keys sorted, counted', () => {
    const out = checkPluginOutput('{"n1": {"feature.example.com/b": "2", "feature.example.com/a": "1"}, "n2": {}}', plugin);
    assert.deepEqual(out, { ok: true, labels: { n1: { 'feature.example.com/a': '1', 'feature.example.com/b': '2' }, n2: {} }, nodes: 2, labelCount: 2 });
  });

  it('any defect refuses everything, each defect named', () => {
    for (const [text, re] of [
      ['{"n1": ', /not valid JSON/],
      ['[1]', /must be a JSON object/],
      ['{"N_1": {}}', /node name "N_1"/],
      ['{"n1": {"other.example.com/x": "1"}}', /node "n1" label "other.example.com\/x": key is outside the plugin's namespaces \(feature\.example\.com\/\*\)/],
      ['{"n1": {"feature.example.com/x": 1}}', /value must be a string/],
      ['{"n1": {"feature.example.com/x": "has space"}}', /value "has space"/],
      ['{"n1": ["feature.example.com/x"]}', /labels must be an object/],
    ] as const) {
      const out = checkPluginOutput(text, plugin);
      assert.ok(!out.ok, text);
      assert.match(out.error, re);
    }
    const kubelet = checkPluginOutput('{"n1": {"kubernetes.io/hostname": "x"}}', { namespaces: ['kubernetes.io/*'] });
    assert.ok(!kubelet.ok && /owned by the kubelet/.test(kubelet.error));
    const guarded = checkPluginOutput('{"n1": {"feature.example.com/x": "1"}}', plugin, ['feature.example.com/']);
    assert.ok(!guarded.ok && /protected by the label policy/.test(guarded.error));
  });

  it('lists at most a bounded number of defects, counting all', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`n${i}`, { 'bad.example.com/x': 'v' }]));
    const out = checkPluginOutput(JSON.stringify(many), plugin);
    assert.ok(!out.ok);
    assert.equal(out.defectCount, 500);
    assert.equal(out.defects.length, MAX_OUTPUT_ERRORS);
    assert.match(out.error, /500 defect\(s\) \(480 more not listed\)/);
    assert.ok(out.error.length < 5000);
  });
});
