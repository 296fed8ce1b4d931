/**
 * The CLI's pure parts: the exit-code table, flag parsers, tables and the
 * progress display (a bar redrawn in place on a terminal, throttled lines
 * otherwise).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from 'commander';
import { FailureType } from '../../src/core/plan/failure-types.ts';
import type { RunStatusReport } from '../../src/facade/runs/runs.ts';
import type { NodeOutcome } from '../../src/facade/runs/run-results.ts';
import type { Progress, UpdateLabelsResult } from '../../src/contracts/messages.ts';
import { EXIT_CODES, exitCodeForRun, exitCodeForType, exitCodeHelp } from '../../src/cli/exit-codes.ts';
import { table } from '../../src/cli/output.ts';
import { jsonObject, nodeList, nonNegativeInteger, positiveInteger } from '../../src/cli/parsers.ts';
import { changesText, labelSummary, MAX_DETAIL, MAX_SUMMARY_KEYS, nodeTable, progressBar, progressLine, progressReporter } from '../../src/cli/run-output.ts';

const base: RunStatusReport = { workflowId: 'update-labels/s', runId: 'r1', execution: 'RUNNING', startTime: '2026-01-01T00:00:00.000Z' };

function completed(status: UpdateLabelsResult['status']): RunStatusReport {
  return {
    ...base,
    execution: 'COMPLETED',
    result: { status, run: 1, revision: 1, site: 's', dryRun: false, counts: { total: 0, success: 0, failure: 0, written: 0 }, failures: [] },
  };
}

function progress(success: number, failure: number, running: number, total: number): Progress {
  return {
    phase: 'applying',
    dryRun: false,
    total,
    counts: { success, failure, running, pending: total - success - failure - running, written: 0 },
    failures: [],
  };
}

describe('exit codes', () => {
  it('maps each failure type once, and runs by how they ended', () => {
    assert.equal(exitCodeForType(FailureType.DocumentValidationFailed), 2);
    assert.equal(exitCodeForType(FailureType.InvalidTargets), 2);
    assert.equal(exitCodeForType('Usage'), 2);
    for (const t of [FailureType.NoCommittedRevision, FailureType.NoSiteActionRevision, FailureType.RevisionNotFound, FailureType.RunInProgress]) {
      assert.equal(exitCodeForType(t), 3, t);
    }
    assert.equal(exitCodeForType(FailureType.Unavailable), 6);
    assert.equal(exitCodeForType('SomethingNew'), 1);
    assert.equal(exitCodeForType(undefined), 1);
    const types = EXIT_CODES.flatMap((r) => r.types);
    assert.equal(new Set(types).size, types.length, 'no type in two rows');

    assert.equal(exitCodeForRun(base), 0);
    assert.equal(exitCodeForRun(completed('success')), 0);
    assert.equal(exitCodeForRun(completed('partial_success')), 4);
    assert.equal(exitCodeForRun(completed('failure')), 5);
    // Aborted at a gate with no node failed: its status is partial (later waves not started), its code says aborted.
    const aborted = completed('partial_success');
    aborted.result = { ...aborted.result!, counts: { total: 6, success: 2, failure: 0, written: 2 }, waves: 3, aborted: { wave: 0, by: 'ops', notStarted: 4 } };
    assert.equal(exitCodeForRun(aborted), 7);
    assert.match(exitCodeHelp(), /^ {2}7 {2}the run was aborted at a gate of its waves \(relabel abort\)/m);
    assert.match(exitCodeHelp(), /^ {2}4 {2}the run finished with status partial_success: some nodes failed/m);
    assert.equal(exitCodeForRun({ ...base, execution: 'FAILED', failure: { type: 'NoSiteActionRevision', message: 'm' } }), 3);
    assert.equal(exitCodeForRun({ ...base, execution: 'FAILED', failure: { type: 'DocumentValidationFailed', message: 'm' } }), 2);
    assert.equal(exitCodeForRun({ ...base, execution: 'FAILED', failure: { type: 'Error', message: 'm' } }), 5);
    assert.equal(exitCodeForRun({ ...base, execution: 'CANCELLED' }), 5);
    assert.equal(exitCodeForRun({ ...base, execution: 'TERMINATED' }), 5);
  });

  it('documents every code and type in the help text', () => {
    const help = exitCodeHelp();
    for (const row of EXIT_CODES) {
      assert.match(help, new RegExp(`^ {2}${row.code} {2}\\S`, 'm'));
      for (const t of row.types) assert.ok(help.includes(t), t);
    }
  });
});

describe('flag parsers', () => {
  it('accept good values and explain bad ones', () => {
    assert.equal(positiveInteger('12'), 12);
    assert.equal(nonNegativeInteger('0'), 0);
    for (const bad of ['0', '-1', 'abc', '1.5', '', '1e3', '99999999999999999999']) {
      assert.throws(
        () => positiveInteger(bad),
        (e: Error) => e instanceof InvalidArgumentError && /whole number ≥ 1/.test(e.message),
        bad,
      );
    }
    assert.deepEqual(nodeList(' a, b '), ['a', 'b']);
    assert.throws(() => nodeList('a,a'), /a is listed more than once/);
    assert.throws(() => nodeList(''), /empty/);
    assert.deepEqual(jsonObject('{"by":"ops"}'), { by: 'ops' });
    assert.throws(() => jsonObject('[]'), /must be a JSON object/);
    assert.throws(() => jsonObject('{'), /must be JSON/);
  });
});

describe('run output', () => {
  it('aligns tables and shows per-node counts or the failure', () => {
    assert.equal(
      table(
        ['A', 'BB'],
        [
          ['xxx', 'y'],
          ['z', ''],
        ],
      ),
      'A    BB\nxxx  y\nz',
    );
    const nodes: NodeOutcome[] = [
      { node: 'n1', status: 'success' as const, set: { a: '1', b: '2' }, was: { b: '0' }, removed: ['c'], adopted: [], written: true },
      { node: 'n2', status: 'failure' as const, written: false, error: { type: 'NodeNotFound', message: 'node n2 not found in the cluster' } },
      { node: 'n3', status: 'success' as const, unchanged: 4, written: false },
      { node: 'n4', status: 'success' as const, set: { a: '1' }, removed: [], adopted: ['d'], written: false, taintLifted: true },
    ];
    assert.deepEqual(nodeTable(nodes).split('\n'), [
      'NODE  STATUS   SET  REMOVED  ADOPTED  DETAIL',
      'n1    success  2    1        0        set a=1, b: 0 → 2; removed c',
      'n2    failure  -    -        -        NodeNotFound: node n2 not found in the cluster',
      'n3    success  -    -        -        no change',
      'n4    success  1    0        1        set a=1; adopted d; uninitialized taint lifted',
    ]);
    // The plan's table names each member's node set, a long name clipped.
    const members: NodeOutcome[] = [
      { node: 'w-7c9f4', status: 'success', nodeSet: 'capi-md-0', set: { a: '1' }, written: false },
      { node: 'n1', status: 'success', unchanged: 2, written: false },
      { node: 'w-xk2lp', status: 'success', nodeSet: `pool-${'x'.repeat(60)}`, unchanged: 1, written: false },
    ];
    const withSets = nodeTable(members, { nodeSets: true }).split('\n');
    assert.equal(withSets[0]?.replace(/ +/g, ' '), 'NODE NODE SET STATUS SET REMOVED ADOPTED DETAIL');
    assert.match(withSets[1] ?? '', /^w-7c9f4 +capi-md-0 +success +1 +- +- +set a=1$/);
    assert.match(withSets[2] ?? '', /^n1 +- +success +- +- +- +no change$/);
    const clipped = /^w-xk2lp +(\S+) +success/.exec(withSets[3] ?? '')?.[1] ?? '';
    assert.ok(clipped.startsWith('pool-xxx') && clipped.length <= 41, clipped);
    // A dry-run node whose plan changes something never reads "no change".
    assert.equal(changesText({ node: 'n5', status: 'success', set: { k: 'v' }, written: false }), 'set k=v');
    const long = changesText({
      node: 'n6',
      status: 'success',
      set: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`example.com/key-${i}`, 'x'.repeat(63)])),
      written: false,
    });
    assert.equal(long.length, MAX_DETAIL);
    assert.ok(long.endsWith('…'));
    assert.deepEqual(labelSummary(nodes)?.split('\n'), [
      'LABEL  GAIN  CHANGE  LOSE  ADOPT',
      'a      2     0       0     0',
      'b      0     1       0     0',
      'c      0     0       1     0',
      'd      0     0       0     1',
    ]);
    assert.equal(labelSummary(nodes.slice(2, 3)), undefined, 'nothing changes: no summary');
    const wide = labelSummary([
      {
        node: 'w',
        status: 'success',
        set: Object.fromEntries(Array.from({ length: MAX_SUMMARY_KEYS + 3 }, (_, i) => [`k${String(i).padStart(3, '0')}`, 'v'])),
        written: false,
      },
    ]);
    assert.equal(wide?.split('\n').length, MAX_SUMMARY_KEYS + 2);
    assert.match(wide ?? '', /\(and 3 more keys\)$/);
  });

  it('draws progress', () => {
    assert.equal(progressLine(progress(3, 1, 2, 10)), 'applying: 4/10 done (3 ok, 1 failed, 2 running, 4 pending, 0 written)');
    assert.equal(progressLine({ ...progress(0, 0, 0, 0), phase: 'resolving' }), 'resolving…');
    assert.equal(
      progressLine({ ...progress(3, 1, 2, 10), paused: true }),
      'applying (paused: no new node starts; relabel unpause resumes): 4/10 done (3 ok, 1 failed, 2 running, 4 pending, 0 written)',
    );
    assert.equal(progressBar(progress(3, 1, 2, 10), 10), '[####------]');
    assert.equal(progressBar(progress(0, 0, 0, 0), 4), '[----]');
  });

  it('redraws one line on a terminal', () => {
    const writes: string[] = [];
    const r = progressReporter({ isTTY: true, columns: 100, write: (t: string) => writes.push(t) });
    r.update(progress(1, 0, 1, 4));
    r.update(progress(4, 0, 0, 4));
    r.done();
    assert.equal(writes.length, 3);
    assert.ok(writes[0]?.startsWith('\r\x1b[2K['));
    assert.match(writes[1] ?? '', /\] applying: 4\/4 done/);
    assert.equal(writes[2], '\n');
    assert.ok(writes.every((w) => !w.slice(0, -1).includes('\n')));
  });

  it('prints plain lines otherwise, when something changed, at most every interval, and the last state at the end', () => {
    const writes: string[] = [];
    let now = 0;
    const r = progressReporter({ write: (t: string) => writes.push(t) }, 2000, () => now);
    r.update(progress(0, 0, 2, 4));
    now = 500;
    r.update(progress(1, 0, 2, 4)); // too soon
    now = 2500;
    r.update(progress(1, 0, 2, 4));
    now = 2600;
    r.update(progress(1, 0, 2, 4)); // unchanged
    now = 3000;
    r.update(progress(4, 0, 0, 4)); // too soon, printed by done()
    r.done();
    assert.deepEqual(writes, [
      'progress: applying: 0/4 done (0 ok, 0 failed, 2 running, 2 pending, 0 written)\n',
      'progress: applying: 1/4 done (1 ok, 0 failed, 2 running, 1 pending, 0 written)\n',
      'progress: applying: 4/4 done (4 ok, 0 failed, 0 running, 0 pending, 0 written)\n',
    ]);
  });
});
