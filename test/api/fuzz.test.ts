/**
 * Generative test of the HTTP API over real sockets: hundreds of malformed
 * or hostile requests (bad tokens, viewer writes, unknown routes, wrong
 * methods, path tricks, wrong types, unknown fields, bad JSON, bad YAML,
 * huge bodies, wrong media types, junk queries, malformed HTTP). Every
 * answer must be a 4xx in Airship's Status format; afterwards the server
 * still answers, no node changed, nothing was staged, tagged or started.
 *
 * The site is committed but never took part in a site action, so even an
 * action or task the generators got "right" by accident is refused (400).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { NodeLabelsBody } from '../../src/api/http/schemas.ts';
import { StatusBody } from '../../src/api/http/response-schemas.ts';
import { adminCore, createNode, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { ADMIN, TEST_BODY_LIMIT, VIEWER, startTestApi, type TestApi } from '../api-support.ts';

/** One generated request and what must come back. */
type Probe = {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The exact status expected, or any 4xx. */
  expect: number | '4xx';
};

const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { 'content-type': 'application/json' } });
const yaml = (text: string) => ({ body: text, headers: { 'content-type': 'application/x-yaml' } });

/** Sends a probe byte for byte (no URL normalisation) on its own connection. */
function send(base: URL, probe: Probe, token: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers: Record<string, string> = { ...token, ...probe.headers };
    if (probe.body !== undefined) headers['content-length'] = String(Buffer.byteLength(probe.body));
    const req = request({ host: base.hostname, port: base.port, method: probe.method, path: probe.path, headers, agent: false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    // The server may answer (413, 415, 401) and close before reading a large body: only an error before the answer counts.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    req.end(probe.body);
  });
}

/** Sends raw bytes and reads until the server closes. */
function sendRaw(base: URL, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname, () => socket.end(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', (err) => (text ? resolve(text) : reject(err)));
  });
}

function assertStatusFailure(status: number, text: string, where: string): void {
  let body: StatusBody;
  try {
    body = StatusBody.parse(JSON.parse(text));
  } catch (err) {
    assert.fail(`${where}: not an Airship Status body (${(err as Error).message}): ${text.slice(0, 300)}`);
  }
  assert.equal(body.status, 'Failure', where);
  assert.equal(body.code, status, where);
  assert.ok(body.details.errorCount >= 1, where);
}

