import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LabelPlan } from '../core/plan/label-plan.ts';
import { clipBytes, MAX_NOTE_BYTES, type NodeEvent } from '../kube/events.ts';
import { appliedNote, createNodeEvents, failedNote, MAX_EVENTS_PER_RUN } from './node-events.ts';

const plan = (set: Record<string, string>, remove: string[] = []): LabelPlan => ({
  set,
  remove,
  adopt: [],
  unchanged: [],
  owned: [],
  ownershipChanged: true,
  empty: false,
  aliases: [],
  ignored: [],
  discardedOwned: [],
  annotations: null,
  taints: null,
});

describe('Events about nodes', () => {
  it('notes name the run, the revision, what changed and a bounded list of keys', () => {
    assert.equal(
      appliedNote({ run: 42, revision: 7, node: 'n1', plan: plan({ 'ceph-osd': 'enabled', rack: 'r1', zone: 'a' }, ['old']) }),
      'run 42 applied revision 7: set 3, removed 1 (ceph-osd, rack, zone, old)',
    );
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
    assert.match(
      appliedNote({ run: 1, revision: 1, node: 'n', plan: plan(many) }),
      /^run 1 applied revision 1: set 20, removed 0 \(k0, k1, k2, k3, k4, k5, k6, k7, …\)$/,
    );
    const failed = failedNote({ run: 3, revision: 2, node: 'n', error: { type: 'Forbidden', message: 'x'.repeat(5000) } });
    assert.match(failed, /^run 3 could not apply revision 2: Forbidden: x+…$/);
    assert.ok(failed.length < 900);
  });

  it('cuts a note to 1 KiB of UTF-8 without splitting a character', () => {
    const cut = clipBytes('é'.repeat(2000), MAX_NOTE_BYTES);
    assert.ok(Buffer.byteLength(cut) <= MAX_NOTE_BYTES);
    assert.ok(cut.endsWith('é…'));
    assert.equal(clipBytes('short', MAX_NOTE_BYTES), 'short');
  });

  it('records at most the cap of each reason per run, counts the rest as suppressed, and never fails', async () => {
    const created: NodeEvent[] = [];
    const counted: string[] = [];
    const warnings: string[] = [];
    const events = createNodeEvents(
      {
        async createNodeEvent(event) {
          if (event.node === 'broken') throw new Error('the API server said no');
          created.push(event);
        },
      },
      { count: (reason, result) => counted.push(`${reason}/${result}`), warn: (message) => warnings.push(message) },
    );
    for (let i = 0; i < MAX_EVENTS_PER_RUN + 30; i++) events.applied({ run: 1, revision: 1, node: `n${i}`, uid: `u${i}`, plan: plan({ a: 'b' }) });
    events.failed({ run: 1, revision: 1, node: 'f1', uid: 'uf', error: { type: 'Forbidden', message: 'denied' } });
    events.applied({ run: 2, revision: 1, node: 'other-run', plan: plan({ a: 'b' }) });
    events.failed({ run: 2, revision: 1, node: 'broken', error: { type: 'Invalid', message: 'bad' } });
    await events.idle();
    assert.equal(created.filter((e) => e.reason === 'LabelsApplied' && e.note.startsWith('run 1 ')).length, MAX_EVENTS_PER_RUN);
    assert.deepEqual(
      created.find((e) => e.node === 'f1'),
      { node: 'f1', uid: 'uf', reason: 'RelabelFailed', note: 'run 1 could not apply revision 1: Forbidden: denied' },
    );
    assert.ok(
      created.some((e) => e.node === 'other-run'),
      'another run has a cap of its own',
    );
    assert.equal(counted.filter((c) => c === 'LabelsApplied/suppressed').length, 30);
    assert.equal(counted.filter((c) => c === 'RelabelFailed/failed').length, 1);
    assert.deepEqual(warnings, [
      `run 1 reached ${MAX_EVENTS_PER_RUN} LabelsApplied Events in this worker; no more are recorded for it`,
      'could not record an Event',
    ]);
  });
});
