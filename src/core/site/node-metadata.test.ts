import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, profileDoc, source } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateSite(sources);
  assert.equal(result.ok, false, 'expected the site to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

describe('annotations and taints in documents', () => {
  it('reports every defect of annotation keys and taints at once, each at its key', () => {
    const body =
      "  metadata:\n    annotations:\n      'bad key': x\n      relabel.airshipit.org/owned-labels: a\n      '!ok.example/x': ''\n      ok.example/x: y\n" +
      "    taints:\n      - {key: node.kubernetes.io/not-ready, effect: NoExecute}\n      - {key: example.com/a, value: 'not valid', effect: NoSchedule}\n" +
      '      - {key: example.com/b}\n      - {key: example.com/c, effect: NoSchedule}\n      - {key: example.com/c, value: x, effect: NoSchedule}\n' +
      "      - {key: relabel.airshipit.org/uninitialized, effect: NoSchedule}\n      - {key: '!example.com/c', effect: NoSchedule}";
    const errors = errorsOf([source('n.yaml', nodeDoc('n1', body))]);
    const at = (prefix: string) => errors.filter((e) => e.startsWith(prefix));
    assert.equal(errors.length, 9, errors.join('\n'));
    assert.match(at('n.yaml:9:7 ')[0] ?? '', /data\.metadata\.annotations\["bad key"\]: Invalid value: "bad key": name part must consist/);
    assert.deepEqual(
      errors.filter((e) => !e.includes('Invalid value')),
      [
        'n.yaml:10:7 drydock/BaremetalNode/v1 "n1" data.metadata.annotations["relabel.airshipit.org/owned-labels"]: annotation "relabel.airshipit.org/owned-labels" is relabel\'s own record; documents may not set it',
        'n.yaml:11:7 drydock/BaremetalNode/v1 "n1" data.metadata.annotations["!ok.example/x"]: both "ok.example/x" and "!ok.example/x" are given; set the key or delete it, not both',
        'n.yaml:14:15 drydock/BaremetalNode/v1 "n1" data.metadata.taints[0].key: taint "node.kubernetes.io/not-ready" is set and lifted by Kubernetes itself; documents may not set it',
        'n.yaml:16:9 drydock/BaremetalNode/v1 "n1" data.metadata.taints[2]: taint "example.com/b" needs an effect (one of NoSchedule, PreferNoSchedule, NoExecute)',
        'n.yaml:18:15 drydock/BaremetalNode/v1 "n1" data.metadata.taints[4].key: taint "example.com/c:NoSchedule" is given twice (also at taints[3]); a node has one taint per key and effect',
        'n.yaml:19:15 drydock/BaremetalNode/v1 "n1" data.metadata.taints[5].key: taint "relabel.airshipit.org/uninitialized" is relabel\'s own join taint, lifted by the label policy; documents may not set it',
        'n.yaml:20:15 drydock/BaremetalNode/v1 "n1" data.metadata.taints[6].key: both "example.com/c:NoSchedule" and its deletion "!example.com/c" are given; set the taint or delete it, not both',
      ],
    );
    assert.match(at('n.yaml:15:37 ')[0] ?? '', /taints\[1\]\.value: taint value Invalid value: "not valid": a valid label must be/);
  });

  it('refuses an unknown taint effect', () => {
    const errors = errorsOf([source('n.yaml', nodeDoc('n1', '  metadata:\n    taints:\n      - {key: example.com/a, effect: Sometimes}'))]);
    assert.deepEqual(errors, [
      'n.yaml:9:38 drydock/BaremetalNode/v1 "n1" data.metadata.taints[0].effect: taint effect must be one of NoSchedule, PreferNoSchedule, NoExecute',
    ]);
  });

  it("refuses a node whose inherited annotations exceed Kubernetes' 256 KiB, counting relabel's records, once per node", () => {
    const half = 'x'.repeat(131_000);
    const errors = errorsOf([
      source(
        's.yaml',
        profileDoc('big', `  metadata:\n    annotations:\n      a.example/one: '${half}'`),
        nodeDoc('n1', `  host_profile: big\n  metadata:\n    annotations:\n      a.example/two: '${half}'`),
        nodeDoc('n2', '  host_profile: big'),
      ),
    ]);
    assert.deepEqual(errors, [
      's.yaml:14:3 drydock/BaremetalNode/v1 "n1" metadata.name: annotations take 262752 bytes with relabel\'s records; Kubernetes allows a node 262144 (keys and values) on node "n1"',
    ]);
  });
});
