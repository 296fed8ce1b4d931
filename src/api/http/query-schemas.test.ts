import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ActionCreateQuery, ConfigdocsStatusQuery, NoQuery, RenderedQuery, StageQuery, TaskListQuery, TaskPath, TaskQuery } from './schemas.ts';

describe('query strings as Airship clients send them', () => {
  it("accepts Shipyard's verbosity 0 to 5 on a route without parameters, and nothing else", () => {
    assert.deepEqual(NoQuery.parse({ verbosity: '1' }), { verbosity: '1' });
    assert.equal(NoQuery.safeParse({ verbosity: '6' }).success, false);
    assert.equal(NoQuery.safeParse({ verbosity: ['1', '2'] }).success, false, 'a repeated single value');
    assert.equal(NoQuery.safeParse({ verbose: '1' }).success, false, 'an unknown parameter');
  });

  it('reads the versions of a collection status as a repeated or comma-separated list of two', () => {
    assert.deepEqual(ConfigdocsStatusQuery.parse({ versions: ['committed', 'buffer'], verbosity: '1' }).versions, ['committed', 'buffer']);
    assert.deepEqual(ConfigdocsStatusQuery.parse({ versions: 'buffer, successful_site_action' }).versions, ['buffer', 'successful_site_action']);
    for (const bad of [['buffer'], ['buffer', 'buffer'], ['buffer', 'latest'], Array.from({ length: 11 }, () => 'buffer'), 'x'.repeat(201)]) {
      assert.equal(ConfigdocsStatusQuery.safeParse({ versions: bad }).success, false, JSON.stringify(bad).slice(0, 60));
    }
  });

  it("reads Shipyard's buffer modes in any case, empty-collection and Python's booleans", () => {
    assert.deepEqual(StageQuery.parse({ buffermode: 'rejectOnContents', 'empty-collection': 'True', verbosity: '1' }), {
      buffermode: 'rejectoncontents',
      'empty-collection': true,
      verbosity: '1',
    });
    assert.equal(StageQuery.safeParse({ buffermode: 'prepend' }).success, false);
    assert.deepEqual(ActionCreateQuery.parse({ 'allow-intermediate-commits': 'False' }), { 'allow-intermediate-commits': false });
    assert.deepEqual(RenderedQuery.parse({ version: 'buffer', 'cleartext-secrets': 'true' }), { version: 'buffer', 'cleartext-secrets': true });
    assert.equal(RenderedQuery.safeParse({ version: 'site_action_success' }).success, false, 'not one of Shipyard’s version names');
  });

  it("reads Drydock's task parameters, bounded", () => {
    assert.deepEqual(TaskQuery.parse({ subtaskerrors: 'true', layers: '-1', builddata: 'true' }), { subtaskerrors: true, layers: '-1', builddata: true });
    for (const bad of [{ layers: '-2' }, { layers: '12345' }, { limit: '5001' }, { offset: '-1' }])
      assert.equal(TaskQuery.safeParse(bad).success, false, JSON.stringify(bad));
    assert.equal(TaskListQuery.safeParse({ limit: '100', max_subtasks: '5000' }).success, true);
    assert.equal(TaskListQuery.safeParse({ max_subtasks: '5001' }).success, false);
    assert.equal(TaskPath.safeParse({ id: 'dGFzaw.23' }).success, true);
    for (const id of ['dGFzaw.', 'dGFzaw.01', 'dGFzaw.1.2', '../x']) assert.equal(TaskPath.safeParse({ id }).success, false, id);
  });
});
