/**
 * Keystone tokens against a real Keystone (the pinned PyPI release, started
 * once for this file) and `relabel api` run as operators run it
 * (src/api/main.ts with --keystone-* flags and RELABEL_KEYSTONE_PASSWORD),
 * over the test stack: an admin_ucp user found relabel through the catalog
 * as Shipyard's client does and started a run recorded under its Keystone
 * name; read roles read and are refused writes; a token without a mapped
 * role is refused naming the roles; revoked and expired tokens are 401
 * (expired even when relabel had cached it); relabel gets a new service
 * token when Keystone revokes its own; a stopped Keystone is a 503 naming
 * it, while static tokens and recently validated tokens still work.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../stack/processes.ts';
import { keystoneEnv, registerAirship, startKeystone, type AirshipRegistration, type Keystone } from '../../stack/keystone.ts';
import type { IssuedToken } from '../../stack/keystone-admin.ts';
import { adminCore, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const MAIN = fileURLToPath(new URL('../../src/api/main.ts', import.meta.url));
/** Token lifetime in this Keystone: short, so one test can wait for a token to expire. */
const EXPIRY_SECONDS = 20;
const PASSWORD = 'keystone-test-password';
const STATIC = 'static-admin-token-for-tests';
const USERS = {
  operator: ['admin_ucp'],
  watcher: ['admin_ucp_viewer'],
  reader: ['reader'],
  stranger: ['not-a-relabel-role'],
} as const;

