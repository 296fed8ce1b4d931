import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createAuthenticator, createRequestAuthenticator, parseTokensEnv, parseTokensFile } from './auth.ts';

describe('API tokens', () => {
  it('reads a YAML or JSON tokens file', () => {
    const expected = [
      { token: 'admin-token-1', role: 'admin' },
      { token: 'viewer-token-1', role: 'viewer' },
    ];
    assert.deepEqual(parseTokensFile('- token: admin-token-1\n  role: admin\n- {token: viewer-token-1, role: viewer}\n'), expected);
    assert.deepEqual(parseTokensFile(JSON.stringify(expected)), expected);
  });

  it('reads token:role pairs, the role after the last colon', () => {
    assert.deepEqual(parseTokensEnv('a:b:c-token:admin, viewer-token:viewer'), [
      { token: 'a:b:c-token', role: 'admin' },
      { token: 'viewer-token', role: 'viewer' },
    ]);
  });

  it('reads token names (file: name; environment: token:role:name), and names an unnamed token by its place', () => {
    assert.deepEqual(parseTokensEnv('alice-token:admin:ops-alice,a:b:c-token:viewer,x:admin:y-token:viewer:bob@example.com'), [
      { token: 'alice-token', role: 'admin', name: 'ops-alice' },
      { token: 'a:b:c-token', role: 'viewer' },
      { token: 'x:admin:y-token', role: 'viewer', name: 'bob@example.com' },
    ]);
    assert.deepEqual(parseTokensFile('- {token: admin-token-1, role: admin, name: ops-alice}\n'), [
      { token: 'admin-token-1', role: 'admin', name: 'ops-alice' },
    ]);
    const callerOf = createAuthenticator([
      { token: 'admin-token-1', role: 'admin', name: 'ops-alice' },
      { token: 'viewer-token-1', role: 'viewer' },
    ]);
    assert.deepEqual(callerOf({ 'x-auth-token': 'admin-token-1' }), { role: 'admin', name: 'ops-alice' });
    assert.deepEqual(callerOf({ 'x-auth-token': 'viewer-token-1' }), { role: 'viewer', name: 'token-2' });
  });

  it('refuses bad configurations, naming the entry but never the token', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => parseTokensFile('[]'), /no API tokens configured/],
      [() => parseTokensFile('- {token: secret-token, role: root}'), /#0\.role/],
      [() => parseTokensFile('- {token: short, role: admin}'), /at least 8/],
      [() => parseTokensFile('- {token: secret-token, role: admin, extra: 1}'), /#0/],
      [() => parseTokensFile('- {token: secret-token, role: admin}\n- {token: secret-token, role: viewer}'), /more than once/],
      [() => parseTokensFile('{'), /not YAML or JSON/],
      [() => parseTokensEnv('secret-token'), /#0\.role/],
      [() => parseTokensEnv('secret-token:admin:bad name'), /#0\.name: a token name is letters/],
      [() => parseTokensFile('- {token: secret-token, role: admin, name: -x}'), /#0\.name/],
      [() => parseTokensEnv('secret-token:admin:alice,secret-token-2:viewer:alice'), /a token name is given more than once/],
      [() => parseTokensFile('- {token: secret-token, role: admin, name: token-2}\n- {token: secret-token-2, role: viewer}'), /name is given more than once/],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (err: Error) => message.test(err.message) && !err.message.includes('secret-token'));
    }
  });

  it('asks the verifier (Keystone) only for a presented token no static token matches', async () => {
    const asked: string[] = [];
    const authenticate = createRequestAuthenticator([{ token: 'admin-token-1', role: 'admin', name: 'ops' }], async (token) => {
      asked.push(token);
      return token === 'keystone-token' ? { role: 'viewer', name: 'alice' } : null;
    });
    assert.deepEqual(await authenticate({ 'x-auth-token': 'admin-token-1' }), { role: 'admin', name: 'ops' });
    assert.deepEqual(await authenticate({ authorization: 'Bearer keystone-token' }), { role: 'viewer', name: 'alice' });
    assert.equal(await authenticate({ 'x-auth-token': 'other-token' }), null);
    assert.equal(await authenticate({}), null);
    assert.deepEqual(asked, ['keystone-token', 'other-token']);
    assert.equal(await createRequestAuthenticator([{ token: 'admin-token-1', role: 'admin' }])({ 'x-auth-token': 'keystone-token' }), null);
  });

  it('accepts X-Auth-Token and Authorization: Bearer, nothing else', () => {
    const callerOf = createAuthenticator([
      { token: 'admin-token-1', role: 'admin' },
      { token: 'viewer-token-1', role: 'viewer' },
    ]);
    const roleOf = (headers: Record<string, string | string[] | undefined>) => callerOf(headers)?.role ?? null;
    assert.equal(roleOf({ 'x-auth-token': 'admin-token-1' }), 'admin');
    assert.equal(roleOf({ authorization: 'Bearer viewer-token-1' }), 'viewer');
    assert.equal(roleOf({ authorization: 'bearer  viewer-token-1' }), 'viewer');
    for (const headers of [
      {},
      { 'x-auth-token': '' },
      { 'x-auth-token': 'admin-token-2' },
      { 'x-auth-token': ['admin-token-1', 'admin-token-1'] },
      { authorization: 'Basic admin-token-1' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer admin-token-1 extra' },
      { authorization: 'admin-token-1' },
    ]) {
      assert.equal(roleOf(headers), null, JSON.stringify(headers));
    }
  });
});

describe('API tokens in the documentation', () => {
  const files = ['docs/cli.md', 'docs/deploy.md', 'docs/airship.md', 'docker-compose.yml'];
  const text = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

  it('every example of RELABEL_API_TOKENS is one relabel api accepts (placeholders with [ ] or … aside)', () => {
    const examples = files.flatMap((file) => [...text(file).matchAll(/RELABEL_API_TOKENS=([^\s`)]+)/g)].map((m) => [file, m[1] ?? ''] as const));
    const concrete = examples.filter(([, value]) => !/[[…$]/.test(value));
    assert.ok(concrete.length >= 3, concrete.join());
    for (const [file, value] of concrete) assert.doesNotThrow(() => parseTokensEnv(value), `${file}: ${value}`);
  });

  it('states the rule the old examples broke: a token of fewer than 8 characters is refused', () => {
    assert.throws(() => parseTokensEnv('secret:admin'), {
      message: 'invalid API tokens in RELABEL_API_TOKENS: #0.token: tokens must be at least 8 characters',
    });
    const describing = [
      ...files.filter((f) => f !== 'docs/airship.md' && f !== 'docs/cli.md'),
      'deploy/api.yaml',
      'deploy/helm/relabel/values.yaml',
      'deploy/helm/relabel/templates/NOTES.txt',
    ];
    for (const file of describing) assert.match(text(file), /at least 8/, file);
  });
});
