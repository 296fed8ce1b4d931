/**
 * The Keystone verifier's pure parts and its error mapping, against a small
 * HTTP server that answers as Keystone would (or fails as Keystone might).
 * That a real Keystone is understood is test/api/keystone-tokens.test.ts's work.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from './status.ts';
import { createKeystoneVerifier, DEFAULT_KEYSTONE_ROLES, keystoneBase, mappedRole, parseKeystoneRoles } from './keystone.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: ReturnType<typeof createServer>[] = [];
after(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/** A loopback server answering with `handler`; its URL ends in /v3 as operators give it. */
async function fakeKeystone(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
}

const expiresIn = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Answers service auth with `svc-token` and validation by `tokens` (subject → roles); counts the calls. */
function keystoneAnswering(tokens: Record<string, string[]>, calls: string[] = []): Handler {
  return (req, res) => {
    calls.push(`${req.method} ${req.headers['x-subject-token'] ?? ''}`);
    req.resume();
    if (req.method === 'POST') {
      res.writeHead(201, { 'x-subject-token': 'svc-token', 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: { expires_at: expiresIn(3_600_000), user: { name: 'relabel' } } }));
      return;
    }
    const roles = tokens[String(req.headers['x-subject-token'])];
    if (roles === undefined) {
      res.writeHead(404).end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token: { expires_at: expiresIn(3_600_000), user: { name: 'alice' }, roles: roles.map((name) => ({ name })) } }));
  };
}

const options = (url: string) => ({
  url,
  username: 'relabel',
  password: 'pw',
  projectName: 'service',
  userDomainName: 'Default',
  projectDomainName: 'Default',
  roles: parseKeystoneRoles(DEFAULT_KEYSTONE_ROLES),
  timeoutMs: 300,
});

/** The ApiError `promise` rejects with, checked for its type and message. */
async function rejectsWith(promise: Promise<unknown>, type: string, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => err instanceof ApiError && err.type === type && message.test(err.message));
}

describe('Keystone verifier', () => {
  it('parses role maps, refusing bad entries by name', () => {
    assert.deepEqual(
      [...parseKeystoneRoles(DEFAULT_KEYSTONE_ROLES)],
      [
        ['admin', 'admin'],
        ['admin_ucp', 'admin'],
        ['reader', 'viewer'],
        ['admin_ucp_viewer', 'viewer'],
      ],
    );
    assert.throws(() => parseKeystoneRoles('admin=root'), /--keystone-roles: "admin=root" is not keystoneRole=admin/);
    assert.throws(() => parseKeystoneRoles('a=admin,a=viewer'), /role a is mapped more than once/);
    assert.throws(() => parseKeystoneRoles(' , '), /no roles mapped/);
  });

  it('maps roles, admin over viewer', () => {
    const map = parseKeystoneRoles(DEFAULT_KEYSTONE_ROLES);
    assert.equal(mappedRole(['reader', 'admin_ucp'], map), 'admin');
    assert.equal(mappedRole(['member', 'reader'], map), 'viewer');
    assert.equal(mappedRole(['member'], map), undefined);
  });

  it('takes the URL with or without /v3', () => {
    assert.equal(keystoneBase('http://ks:5000/v3/'), 'http://ks:5000');
    assert.equal(keystoneBase('https://ks/identity'), 'https://ks/identity');
    assert.throws(() => keystoneBase('ks:5000'), /expected an http or https URL/);
    assert.throws(() => keystoneBase('not a url'), /not a URL/);
  });

  it('validates once per cache time, and coalesces requests presenting the same token at once', async () => {
    const calls: string[] = [];
    const verify = createKeystoneVerifier(options(await fakeKeystone(keystoneAnswering({ 'alice-token': ['admin_ucp'] }, calls))));
    const callers = await Promise.all([verify('alice-token'), verify('alice-token'), verify('alice-token')]);
    assert.deepEqual(callers, Array(3).fill({ role: 'admin', name: 'alice' }));
    assert.deepEqual(await verify('alice-token'), { role: 'admin', name: 'alice' });
    assert.deepEqual(calls, ['POST ', 'GET alice-token']);
    assert.equal(await verify('unknown-token'), null);
  });

  it('gets a new service token once when Keystone answers 401 to the one it holds', async () => {
    const calls: string[] = [];
    let issued = 0;
    const answer = keystoneAnswering({ 'alice-token': ['reader'] }, calls);
    const verify = createKeystoneVerifier(
      options(
        await fakeKeystone((req, res) => {
          if (req.method === 'POST') issued++;
          // The first service token is refused as a revoked one would be.
          if (req.method === 'GET' && issued === 1) {
            calls.push('GET refused');
            req.resume();
            res.writeHead(401).end('{}');
            return;
          }
          answer(req, res);
        }),
      ),
    );
    assert.deepEqual(await verify('alice-token'), { role: 'viewer', name: 'alice' });
    assert.deepEqual(calls, ['POST ', 'GET refused', 'POST ', 'GET alice-token']);
  });

  it('answers 403 naming the roles for a token without a mapped role', async () => {
    const verify = createKeystoneVerifier(options(await fakeKeystone(keystoneAnswering({ 'bob-token': ['member'] }))));
    await rejectsWith(
      verify('bob-token'),
      'Forbidden',
      /^Keystone user alice has roles member, none mapped .* one of reader, admin_ucp_viewer; to change, one of admin, admin_ucp$/,
    );
  });

  it('answers 503 naming Keystone when it is down, answers 5xx, or does not answer in time', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v3`;
    await new Promise((resolve) => closed.close(resolve));
    await rejectsWith(
      createKeystoneVerifier(options(down))('t-token'),
      'Unavailable',
      new RegExp(`^Keystone at ${down} did not answer: POST /v3/auth/tokens\\?nocatalog: ECONNREFUSED$`),
    );
    const failing = await fakeKeystone((req, res) => {
      req.resume();
      res.writeHead(502).end();
    });
    await rejectsWith(createKeystoneVerifier(options(failing))('t-token'), 'Unavailable', /did not answer: POST \/v3\/auth\/tokens\?nocatalog: HTTP 502$/);
    const silent = await fakeKeystone(() => {});
    const started = Date.now();
    await rejectsWith(
      createKeystoneVerifier(options(silent))('t-token'),
      'Unavailable',
      /did not answer: POST \/v3\/auth\/tokens\?nocatalog: no answer within 300 ms$/,
    );
    assert.ok(Date.now() - started < 2_000);
  });

  it("answers 503 when Keystone refuses relabel's own credentials or its right to validate", async () => {
    const refusing = await fakeKeystone((req, res) => {
      req.resume();
      res.writeHead(401).end('{}');
    });
    await rejectsWith(
      createKeystoneVerifier(options(refusing))('t-token'),
      'Unavailable',
      /refused relabel's service credentials \(user relabel in project service\): HTTP 401/,
    );
    const forbidding = await fakeKeystone((req, res) =>
      req.method === 'GET' ? (req.resume(), res.writeHead(403).end('{}')) : keystoneAnswering({})(req, res),
    );
    await rejectsWith(
      createKeystoneVerifier(options(forbidding))('t-token'),
      'Unavailable',
      /refused to validate a token for relabel's service user relabel \(HTTP 403\): it needs the service or admin role/,
    );
  });
});