describe('Keystone tokens, validated by a real Keystone', () => {
  const prefix = `ks${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let keystone: Keystone;
  let registration: AirshipRegistration;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let api: ReturnType<typeof fork>;
  let base: string;
  /** Issued early and used once, so it is in relabel's cache when it expires. */
  let expiring: IssuedToken;

  const user = (name: keyof typeof USERS) => `${prefix}-${name}`;
  const tokenOf = async (name: keyof typeof USERS) => (await keystone.admin.issueToken({ username: user(name), password: PASSWORD, project: prefix })).token;
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-auth-token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
  };

  before(async () => {
    keystone = await startKeystone({ tokenExpirationSeconds: EXPIRY_SECONDS });
    console.log(`# keystone: up in ${keystone.startMs} ms`);
    const port = await freeLoopbackPort();
    base = `http://127.0.0.1:${port}`;
    registration = await registerAirship(keystone, base);
    for (const [name, roles] of Object.entries(USERS)) {
      await keystone.admin.ensureUser({ name: user(name as keyof typeof USERS), password: PASSWORD, project: prefix, roles });
    }
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    for (const name of site.nodes) await createNode(core, name);
    relabel = await startRelabel(url);
    const { RELABEL_KEYSTONE_URL, RELABEL_KEYSTONE_PASSWORD } = keystoneEnv(keystone, registration);
    api = fork(
      MAIN,
      [
        '--listen',
        `127.0.0.1:${port}`,
        '--log-level',
        'warn',
        '--keystone-url',
        RELABEL_KEYSTONE_URL ?? '',
        '--keystone-username',
        registration.serviceUser.username,
      ],
      {
        env: {
          ...process.env,
          RELABEL_STORE_URL: url,
          RELABEL_TASK_QUEUE: relabel.taskQueue,
          RELABEL_API_TOKENS: `${STATIC}:admin:static-ops`,
          RELABEL_KEYSTONE_PASSWORD,
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      api.once('message', () => resolve());
      api.once('exit', (code) => reject(new Error(`relabel api exited with ${code}`)));
    });
    expiring = await keystone.admin.issueToken({ username: user('watcher'), password: PASSWORD, project: prefix });
    assert.equal((await call('GET', '/api/v1.0/revisions', expiring.token)).status, 200);
  });

  after(async () => {
    if (api && api.exitCode === null) {
      api.kill('SIGTERM');
      await new Promise((resolve) => api.once('exit', resolve));
    }
    await relabel?.stop();
    await keystone?.stop();
  });

  it("an admin_ucp user finds relabel in the catalog as Shipyard's client does, starts a run, and is recorded as who started it", async () => {
    const token = await tokenOf('operator');
    const catalog = (await (await fetch(`${keystone.url}/auth/catalog`, { headers: { 'x-auth-token': token } })).json()) as {
      catalog: { type: string; endpoints: { interface: string; url: string }[] }[];
    };
    const endpointOf = (type: string, iface: string) => catalog.catalog.find((s) => s.type === type)?.endpoints.find((e) => e.interface === iface)?.url;
    assert.equal(endpointOf('shipyard', 'public'), `${base}/api/v1.0`);
    assert.equal(endpointOf('physicalprovisioner', 'internal'), `${base}/api/v1.0`);

    const created = await fetch(`${endpointOf('shipyard', 'public')}/actions`, {
      method: 'POST',
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'update_labels', parameters: { target_nodes: site.nodes } }),
    });
    const action = (await created.json()) as { id: string; user: string; workflow_id: string; run_id: string };
    assert.equal(created.status, 201, JSON.stringify(action));
    assert.equal(action.user, user('operator'));
    const done = await relabel.runs.wait({ workflowId: action.workflow_id, runId: action.run_id });
    assert.deepEqual([done.startedBy, done.startedVia, done.result?.status], [user('operator'), 'api', 'success']);

    const view = await call('GET', `/api/v1.0/actions/${action.id}`, await tokenOf('watcher'));
    assert.equal(view.status, 200, view.text);
    assert.equal(view.json.user, user('operator'));
  });

  it('read roles (admin_ucp_viewer, reader) read, and get 403 on a write', async () => {
    for (const name of ['watcher', 'reader'] as const) {
      const token = await tokenOf(name);
      const listed = await call('GET', '/api/v1.0/actions', token);
      assert.equal(listed.status, 200, listed.text);
      assert.ok(Array.isArray(listed.json));
      const refused = await call('POST', '/api/v1.0/actions', token, { name: 'update_labels', parameters: { target_nodes: site.nodes } });
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.json.message, /a viewer token may only read: POST \/api\/v1\.0\/actions needs an admin token/);
    }
  });

  it('a token without a mapped role, or unscoped, is refused with 403 naming the roles that would do', async () => {
    const refused = await call('GET', '/api/v1.0/actions', await tokenOf('stranger'));
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.reason, 'Forbidden');
    assert.match(refused.json.message, new RegExp(`Keystone user ${user('stranger')} has roles not-a-relabel-role, none mapped to a relabel role`));
    assert.match(refused.json.message, /to read it needs one of reader, admin_ucp_viewer; to change, one of admin, admin_ucp/);

    const unscoped = await keystone.admin.issueToken({ username: user('operator'), password: PASSWORD });
    const refusedUnscoped = await call('GET', '/api/v1.0/actions', unscoped.token);
    assert.equal(refusedUnscoped.status, 403, refusedUnscoped.text);
    assert.match(refusedUnscoped.json.message, /has no roles \(an unscoped token\?\)/);
  });

  it('a revoked token and an unknown one are 401; static tokens still work beside Keystone', async () => {
    const token = await tokenOf('operator');
    await keystone.admin.revokeToken(token);
    const revoked = await call('GET', '/api/v1.0/actions', token);
    assert.equal(revoked.status, 401, revoked.text);
    assert.equal(revoked.json.reason, 'Unauthorized');
    assert.equal((await call('GET', '/api/v1.0/actions', `${token.slice(0, -4)}AAAA`)).status, 401);
    assert.equal((await call('GET', '/api/v1.0/actions', STATIC)).status, 200);
  });

  it("relabel gets a new service token when Keystone revokes its own (a password change revokes the user's tokens)", async () => {
    // A validation first, so relabel holds a service token far from its renewal time.
    assert.equal((await call('GET', '/api/v1.0/actions', await tokenOf('reader'))).status, 200);
    await keystone.admin.ensureUser({ ...registration.serviceUser, name: registration.serviceUser.username, roles: ['service'] });
    // Keystone's revocation events have a one-second resolution: a token issued in the same second counts as revoked.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const answer = await call('GET', '/api/v1.0/actions', await tokenOf('watcher'));
    assert.equal(answer.status, 200, answer.text);
  });

  it('an expired token is 401, though relabel had validated and cached it', async () => {
    const wait = expiring.expiresAt + 1_000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const expired = await call('GET', '/api/v1.0/revisions', expiring.token);
    assert.equal(expired.status, 401, expired.text);
    // relabel's own token has expired by now too: a fresh token still validates.
    assert.equal((await call('GET', '/api/v1.0/revisions', await tokenOf('watcher'))).status, 200);
  });

  it('with Keystone stopped: a new token is 503 naming Keystone; a token validated within the cache time and static tokens work', async () => {
    const cached = await tokenOf('operator');
    const fresh = await tokenOf('watcher');
    assert.equal((await call('GET', '/api/v1.0/actions', cached)).status, 200);
    await keystone.stop();
    const started = Date.now();
    const unavailable = await call('GET', '/api/v1.0/actions', fresh);
    assert.equal(unavailable.status, 503, unavailable.text);
    assert.equal(unavailable.json.reason, 'Unavailable');
    assert.match(
      unavailable.json.message,
      new RegExp(`^Keystone at ${keystone.url.replace(/[.]/g, '\\.')} did not answer: (GET|POST) /v3/auth/tokens\\?nocatalog: ECONNREFUSED$`),
    );
    assert.ok(Date.now() - started < 5_000, 'a refused connection is answered at once');
    assert.equal((await call('GET', '/api/v1.0/actions', cached)).status, 200);
    assert.equal((await call('GET', '/api/v1.0/actions', STATIC)).status, 200);
  });
});
