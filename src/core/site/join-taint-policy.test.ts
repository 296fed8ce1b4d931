import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UNINITIALIZED_TAINT_KEY } from '../plan/constants.ts';
import { formatError } from '../plan/site-error.ts';
import { joinTaintKeyOf, taintLiftOf } from '../plan/taints.ts';
import { nodeDoc, policyDoc, profileDoc, rackDoc, source } from '../../../test/kit/site/documents.ts';
import { DEFAULT_SITE_POLICY } from './label-policy.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

const STARTUP = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
const policyWith = (key: string) => policyDoc('p', { lift_uninitialized_taint: 'lift_uninitialized_taint: true', join_taint_key: `join_taint_key: ${key}` });
const tainted = (name: string, key: string) => nodeDoc(name, `  metadata:\n    rack: r1\n    taints:\n      - {key: ${key}, effect: NoSchedule}`);

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateSite(sources);
  assert.equal(result.ok, false, 'expected the site to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

describe("the label policy's join_taint_key", () => {
  it('defaults to relabel.airshipit.org/uninitialized, and names the taint a policy lifts', () => {
    assert.equal(joinTaintKeyOf(DEFAULT_SITE_POLICY), UNINITIALIZED_TAINT_KEY);
    assert.equal(taintLiftOf(DEFAULT_SITE_POLICY), false);
    const result = validateSite([source('s.yaml', policyWith(STARTUP), rackDoc('r1'), nodeDoc('n1', '  metadata:\n    rack: r1'))]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.equal(result.design.policy.joinTaintKey, STARTUP);
    assert.equal(taintLiftOf(result.design.policy), STARTUP);
    const named = validateSite([source('s.yaml', policyWith(UNINITIALIZED_TAINT_KEY), rackDoc('r1'))]);
    assert.ok(named.ok);
    assert.equal(named.design.policy.joinTaintKey, undefined, 'the default named is the default: the policy is as without it');
    assert.equal(taintLiftOf(named.design.policy), UNINITIALIZED_TAINT_KEY);
  });

  it('is refused, naming the document and field, when it is no taint key or a taint Kubernetes owns', () => {
    const bad = errorsOf([source('p.yaml', policyWith('"Not A Key"'))]);
    assert.equal(bad.length, 1);
    assert.match(
      bad[0] as string,
      /^p\.yaml:\d+:\d+ relabel\/LabelPolicy\/v1 "p" data\.join_taint_key: taint key Invalid value: "Not A Key": name part must consist/,
    );
    const system = errorsOf([source('p.yaml', policyWith('node.kubernetes.io/not-ready'))]);
    assert.deepEqual(
      system.map((e) => e.replace(/^p\.yaml:\d+:\d+ /, '')),
      [
        'relabel/LabelPolicy/v1 "p" data.join_taint_key: taint "node.kubernetes.io/not-ready" is set and lifted by Kubernetes itself; it cannot be relabel\'s join taint',
      ],
    );
    const typed = errorsOf([source('p.yaml', policyWith('[a]'))]);
    assert.match(typed.join('\n'), /data\.join_taint_key: .*expected string/);
  });

  it('may not be set by a document, nor may the default key, whichever the policy names', () => {
    const errors = errorsOf([
      source(
        's.yaml',
        policyWith(STARTUP),
        rackDoc('r1'),
        tainted('n1', STARTUP),
        profileDoc('pr', `  metadata:\n    taints:\n      - {key: ${STARTUP}, effect: NoExecute}`),
      ),
    ]);
    assert.deepEqual(
      errors.map((e) => e.replace(/^s\.yaml:\d+:\d+ /, '')).sort(),
      [
        `drydock/BaremetalNode/v1 "n1" data.metadata.taints[0].key: taint "${STARTUP}" is relabel's own join taint, lifted by the label policy; documents may not set it`,
        `drydock/HostProfile/v1 "pr" data.metadata.taints[0].key: taint "${STARTUP}" is relabel's own join taint, lifted by the label policy; documents may not set it`,
      ].sort(),
    );
    const defaultKey = errorsOf([source('s.yaml', policyWith(STARTUP), rackDoc('r1'), tainted('n1', UNINITIALIZED_TAINT_KEY))]);
    assert.equal(defaultKey.length, 1);
    assert.match(defaultKey[0] as string, /relabel's own join taint/);
    // Without the policy naming it, the autoscaler's prefix is anyone's taint.
    assert.ok(validateSite([source('s.yaml', rackDoc('r1'), tainted('n1', STARTUP))]).ok);
  });
});
