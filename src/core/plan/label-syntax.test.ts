import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKubeletLabelKey, isProtectedLabelKey, KUBELET_LABEL_KEYS } from './label-keys.ts';
import { annotationKeyErrors, dns1123SubdomainErrors, labelKeyErrors, labelValueErrors, utf8Length } from './label-syntax.ts';

// Messages as k8s.io/apimachinery v0.36.3 produces them (note its double
// space before "or").
const nameRegex =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const prefixRegex =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const valueRegex =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('labelKeyErrors', () => {
  const valid = [
    'ceph-osd',
    'a',
    'A_b.c-9',
    'node-role.kubernetes.io/worker',
    'example.node-restriction.kubernetes.io/fips',
    `${'a'.repeat(253)}/${'b'.repeat(63)}`,
    'x'.repeat(63),
  ];
  for (const key of valid) {
    it(`accepts ${key.slice(0, 40)}`, () => assert.deepEqual(labelKeyErrors(key), []));
  }

  const cases: [string, string[]][] = [
    ['', ['name part must be non-empty', `name part ${nameRegex}`]],
    ['Ceph OSD', [`name part ${nameRegex}`]],
    ['-leading', [`name part ${nameRegex}`]],
    ['trailing.', [`name part ${nameRegex}`]],
    ['x'.repeat(64), ['name part must be no more than 63 bytes']],
    ['é', [`name part ${nameRegex}`]],
    ['/name', ['prefix part must be non-empty']],
    ['prefix/', ['name part must be non-empty', `name part ${nameRegex}`]],
    ['Example.com/name', [prefixRegex]],
    [`${'a'.repeat(254)}/name`, ['prefix part must be no more than 253 bytes']],
    ['a/b/c', [`a valid label key ${nameRegex} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]],
  ];
  for (const [key, expected] of cases) {
    it(`rejects ${JSON.stringify(key.slice(0, 40))} as Kubernetes does`, () => assert.deepEqual(labelKeyErrors(key), expected));
  }
});

describe('annotationKeyErrors', () => {
  // The API server lower-cases an annotation key (Go's strings.ToLower) before the label-key rule.
  const valid = [
    'Example.com/x',
    'EXAMPLE.COM/Name',
    `${'A'.repeat(253)}/${'b'.repeat(63)}`,
    // Go lower-cases the Kelvin sign to "k" and U+0130 to "i"; the key keeps them, the check sees ASCII.
    '\u212Aube.io/x',
    '\u0130o.example/x',
  ];
  for (const key of valid) {
    it(`accepts ${JSON.stringify(key.slice(0, 40))}`, () => assert.deepEqual(annotationKeyErrors(key), []));
  }
  const cases: [string, string[]][] = [
    ['Example .com/x', [prefixRegex]],
    [`${'A'.repeat(254)}/x`, ['prefix part must be no more than 253 bytes']],
    ['/x', ['prefix part must be non-empty']],
    ['x'.repeat(64), ['name part must be no more than 63 bytes']],
    ['\u212B.example/x', [prefixRegex]],
  ];
  for (const [key, expected] of cases) {
    it(`rejects ${JSON.stringify(key.slice(0, 40))} as Kubernetes does`, () => assert.deepEqual(annotationKeyErrors(key), expected));
  }
});

describe('labelValueErrors', () => {
  for (const value of ['', 'enabled', 'pd-a', '1.0', 'x'.repeat(63), 'A_b']) {
    it(`accepts ${JSON.stringify(value.slice(0, 20))}`, () => assert.deepEqual(labelValueErrors(value), []));
  }
  const cases: [string, string[]][] = [
    ['kernel mode', [valueRegex]],
    ['-x', [valueRegex]],
    ['x'.repeat(64), ['must be no more than 63 bytes']],
    ['a/b', [valueRegex]],
    // 32 two-byte characters are 64 bytes: too long, as Go's len() counts.
    ['é'.repeat(32), ['must be no more than 63 bytes', valueRegex]],
  ];
  for (const [value, expected] of cases) {
    it(`rejects ${JSON.stringify(value.slice(0, 20))}`, () => assert.deepEqual(labelValueErrors(value), expected));
  }
});

describe('dns1123SubdomainErrors and utf8Length', () => {
  it('accepts node names and rejects upper case', () => {
    assert.deepEqual(dns1123SubdomainErrors('cab23-r720-11'), []);
    assert.equal(dns1123SubdomainErrors('Cab23').length, 1);
  });
  it('counts UTF-8 bytes', () => {
    assert.equal(utf8Length('abc'), 3);
    assert.equal(utf8Length('é'), 2);
    assert.equal(utf8Length('€'), 3);
    assert.equal(utf8Length('😀'), 4);
  });
});

describe('special keys', () => {
  it('knows every kubelet-owned key, and only those', () => {
    for (const key of KUBELET_LABEL_KEYS) assert.equal(isKubeletLabelKey(key), true);
    assert.equal(isKubeletLabelKey('node-role.kubernetes.io/worker'), false);
    assert.equal(isKubeletLabelKey('node-restriction.kubernetes.io/fips'), false);
    assert.equal(KUBELET_LABEL_KEYS.length, 11);
  });
  it('matches protected entries exactly, or as a prefix when they end in /', () => {
    const entries = ['feature.node.kubernetes.io/', 'example.com/exact'];
    assert.equal(isProtectedLabelKey('feature.node.kubernetes.io/cpu-model', entries), true);
    assert.equal(isProtectedLabelKey('example.com/exact', entries), true);
    assert.equal(isProtectedLabelKey('example.com/exactly', entries), false);
    assert.equal(isProtectedLabelKey('sub.feature.node.kubernetes.io/x', entries), false);
  });
});
