/**
 * Contract of Shipyard's configdocs calls, against relabel's real API and
 * store: each request is the one Shipyard's client builds (see
 * `airship-clients.ts`: `verbosity` on every query, the CLI's defaults —
 * no `buffermode`, `version=buffer`, `versions=committed&versions=buffer`,
 * `force=False&dryrun=False` — and its headers), and every field the client
 * and its CLI read from each answer is asserted: the Status fields
 * `message`, `reason`, `details.messageList[].{message,error,level}`, the
 * collection table's `collection_name`, `base_status`, `new_status`,
 * `base_version`, `base_revision`, `new_version`, `new_revision`, and the
 * raw YAML of `get configdocs` and `get renderedconfigdocs`. Shipyard's
 * buffer modes, empty-collection and version names behave as Shipyard's
 * configdocs helper has them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { CollectionStatusList, CommitStatus, StatusBody } from '../../src/api/http/response-schemas.ts';
import { uniqueSuffix } from '../helpers.ts';
import { prefixedSite } from '../site.ts';
import { ADMIN, VIEWER, emptyStoreUrl, startTestApi, type TestApi } from '../api-support.ts';
import { shipyardClient, type Exchange } from '../airship-clients.ts';

/** The documents of a YAML stream, as plain values. */
const docsOf = (text: string) => parseAllDocuments(text).map((d) => d.toJS());

/** The fields Shipyard's CLI prints of a Status answer (cli_format_status_handler), checked present and typed. */
function statusFields(exchange: Exchange, code: number): StatusBody {
  const { answer } = exchange;
  assert.equal(answer.status, code, `${exchange.method} ${exchange.path}: ${answer.text.slice(0, 500)}`);
  // Any Status (a commit's adds its revision): the fields the CLI reads.
  const body = StatusBody.strip().parse(answer.json);
  assert.equal(typeof body.message, 'string');
  assert.equal(typeof body.reason, 'string');
  for (const m of body.details.messageList) assert.ok(typeof m.message === 'string' && typeof m.error === 'boolean');
  return body;
}

/** The collection table Shipyard's CLI prints of `GET configdocs` (gen_collection_table). */
function collectionTable(exchange: Exchange): string[][] {
  assert.equal(exchange.answer.status, 200, exchange.answer.text);
  return CollectionStatusList.parse(exchange.answer.json).map((c) => [
    c.collection_name,
    c.base_status,
    c.new_status,
    `${c.base_version}:${c.base_revision}`,
    `${c.new_version}:${c.new_revision}`,
  ]);
}

