import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeApi } from '../../kube/nodes.ts';
import type { Relabel } from '../../facade/index.ts';
import { createDocuments } from '../../facade/documents/documents.ts';
import { openStore } from '../../store/open-store.ts';
import { createApiServer } from './server.ts';

describe('OpenAPI document', () => {
  it('documents every route from its zod schemas, and every reference resolves', async () => {
    const store = await openStore('sqlite::memory:');
    const relabel: Relabel = {
      documents: createDocuments(store),
      runs: () => Promise.reject(new Error('unused')),
      schedules: () => Promise.reject(new Error('unused')),
      drift: () => Promise.reject(new Error('unused')),
      joins: () => Promise.reject(new Error('unused')),
      plugins: () => Promise.reject(new Error('unused')),
      fleet: () => Promise.reject(new Error('unused')),
      fleetRollouts: () => Promise.reject(new Error('unused')),
      fleetSurveys: () => Promise.reject(new Error('unused')),
      health: () => Promise.reject(new Error('unused')),
      close: () => store.close(),
    };
    const unused = () => Promise.reject(new Error('unused'));
    const nodes: NodeApi = {
      readNode: unused,
      patchNode: unused,
      listNodes: () => {
        throw new Error('not used');
      },
    };
    const app = createApiServer({ relabel, nodes, tokens: [{ token: 'viewer-token', role: 'viewer' }] });
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1.0/openapi.json', headers: { 'x-auth-token': 'viewer-token' } });
      assert.equal(res.statusCode, 200);
      const doc = res.json();
      assert.equal(doc.openapi, '3.1.0');
      let operations = 0;
      for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; responses?: object }>>)) {
        for (const [method, op] of Object.entries(methods)) {
          assert.ok(app.hasRoute({ method: method.toUpperCase(), url: path.replace(/\{(\w+)\}/g, ':$1') }), `${method} ${path} is served`);
          assert.ok(op.operationId && op.responses, `${method} ${path} has an operationId and responses`);
          operations++;
        }
      }
      assert.equal(operations, 32);
      // Shipyard's drill-down into actions and its Airflow monitoring.
      for (const path of [
        '/api/v1.0/actions/{id}/steps/{step_id}',
        '/api/v1.0/actions/{id}/validations/{validation_id}',
        '/api/v1.0/workflows',
        '/api/v1.0/workflows/{workflow_id}',
      ]) {
        assert.deepEqual(Object.keys(doc.paths[path]), ['get'], path);
      }
      assert.deepEqual(Object.keys(doc.paths['/api/v1.0/actions/{id}/steps/{step_id}/logs'].get.responses['200'].content), ['text/plain']);
      assert.deepEqual(Object.keys(doc.paths['/api/v1.0/notedetails/{note_id}'].get.responses['200'].content), ['text/plain']);
      assert.deepEqual(Object.keys(doc.paths['/metrics'].get.responses['200'].content), ['text/plain; version=0.0.4; charset=utf-8']);
      assert.deepEqual(Object.keys(doc.paths['/health/ready'].get.responses).sort(), ['200', '503']);
      assert.deepEqual(Object.keys(doc.paths['/api/v1.0/actions']).sort(), ['get', 'post']);
      const action = doc.paths['/api/v1.0/actions'].post;
      assert.equal(action.requestBody.content['application/json'].schema.$ref, '#/components/schemas/ActionRequest');
      assert.deepEqual(doc.components.schemas.ActionRequest.required, ['name', 'parameters']);
      assert.equal(doc.components.schemas.ActionRequest.additionalProperties, false, 'unknown fields are rejected');
      assert.ok(doc.paths['/api/v1.0/configdocs/{bucket}'].post.requestBody.content['application/x-yaml']);
      assert.deepEqual(
        doc.paths['/api/v1.0/node-labels/{node}'].put.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`),
        ['path:node', 'query:verbosity'],
        "Shipyard's verbosity is accepted everywhere",
      );
      assert.deepEqual(Object.keys(doc.paths['/api/v1.0/plans']), ['post']);
      assert.equal(doc.paths['/api/v1.0/plans'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/PlanRequest');
      assert.equal(doc.components.schemas.PlanRequest.additionalProperties, false);
      assert.equal(doc.paths['/api/v1.0/plans/{id}'].get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Plan');
      assert.ok(doc.components.schemas.ActionRequest.properties.parameters.properties.allow_mass_removal, 'actions take allow_mass_removal');
      const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/\w+"/g) ?? [];
      for (const ref of new Set(refs)) assert.ok(doc.components.schemas[ref.slice(22, -1)], `${ref} resolves`);
    } finally {
      await app.close();
      await relabel.close();
    }
  });
});
