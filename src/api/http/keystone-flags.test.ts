import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_KEYSTONE_ROLES } from './keystone.ts';
import { keystoneOptions, loadTokens, type KeystoneFlags } from '../main.ts';

const flags: KeystoneFlags = {
  keystoneUrl: 'http://keystone:5000/v3',
  keystoneUsername: 'relabel',
  keystoneProject: 'service',
  keystoneUserDomain: 'Default',
  keystoneProjectDomain: 'Default',
  keystoneRoles: DEFAULT_KEYSTONE_ROLES,
  keystoneCacheSeconds: '60',
};

describe('relabel api --keystone-* flags', () => {
  it('are off without --keystone-url, and then static tokens are required', () => {
    assert.equal(keystoneOptions({ ...flags, keystoneUrl: undefined }, {}), undefined);
    assert.throws(() => loadTokens(undefined, {}), /no API tokens: .*or --keystone-url/);
    assert.deepEqual(loadTokens(undefined, {}, true), []);
  });

  it('take the password from the file (first line) before RELABEL_KEYSTONE_PASSWORD', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-ks-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'password');
    writeFileSync(file, 'from-file\nignored\n');
    const fromFile = keystoneOptions({ ...flags, keystonePasswordFile: file }, { RELABEL_KEYSTONE_PASSWORD: 'from-env' });
    assert.equal(fromFile?.password, 'from-file');
    const fromEnv = keystoneOptions(flags, { RELABEL_KEYSTONE_PASSWORD: 'from-env' });
    assert.deepEqual(
      { ...fromEnv, roles: [...(fromEnv?.roles ?? [])].length },
      {
        url: 'http://keystone:5000/v3',
        username: 'relabel',
        password: 'from-env',
        projectName: 'service',
        userDomainName: 'Default',
        projectDomainName: 'Default',
        roles: 4,
        cacheSeconds: 60,
      },
    );
  });

  it('refuse a missing password, a bad cache time or role map, naming the flag', () => {
    assert.throws(() => keystoneOptions(flags, {}), /--keystone-url needs relabel's service password/);
    const env = { RELABEL_KEYSTONE_PASSWORD: 'pw' };
    for (const bad of ['-1', '3601', '1.5', 'soon'])
      assert.throws(() => keystoneOptions({ ...flags, keystoneCacheSeconds: bad }, env), /--keystone-cache-seconds/);
    assert.throws(() => keystoneOptions({ ...flags, keystoneRoles: 'admin' }, env), /--keystone-roles: "admin"/);
  });
});