describe("Shipyard's configdocs client against relabel", () => {
  const site = prefixedSite(`cfg${uniqueSuffix()}`);
  // The second collection holds the racks and the host profiles the design's nodes name.
  const inRacks = (source: string) => source === 'racks.yaml' || source === 'profiles.yaml';
  const racks = site.files
    .filter((f) => inRacks(f.source))
    .map((f) => f.text)
    .join('');
  const design = site.files
    .filter((f) => !inRacks(f.source))
    .map((f) => f.text)
    .join('');
  let api: TestApi;

  before(async () => {
    api = await startTestApi({ storeUrl: emptyStoreUrl(), taskQueue: 'configdocs-contract-unused' });
  });
  after(async () => {
    await api?.close();
  });

  it('stages collections under the buffer modes, shows their status, commits, and empties a collection', async () => {
    const shipyard = shipyardClient(api, ADMIN);
    const viewer = shipyardClient(api, VIEWER);

    // Nothing yet: an empty collection table, and no buffer to render (404, which the CLI reports).
    assert.deepEqual(collectionTable(await viewer.getConfigdocsStatus()), []);
    assert.equal((await viewer.getRendereddocs()).answer.status, 404);

    // The CLI's default sends no buffermode.
    const staged = await shipyard.postConfigdocs('design', null, false, design);
    assert.equal(staged.path, '/api/v1.0/configdocs/design?verbosity=1', 'buffermode None is left out');
    assert.deepEqual(Object.keys(staged.headers), ['X-Context-Marker', 'content-type', 'X-Auth-Token']);
    assert.equal(staged.headers['content-type'], 'application/x-yaml');
    assert.match(statusFields(staged, 201).message, /design/);
    assert.equal(staged.answer.headers.get('location'), '/api/v1.0/configdocs/design');
    // rejectoncontents (the server's default in Shipyard) refuses a buffer that holds changes; the client raises ShipyardBufferError on 409.
    assert.equal(statusFields(await shipyard.postConfigdocs('racks', 'rejectoncontents', false, racks), 409).reason, 'Conflict');
    statusFields(await shipyard.postConfigdocs('racks', 'append', false, racks), 201);
    // append refuses a collection already in the buffer.
    assert.equal((await shipyard.postConfigdocs('racks', 'append', false, racks)).answer.status, 409);

    const status = await viewer.getConfigdocsStatus();
    assert.equal(status.path, '/api/v1.0/configdocs?versions=committed&versions=buffer&verbosity=1', 'a list is sent as repeated keys');
    assert.deepEqual(collectionTable(status), [
      ['design', 'not present', 'created', 'committed:0', 'buffer:null'],
      ['racks', 'not present', 'created', 'committed:0', 'buffer:null'],
    ]);
    // Comma-separated versions read the same as a list; the order given does not matter.
    assert.equal((await viewer.getConfigdocsStatus(['buffer,committed'])).answer.status, 200);
    assert.equal((await viewer.getConfigdocsStatus(['buffer'])).answer.status, 400, 'exactly two versions');

    const buffered = await viewer.getConfigdocs('racks');
    assert.equal(buffered.answer.status, 200);
    assert.match(buffered.answer.headers.get('content-type') ?? '', /^application\/x-yaml/);
    assert.deepEqual(docsOf(buffered.answer.text), docsOf(racks));
    assert.deepEqual(docsOf((await viewer.getConfigdocs('racks', 'buffer', true)).answer.text), docsOf(racks), 'cleartext-secrets is accepted');
    assert.equal((await viewer.getConfigdocs('racks', 'committed')).answer.status, 404);
    assert.deepEqual(docsOf((await viewer.getRendereddocs()).answer.text), docsOf(design + racks), 'the buffer rendered: every staged document');

    const dryRun = await shipyard.commitConfigdocs(false, true);
    assert.equal(dryRun.path, '/api/v1.0/commitconfigdocs?force=False&dryrun=True&verbosity=1', "Python's booleans");
    assert.equal(dryRun.body, undefined, 'no body, though a content-type is sent');
    const dry = statusFields(dryRun, 200);
    assert.equal(dry.status, 'Success');
    assert.match(dry.message, /DRYRUN/);
    const commit = await shipyard.commitConfigdocs();
    const committed = CommitStatus.parse(commit.answer.json);
    assert.equal(statusFields(commit, 200).reason, 'OK');
    assert.equal(committed.revision.id, 1);
    assert.deepEqual(collectionTable(await viewer.getConfigdocsStatus()), [
      ['design', 'present', 'unmodified', 'committed:1', 'buffer:1'],
      ['racks', 'present', 'unmodified', 'committed:1', 'buffer:1'],
    ]);
    assert.equal(statusFields(await shipyard.commitConfigdocs(), 409).reason, 'EmptyBuffer', 'nothing to commit');
    assert.deepEqual(docsOf((await viewer.getRendereddocs()).answer.text), docsOf(design + racks), 'an unchanged buffer renders as committed');
    assert.deepEqual(docsOf((await viewer.getConfigdocs('racks', 'committed')).answer.text), docsOf(racks));

    // The same documents again add nothing: refused (400, the client's InvalidCollectionError), nothing staged.
    assert.match(statusFields(await shipyard.postConfigdocs('racks', 'replace', false, racks), 400).message, /no change/);
    // empty-collection: no body, the collection's removal staged.
    const emptied = await shipyard.postConfigdocs('racks', null, true, '');
    assert.equal(emptied.body, undefined, 'the client sends no body');
    assert.equal(emptied.path, '/api/v1.0/configdocs/racks?empty-collection=True&verbosity=1');
    statusFields(emptied, 201);
    assert.deepEqual(collectionTable(await viewer.getConfigdocsStatus()), [
      ['design', 'present', 'unmodified', 'committed:1', 'buffer:null'],
      ['racks', 'present', 'deleted', 'committed:1', 'buffer:null'],
    ]);
    assert.equal((await viewer.getConfigdocs('racks')).answer.status, 404);
    // The site without the profiles its nodes name is invalid: every error listed, nothing committed.
    const refused = statusFields(await shipyard.commitConfigdocs(), 400);
    assert.ok(
      refused.details.messageList.some((m) => m.error && /host profile/.test(m.message)),
      JSON.stringify(refused.details),
    );

    // replace empties the buffer (the removal goes) and stages the collection.
    const moved = racks.replace('"clli": "ATLNGA01"', '"clli": "ATLNGA02"');
    assert.notEqual(moved, racks);
    statusFields(await shipyard.postConfigdocs('racks', 'replace', false, moved), 201);
    assert.deepEqual(collectionTable(await viewer.getConfigdocsStatus()), [
      ['design', 'present', 'unmodified', 'committed:1', 'buffer:null'],
      ['racks', 'present', 'modified', 'committed:1', 'buffer:null'],
    ]);
  });

  it("names site-action versions as Shipyard's helper: absent until a revision took part in a site action", async () => {
    const viewer = shipyardClient(api, VIEWER);
    assert.equal((await viewer.getConfigdocsStatus(['successful_site_action', 'buffer'])).answer.status, 404);
    assert.equal((await viewer.getConfigdocs('racks', 'last_site_action')).answer.status, 404);
    assert.equal((await viewer.getRendereddocs('successful_site_action')).answer.status, 404);
    const tagged = await api.call('POST', '/api/v1.0/revisions/1/tags/site-action-success');
    assert.equal(tagged.status, 201, tagged.text);
    assert.deepEqual(collectionTable(await viewer.getConfigdocsStatus(['buffer', 'successful_site_action'])), [
      ['design', 'present', 'unmodified', 'successful_site_action:1', 'buffer:null'],
      ['racks', 'present', 'modified', 'successful_site_action:1', 'buffer:null'],
    ]);
    assert.deepEqual(docsOf((await viewer.getConfigdocs('racks', 'last_site_action')).answer.text), docsOf(racks));
    assert.deepEqual(docsOf((await viewer.getRendereddocs('successful_site_action')).answer.text), docsOf(design + racks));
    assert.equal((await viewer.getRendereddocs('site_action_success')).answer.status, 400, 'not a version name of Shipyard');
  });

  it("accepts Shipyard's verbosity (0 to 5) on every route and refuses what Shipyard refuses", async () => {
    for (const verbosity of [0, 5]) assert.equal((await shipyardClient(api, VIEWER, verbosity).getConfigdocsStatus()).answer.status, 200);
    assert.equal((await shipyardClient(api, VIEWER, 6).getConfigdocsStatus()).answer.status, 400);
    for (const path of ['/health?verbosity=1', '/api/v1.0/revisions?verbosity=1', '/api/v1.0/actions?verbosity=1', '/api/v1.0/openapi.json?verbosity=3']) {
      assert.equal((await api.call('GET', path, { token: VIEWER })).status, 200, path);
    }
    assert.equal((await api.call('GET', '/api/v1.0/configdocs/racks?version=latest&verbosity=1', { token: VIEWER })).status, 400);
    assert.equal(
      (await api.call('POST', '/api/v1.0/configdocs/racks?buffermode=rejectOnContents&verbosity=1', { body: 'x: 1\n' })).status,
      409,
      'modes in any case, as Shipyard lower-cases them',
    );
  });
});
