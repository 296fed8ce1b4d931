import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { documentError, loadSources } from './yaml-source.ts';

describe('loadSources', () => {
  it('points at keys and values of any document of a file, however it is written, once its syntax tree is gone', () => {
    const text = [
      '# a comment',
      '---',
      'schema: a/A/v1',
      'metadata: {name: first}',
      '--- {schema: b/B/v1, metadata: {name: flow}, data: {k: v}}',
      '---',
      '  schema: c/C/v1',
      '  metadata:',
      '    name: indented',
      '  data:',
      '    list: [1, 2, {deep: x}]',
      '',
    ].join('\n');
    const { documents, errors } = loadSources([{ source: 's.yaml', text }]);
    assert.deepEqual(errors, []);
    assert.deepEqual(
      documents.map((d) => d.index),
      [1, 2, 3],
    );
    const [first, flow, indented] = documents;
    assert.ok(first && flow && indented);
    assert.deepEqual(first.position(['metadata', 'name'], 'value'), { line: 4, column: 18 });
    assert.deepEqual(flow.position(['data', 'k'], 'key'), { line: 5, column: 53 });
    assert.deepEqual(indented.position(['metadata', 'name'], 'key'), { line: 9, column: 5 });
    assert.deepEqual(indented.position(['data', 'list', 2, 'deep'], 'value'), { line: 11, column: 25 });
    // A path that goes nowhere stops at the deepest node found.
    assert.deepEqual(indented.position(['data', 'missing', 'x'], 'value'), { line: 11, column: 5 });
    const error = documentError(indented, ['data', 'list', 0], 'not a map');
    assert.deepEqual([error.line, error.column, error.document], [11, 12, { index: 3, schema: 'c/C/v1', name: 'indented' }]);
  });
});
