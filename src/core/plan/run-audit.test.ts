import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { auditFrom, healAudit, MAX_STARTED_BY, runAudit, StartedVia } from './run-audit.ts';

describe('run audit records', () => {
  it('a heal run is by what started its detection: the Schedule, the person, or the detection itself', () => {
    assert.deepEqual(healAudit(runAudit('relabel-drift/s1', StartedVia.schedule), 'relabel-drift/s1-2026'), { by: 'schedule:relabel-drift/s1', via: 'heal' });
    assert.deepEqual(healAudit(runAudit('alice', StartedVia.cli), 'relabel-drift/s1'), { by: 'alice', via: 'heal' });
    assert.deepEqual(healAudit(undefined, 'relabel-drift/s1'), { by: 'workflow:relabel-drift/s1', via: 'heal' });
    assert.equal(healAudit(runAudit('x'.repeat(500), StartedVia.schedule), 'w').by.length, MAX_STARTED_BY);
  });

  it('reads an audit from a memo or input only when it is well formed', () => {
    assert.deepEqual(auditFrom({ by: 'bob\n', via: 'heal' }), { by: 'bob', via: 'heal' });
    assert.equal(auditFrom({ by: 'bob', via: 'cron' }), undefined);
    assert.equal(auditFrom('bob'), undefined);
  });
});
