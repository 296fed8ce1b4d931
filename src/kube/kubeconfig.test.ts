import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { compressionDisabled, KubeconfigError, loadKubeConfig } from './kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'relabel-kubeconfig-'));

/** Writes `text` to a file of `dir` and returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A kubeconfig's text: one cluster `c`, user `u`, context `x` (each part replaceable). */
function kubeconfig(parts: { cluster?: string; user?: string; context?: string; current?: string | null } = {}): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [${parts.cluster ?? '{name: c, cluster: {server: "https://127.0.0.1:6443"}}'}]`,
    `users: [${parts.user ?? '{name: u, user: {token: t}}'}]`,
    `contexts: [${parts.context ?? '{name: x, context: {cluster: c, user: u}}'}]`,
    ...(parts.current === null ? [] : [`current-context: ${parts.current ?? 'x'}`]),
  ].join('\n');
}

/** The message loading `path` throws, checking it is a KubeconfigError naming the file. */
function refusal(path: string, named = path): string {
  try {
    loadKubeConfig(path);
  } catch (err) {
    assert.ok(err instanceof KubeconfigError, String(err));
    assert.ok(err.message.startsWith(`kubeconfig ${named}: `), err.message);
    return err.message.slice(`kubeconfig ${named}: `.length);
  }
  assert.fail(`${path} loaded`);
}

describe('loadKubeConfig', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a good kubeconfig', () => {
    const kc = loadKubeConfig(file('good', kubeconfig()));
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
  });

  it('names the line and column of invalid YAML, without the parser snippet', () => {
    const defect = refusal(file('indent', 'apiVersion: v1\nkind: Config\n  clusters: []\n'));
    assert.equal(defect, 'invalid YAML at line 3, column 11: bad indentation of a mapping entry');
    assert.match(refusal(file('empty', '')), /^invalid YAML: .*empty/);
    assert.match(refusal(file('list', '- a\n- b\n')), /defines no clusters, users or contexts/);
  });

  it('says a file is missing, a directory, or unreadable', () => {
    assert.equal(refusal(join(dir, 'nope')), 'no such file');
    assert.equal(refusal(dir), 'the path is a directory, not a file');
  });

  it('names the missing current context, context, cluster or user, and what the file defines', () => {
    assert.equal(refusal(file('nocurrent', kubeconfig({ current: null }))), 'no current-context is set (contexts: "x")');
    assert.equal(refusal(file('unknowncurrent', kubeconfig({ current: 'prod' }))), 'current-context "prod" names no context in the file (contexts: "x")');
    assert.equal(
      refusal(file('nocluster', kubeconfig({ context: '{name: x, context: {cluster: prod, user: u}}' }))),
      'context "x" names cluster "prod", which is not defined (clusters: "c")',
    );
    assert.equal(
      refusal(file('nouser', kubeconfig({ context: '{name: x, context: {cluster: c, user: admin}}' }))),
      'context "x" names user "admin", which is not defined (users: "u")',
    );
    // A context without a user is anonymous: allowed.
    assert.ok(loadKubeConfig(file('anonymous', kubeconfig({ context: '{name: x, context: {cluster: c}}' }))));
  });

  it('refuses a server that is not an https URL and certificate files that do not exist', () => {
    assert.match(
      refusal(file('plainhttp', kubeconfig({ cluster: '{name: c, cluster: {server: "http://10.0.0.1:8080"}}' }))),
      /server "http:\/\/10\.0\.0\.1:8080" is plain HTTP/,
    );
    assert.match(refusal(file('noserver', kubeconfig({ cluster: '{name: c, cluster: {}}' }))), /clusters\[0\]\.cluster\.server is missing/);
    assert.equal(
      refusal(file('noca', kubeconfig({ cluster: '{name: c, cluster: {server: "https://h:6443", certificate-authority: ca.crt}}' }))),
      `cluster "c": certificate-authority ${join(dir, 'ca.crt')} does not exist`,
    );
    assert.match(
      refusal(file('nokey', kubeconfig({ user: '{name: u, user: {client-certificate: /no/cert.pem}}' }))),
      /^user "u": client-certificate \/no\/cert\.pem does not exist$/,
    );
    assert.match(refusal(file('notoken', kubeconfig({ user: '{name: u, user: {token-file: /no/token}}' }))), /^\/no\/token \(named in it\) does not exist$/);
  });

  it('merges a KUBECONFIG list as kubectl does, naming the file at fault', () => {
    const a = file('a', kubeconfig({ current: 'y', context: '{name: y, context: {cluster: c, user: u}}' }));
    const b = file('b', kubeconfig({ cluster: '{name: c, cluster: {server: "https://second:6443"}}' }));
    const kc = loadKubeConfig(`${a}${delimiter}${b}`);
    assert.equal(kc.getCurrentContext(), 'y');
    assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443', 'the first file to define a name wins');
    assert.deepEqual(
      kc.getContexts().map((c) => c.name),
      ['y', 'x'],
    );
    const bad = file('bad', 'a: b\n  c: d\n');
    assert.match(refusal(`${a}${delimiter}${bad}`, bad), /^invalid YAML at line 2/);
    assert.match(
      refusal(`${file('c', kubeconfig({ current: 'z' }))}${delimiter}${b}`, `${join(dir, 'c')}${delimiter}${b}`),
      /current-context "z" names no context/,
    );
  });

  it("reads the current cluster's disable-compression, from the file that defines the cluster", () => {
    const off = '{name: c, cluster: {server: "https://127.0.0.1:6443", disable-compression: true}}';
    assert.equal(compressionDisabled(loadKubeConfig(file('off', kubeconfig({ cluster: off })))), true);
    assert.equal(compressionDisabled(loadKubeConfig(file('on', kubeconfig()))), false);
    // Another cluster's field is not the current one's.
    const other = `${off.replace('name: c', 'name: d')}, {name: c, cluster: {server: "https://127.0.0.1:6443"}}`;
    assert.equal(compressionDisabled(loadKubeConfig(file('other', kubeconfig({ cluster: other })))), false);
    // Merged: the first file to define the cluster decides, as it decides the server.
    const first = file('first', kubeconfig());
    const second = file('second', kubeconfig({ cluster: off }));
    assert.equal(compressionDisabled(loadKubeConfig(`${first}${delimiter}${second}`)), false);
    assert.equal(compressionDisabled(loadKubeConfig(`${second}${delimiter}${first}`)), true);
  });

  it('bounds the message whatever the names', () => {
    const long = 'n'.repeat(10_000);
    const message = refusal(file('long', kubeconfig({ current: long })));
    assert.ok(message.length <= 300, String(message.length));
  });
});
