import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeApi } from '../../kube/nodes.ts';
import type { Relabel, Runs } from '../../facade/index.ts';
import { createDocuments } from '../../facade/documents/documents.ts';
import type { ControlVerbName } from '../../facade/runs/run-control.ts';
import { openStore } from '../../store/open-store.ts';
import { encodeRunId } from '../runs/run-ids.ts';
import { createApiServer } from '../http/server.ts';

/** A server over runs that record what is asked of them (nothing else is reached). */
async function server(runs: Partial<Runs> | null) {
  const store = await openStore('sqlite::memory:');
  const unused = () => Promise.reject(new Error('unused'));
  const relabel: Relabel = {
    documents: createDocuments(store),
    runs: () => (runs ? Promise.resolve(runs as Runs) : Promise.reject(new Error('no run may start'))),
    schedules: unused,
    drift: unused,
    joins: unused,
    plugins: unused,
    fleet: unused,
    fleetRollouts: unused,
    fleetSurveys: unused,
    health: unused,
    close: () => store.close(),
  };
  const nodes: NodeApi = {
    readNode: unused,
    patchNode: unused,
    listNodes: () => {
      throw new Error('not used');
    },
  };
  const app = createApiServer({ relabel, nodes, tokens: [{ token: 'admin-token', role: 'admin', name: 'ops-alice' }] });
  return {
    app,
    close: async () => {
      await app.close();
      await relabel.close();
    },
  };
}

const headers = { 'x-auth-token': 'admin-token', 'content-type': 'application/json' };

describe('actions in waves through the API', () => {
  it('refuses a bad rollout parameter with a 400 naming it, before any run is reached', async () => {
    const { app, close } = await server(null);
    try {
      for (const [parameters, message] of [
        [{ waves: 'row' }, /parameters\.waves: waves "row": expected rack, label:<key> or none/],
        [{ wave_size: '200%' }, /parameters\.wave_size: wave size "200%"/],
        [{ approval: 'always' }, /parameters\.approval: must be one of none, first, each/],
        [{ health_timeout_seconds: 'soon' }, /parameters\.health_timeout_seconds: must be whole seconds/],
      ] as const) {
        const res = await app.inject({
          method: 'POST',
          url: '/api/v1.0/actions',
          headers,
          payload: { name: 'update_labels', parameters: { target_nodes: ['n1'], ...parameters } },
        });
        assert.equal(res.statusCode, 400, JSON.stringify(parameters));
        const body = res.json();
        assert.equal(body.reason, 'InvalidRequest');
        assert.match(body.message, message);
      }
    } finally {
      await close();
    }
  });

  it("maps Shipyard's unpause onto the gate a run waits at, and takes relabel's gate verbs", async () => {
    const applied: ControlVerbName[] = [];
    let waiting: 'approval' | 'halted' | undefined = 'approval';
    const runs: Partial<Runs> = {
      status: async (workflowId, runId) => ({
        workflowId,
        runId: runId ?? 'r',
        execution: 'RUNNING',
        startTime: '2026-01-01T00:00:00.000Z',
        progress: {
          phase: 'applying',
          dryRun: false,
          total: 2,
          counts: { pending: 1, running: 0, success: 1, failure: 0, written: 1 },
          failures: [],
          wave: { current: { index: 0, name: 'canary', nodes: 1 }, count: 2, ...(waiting ? { waiting } : {}) },
        },
      }),
      control: async (workflowId, runId, verb) => {
        applied.push(verb);
        return { workflowId, runId: runId ?? 'r', verb, answer: { paused: false, changed: true, running: 0, pending: 1 } };
      },
    };
    const { app, close } = await server(runs);
    // An old-style id (the workflow and run ids encoded) needs no store lookup.
    const id = encodeRunId({ workflowId: 'update-labels/s', runId: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' });
    const post = (verb: string) => app.inject({ method: 'POST', url: `/api/v1.0/actions/${id}/control/${verb}`, headers: { 'x-auth-token': 'admin-token' } });
    try {
      const approved = await post('unpause');
      assert.equal(approved.statusCode, 202, approved.body);
      assert.match(approved.json().message, /^unpause accepted for action \S+ as approve/);
      waiting = 'halted';
      assert.equal((await post('unpause')).statusCode, 202);
      waiting = undefined;
      assert.match((await post('unpause')).json().message, /^unpause accepted for action \S+ \(running/);
      for (const verb of ['approve', 'resume', 'abort', 'stop']) assert.equal((await post(verb)).statusCode, 202, verb);
      assert.deepEqual(applied, ['approve', 'resume', 'unpause', 'approve', 'resume', 'abort', 'stop']);
      assert.equal((await post('skip')).statusCode, 400);
    } finally {
      await close();
    }
  });
});