describe('HTTP API under hostile input', () => {
  const prefix = `fz${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const [n0, n1] = site.nodes as [string, string];
  const taskQueue = `relabel-api-fuzz-${uniqueSuffix()}`;
  let api: TestApi;
  let versions: Record<string, string | undefined>;

  before(async () => {
    const { url, store } = await storeWithSite(site.files, { siteAction: false });
    await store.close();
    // No worker polls this task queue: a run started by mistake would show up in the listing below.
    api = await startTestApi({ storeUrl: url, taskQueue });
    const core = adminCore();
    versions = {};
    for (const name of [n0, n1]) versions[name] = (await createNode(core, name, { 'example.com/team': 'fuzz' })).metadata?.resourceVersion;
  });
  after(async () => {
    await api?.close();
  });

  it('answers 600+ malformed or hostile requests with a 4xx Status, and changes nothing', { timeout: 120_000 }, async () => {
    const base = new URL(api.base);
    const goodNodes = new Set([n0, n1]);
    const existing = new Set(['1', 'site', n0, n1]);
    const decoded = (segment: string) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    };

    // ------------------------------------------------------------ generators
    const hostileSegment = fc
      .oneof(
        fc.constantFrom(
          '..',
          '.',
          '..%2f..%2fetc%2fpasswd',
          '%2e%2e%2f',
          '%2e%2e',
          '..%5c..%5cwindows',
          '%00',
          '%ff',
          '%',
          '%zz',
          '%252e%252e%252f',
          'a%2fb',
          '%3Bls',
          '%0d%0aX-Injected:%20yes',
          '%3Cscript%3E',
          'x'.repeat(300),
          '-1',
          '0',
          '1e3',
          '0x10',
          '99999999999999999999',
          '%E4%B8%AD',
          'UPPER',
          'dot.',
          '_under',
          'site%20',
          '%20site',
          '%2e',
          'site%00',
          `${n0}%00`,
          `${n0}..`,
          '%7B%7D',
        ),
        fc.string({ maxLength: 40 }).map(encodeURIComponent),
        fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
      )
      .filter((segment) => !existing.has(decoded(segment)));
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 64 });
    const badAuth = fc.oneof(
      fc.constant<Record<string, string>>({}),
      fc.constantFrom(`${ADMIN}x`, `x${ADMIN}`, ADMIN.slice(0, -1), ADMIN.toUpperCase(), `${VIEWER}${ADMIN}`).map((t) => ({ 'x-auth-token': t })),
      printable.filter((t) => t !== ADMIN && t !== VIEWER).map((t) => ({ 'x-auth-token': t })),
      printable.filter((t) => t !== ADMIN && t !== VIEWER).map((t) => ({ authorization: `Bearer ${t}` })),
      fc
        .constantFrom(`Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}`, ADMIN, `Token ${ADMIN}`, `Bearer`, `Bearer ${ADMIN} ${ADMIN}`)
        .map((a) => ({ authorization: a })),
    );
    const invalidYaml = fc.oneof(
      // A syntax error at the very end of the stream: nothing before it can close it.
      fc
        .tuple(fc.string({ maxLength: 200 }), fc.constantFrom('key: [unclosed', 'a: {b: c', 'x: "unterminated', '- [', '? ['))
        .map(([junk, broken]) => `${junk}\n---\n${broken}\n`),
      // A node document that cannot validate: bad label key, unknown profile.
      fc
        .tuple(fc.string({ maxLength: 100 }), fc.stringMatching(/^[a-z]{1,10}$/))
        .map(
          ([junk, name]) =>
            `# ${junk.replaceAll('\n', ' ')}\n---\nschema: drydock/BaremetalNode/v1\nmetadata: {schema: metadata/Document/v1, name: fuzz-${name}}\n` +
            `data: {host_profile: no-such-profile-${name}, metadata: {owner_data: {"bad key ${name}": "v"}}}\n`,
        ),
      fc.constantFrom(
        '\tkey: tab-indented\n',
        'a: b: c\n',
        '%YAML 9.9\n---\na: 1\n',
        'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n',
        'just a scalar\n',
        '- a list\n- of things\n',
        'schema: relabel/Unknown/v1\nmetadata: {schema: metadata/Document/v1, name: x}\ndata: {}\n',
        '---\n...\n---\n!!binary aGVsbG8=\n',
      ),
    );
    const nearAction = fc.record(
      {
        name: fc.oneof(fc.constantFrom('update_labels', 'relabel_nodes', 'deploy_site', '', 'UPDATE_LABELS'), fc.jsonValue()),
        parameters: fc.oneof(
          fc.jsonValue(),
          fc.record(
            { target_nodes: fc.oneof(fc.jsonValue(), fc.array(fc.constantFrom(n0, n1, '', ' ', 'x')), fc.constantFrom(`${n0},${n1}`, `${n0},${n0}`, ',', '')) },
            { requiredKeys: [] },
          ),
        ),
        dag: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    const filterish = fc.record(
      {
        filter_set_type: fc.constantFrom('union', 'intersection', 'all', 1),
        filter_set: fc.array(
          fc.record(
            {
              filter_type: fc.constantFrom('union', 'intersection', 'xor'),
              node_names: fc.array(fc.constantFrom(n0, n1, 'ghost')),
              node_tags: fc.array(fc.string({ maxLength: 8 })),
              node_label: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    );
    const nearTask = fc.record(
      {
        action: fc.oneof(fc.constantFrom('relabel_nodes', 'prepare_nodes', ''), fc.jsonValue()),
        design_ref: fc.oneof(
          fc.constantFrom(
            'committed',
            'revision:1',
            'revision:2',
            'revision:0',
            'deckhand+http://h/api/v1.0/revisions/1/rendered-documents',
            'file:///etc/passwd',
          ),
          fc.string(),
          fc.jsonValue(),
        ),
        node_filter: fc.oneof(fc.jsonValue(), filterish),
      },
      { requiredKeys: [] },
    );
    const badLabels = fc
      .oneof(
        fc.jsonValue(),
        fc.dictionary(
          fc.oneof(fc.string({ maxLength: 70 }), fc.constantFrom('kubernetes.io/hostname', 'a/b/c', '/x', 'x/', 'UPPER.example.com/x')),
          fc.oneof(fc.string({ maxLength: 70 }), fc.jsonValue()),
        ),
      )
      .filter((value) => !NodeLabelsBody.safeParse(value).success);
    const notJson = fc.string({ minLength: 1, maxLength: 200 }).filter((text) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    });

    const writes: Probe[] = [
      { method: 'POST', path: '/api/v1.0/actions', ...json({ name: 'update_labels', parameters: { target_nodes: [n0] } }), expect: 0 },
      {
        method: 'POST',
        path: '/api/v1.0/tasks',
        ...json({
          action: 'relabel_nodes',
          design_ref: 'committed',
          node_filter: { filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: [n0] }] },
        }),
        expect: 0,
      },
      { method: 'POST', path: '/api/v1.0/configdocs/site', ...yaml(site.files.map((f) => f.text).join('')), expect: 0 },
      { method: 'POST', path: '/api/v1.0/commitconfigdocs', expect: 0 },
      { method: 'POST', path: '/api/v1.0/revisions/1/tags/site-action-success', expect: 0 },
      { method: 'DELETE', path: '/api/v1.0/revisions/1/tags/site-action-success', expect: 0 },
      { method: 'PUT', path: `/api/v1.0/node-labels/${n0}`, ...json({ 'fuzz.example.com/x': 'y' }), expect: 0 },
    ];
    const reads = [
      '/api/v1.0/revisions',
      '/api/v1.0/revisions/1',
      '/api/v1.0/configdocs/site?version=committed',
      '/api/v1.0/renderedconfigdocs',
      '/api/v1.0/actions',
      '/api/v1.0/openapi.json',
    ];
    const allowed: Record<string, string[]> = {
      '/api/v1.0/revisions': ['GET', 'HEAD'],
      '/api/v1.0/revisions/1': ['GET', 'HEAD'],
      '/api/v1.0/actions': ['GET', 'HEAD', 'POST'],
      '/api/v1.0/tasks': ['GET', 'HEAD', 'POST'],
      '/api/v1.0/commitconfigdocs': ['POST'],
      '/api/v1.0/renderedconfigdocs': ['GET', 'HEAD'],
      '/api/v1.0/configdocs/site': ['GET', 'HEAD', 'POST'],
      [`/api/v1.0/node-labels/${n0}`]: ['PUT'],
      '/api/v1.0/revisions/1/tags/x': ['POST', 'DELETE'],
      '/health': ['GET', 'HEAD'],
    };
    type WithAuth = { probe: Probe; auth: Record<string, string> };
    const admin = { 'x-auth-token': ADMIN };
    const asAdmin = (probe: Probe): WithAuth => ({ probe, auth: admin });

    const probes: fc.Arbitrary<WithAuth> = fc.oneof(
      // No token, an unknown one, a malformed header: 401 before anything else, even for well-formed writes.
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom(...writes),
            fc.constantFrom(...reads).map((path): Probe => ({ method: 'GET', path, expect: 0 })),
          ),
          badAuth,
        )
        .map(([probe, auth]) => ({ probe: { ...probe, expect: 401 }, auth })),
      // A viewer writing, with well-formed bodies: 403.
      fc.constantFrom(...writes).map((probe) => ({ probe: { ...probe, expect: 403 }, auth: { authorization: `Bearer ${VIEWER}` } })),
      // Unknown routes: 404.
      fc
        .tuple(
          fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
          fc.string({ maxLength: 30 }).map(encodeURIComponent),
          fc.constantFrom('/api/v1.0/x-', '/x-', '/api/v2.0/revisions/', '/api/v1.0/actions/a/b/'),
        )
        .map(([method, junk, at]) => asAdmin({ method, path: `${at}${junk}`, expect: 404 })),
      // Known paths, other methods: 405.
      fc
        .tuple(fc.constantFrom(...Object.keys(allowed)), fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'))
        .filter(([path, method]) => !(allowed[path] ?? []).includes(method))
        .map(([path, method]) => asAdmin({ method, path, expect: 405 })),
      // Path tricks in every parameter.
      fc.tuple(hostileSegment, hostileSegment, fc.integer({ min: 0, max: 10 })).map(([a, b, which]) =>
        asAdmin(
          [
            { method: 'GET', path: `/api/v1.0/revisions/${a}`, expect: '4xx' },
            { method: 'GET', path: `/api/v1.0/revisions/${a}/rendered-documents`, expect: '4xx' },
            { method: 'GET', path: `/api/v1.0/configdocs/${a}?version=committed`, expect: '4xx' },
            { method: 'POST', path: `/api/v1.0/configdocs/${a}`, ...yaml('key: [unclosed\n'), expect: '4xx' },
            { method: 'POST', path: `/api/v1.0/revisions/${a}/tags/${b}`, expect: '4xx' },
            { method: 'DELETE', path: `/api/v1.0/revisions/${a}/tags/${b}`, expect: '4xx' },
            { method: 'GET', path: `/api/v1.0/actions/${a}`, expect: '4xx' },
            { method: 'GET', path: `/api/v1.0/tasks/${a}`, expect: '4xx' },
            { method: 'POST', path: `/api/v1.0/actions/${a}/control/${b}`, expect: '4xx' },
            { method: 'PUT', path: `/api/v1.0/node-labels/${a}`, ...json({ 'fuzz.example.com/x': 'y' }), expect: '4xx' },
            { method: 'GET', path: `/${a}/../health`, expect: '4xx' },
          ][which] as Probe,
        ),
      ),
      // Wrong types, unknown fields, near misses: 400.
      nearAction.map((body) => asAdmin({ method: 'POST', path: '/api/v1.0/actions', ...json(body), expect: 400 })),
      fc.jsonValue().map((body) => asAdmin({ method: 'POST', path: '/api/v1.0/actions', ...json(body), expect: 400 })),
      nearTask.map((body) => asAdmin({ method: 'POST', path: '/api/v1.0/tasks', ...json(body), expect: 400 })),
      badLabels.map((body) => asAdmin({ method: 'PUT', path: `/api/v1.0/node-labels/${n0}`, ...json(body), expect: 400 })),
      fc
        .tuple(fc.jsonValue(), fc.constantFrom('99', '1'))
        .map(([body, id]) => asAdmin({ method: 'POST', path: `/api/v1.0/revisions/${id}/tags/${id === '1' ? 'Bad_Tag' : 'x'}`, ...json(body), expect: '4xx' })),
      // Not JSON at all: 400.
      fc
        .tuple(notJson, fc.constantFrom('/api/v1.0/actions', '/api/v1.0/tasks', `/api/v1.0/node-labels/${n0}`, '/api/v1.0/revisions/1/tags/x'))
        .map(([text, path]) =>
          asAdmin({ method: path.includes('node-labels') ? 'PUT' : 'POST', path, body: text, headers: { 'content-type': 'application/json' }, expect: 400 }),
        ),
      // Bad YAML: 400, nothing staged.
      fc
        .tuple(invalidYaml, fc.constantFrom('site', 'fuzz', 'a.b_c'))
        .map(([text, bucket]) => asAdmin({ method: 'POST', path: `/api/v1.0/configdocs/${bucket}`, ...yaml(text), expect: 400 })),
      // Other media types: 415.
      fc
        .tuple(
          fc.constantFrom(
            'text/plain',
            'application/xml',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/jsonp',
            'text/json',
            'application/x-yaml',
          ),
          fc.constantFrom('/api/v1.0/actions', '/api/v1.0/tasks', `/api/v1.0/node-labels/${n0}`),
          fc.string({ minLength: 1, maxLength: 100 }),
        )
        .map(([type, path, text]) =>
          asAdmin({ method: path.includes('node-labels') ? 'PUT' : 'POST', path, body: text, headers: { 'content-type': type }, expect: 415 }),
        ),
      fc
        .tuple(fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'), fc.string({ minLength: 1, maxLength: 100 }))
        .map(([type, text]) => asAdmin({ method: 'POST', path: '/api/v1.0/configdocs/site', body: text, headers: { 'content-type': type }, expect: 415 })),
      // Bodies over the limit: 413.
      fc
        .tuple(fc.integer({ min: TEST_BODY_LIMIT + 1, max: TEST_BODY_LIMIT * 3 }), fc.constantFrom('json', 'yaml'))
        .map(([size, kind]) =>
          asAdmin(
            kind === 'json'
              ? { method: 'POST', path: '/api/v1.0/actions', ...json({ name: 'update_labels', parameters: { target_nodes: ['x'.repeat(size)] } }), expect: 413 }
              : { method: 'POST', path: '/api/v1.0/configdocs/site', ...yaml(`# ${'y'.repeat(size)}\n`), expect: 413 },
          ),
        ),
      // A body where none is taken: 400.
      fc
        .tuple(fc.constantFrom('/api/v1.0/commitconfigdocs', '/api/v1.0/revisions/1/tags/site-action-success'), fc.string({ minLength: 1, maxLength: 50 }))
        .map(([path, text]) =>
          asAdmin({
            method: path.endsWith('commitconfigdocs') ? 'POST' : 'DELETE',
            path,
            body: text,
            headers: { 'content-type': 'application/x-yaml' },
            expect: 400,
          }),
        ),
      // Junk queries: 400.
      fc
        .tuple(
          fc.string({ minLength: 1, maxLength: 10 }).map(encodeURIComponent),
          fc.string({ maxLength: 10 }).map(encodeURIComponent),
          fc.integer({ min: 0, max: 7 }),
        )
        .map(([key, value, which]) =>
          asAdmin(
            [
              { method: 'GET', path: `/api/v1.0/revisions?${key}=${value}`, expect: 400 },
              { method: 'GET', path: `/health?${key}=${value}`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/configdocs/site?version=${value}x`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/configdocs/site?version=committed&version=buffer&${key}=${value}`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/actions?limit=${value}x`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/configdocs?versions=buffer&versions=${value}x`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/tasks?max_subtasks=${value}x&verbosity=1`, expect: 400 },
              { method: 'GET', path: `/api/v1.0/configdocs/site?verbosity=${value}x`, expect: 400 },
            ][which] as Probe,
          ),
        ),
    );

    // ------------------------------------------------------------ run
    let sent = 0;
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(probes, async ({ probe, auth }) => {
        const { status, text } = await send(base, probe, auth);
        sent++;
        seen.set(status, (seen.get(status) ?? 0) + 1);
        const where = `${probe.method} ${probe.path.slice(0, 120)} (${JSON.stringify(auth)})`;
        if (probe.expect === '4xx') assert.ok(status >= 400 && status < 500, `${where}: ${status} ${text.slice(0, 300)}`);
        else assert.equal(status, probe.expect, `${where}: ${text.slice(0, 300)}`);
        assertStatusFailure(status, text, where);
      }),
      { numRuns: 600 },
    );

    // Malformed HTTP never becomes a request; it still gets a 4xx Status.
    const raw = [
      'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'POST /api/v1.0/actions HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'FOO BAR BAZ\r\n\r\n',
      'GET /health HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`,
      'GET /api/v1.0/revisions\0 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /health HTTP/9.9\r\nHost: x\r\n\r\n',
    ];
    for (const bytes of raw) {
      const answer = await sendRaw(base, bytes);
      sent++;
      const match = /^HTTP\/1\.1 (\d{3}) /.exec(answer);
      assert.ok(match, `answer to ${JSON.stringify(bytes.slice(0, 60))}: ${answer.slice(0, 200)}`);
      const status = Number(match[1]);
      assert.ok(status >= 400 && status < 500, `${status} for ${JSON.stringify(bytes.slice(0, 60))}`);
      assertStatusFailure(status, answer.slice(answer.indexOf('\r\n\r\n') + 4), JSON.stringify(bytes.slice(0, 60)));
    }
    assert.ok(sent >= 500, `sent ${sent} requests`);
    for (const code of [400, 401, 403, 404, 405, 413, 415]) assert.ok(seen.has(code), `some answers were ${code}: ${JSON.stringify([...seen])}`);

    // Still serving; nothing changed anywhere.
    const health = await send(base, { method: 'GET', path: '/health', expect: 200 }, {});
    assert.equal(health.status, 200);
    for (const name of goodNodes) assert.equal((await adminCore().readNode({ name })).metadata?.resourceVersion, versions[name], `${name} unchanged`);
    assert.deepEqual(await api.relabel.documents.buffer(), [], 'nothing staged');
    assert.deepEqual(
      (await api.relabel.documents.list()).map((r) => [r.id, r.tags.length]),
      [[1, 0]],
      'no revision committed or tagged',
    );
    assert.deepEqual(await (await api.relabel.runs()).list(10), [], 'no run started');
  });
});
