import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JOIN_UNHEALTHY_AFTER_MS, joinHealthBoard } from './join-health.ts';

describe('join watcher health', () => {
  it('a watcher failing for a minute makes the worker not ready, naming the site; a blip or a recovery does not', () => {
    const board = joinHealthBoard();
    assert.equal(board.problem(), undefined);
    board.report('s1', undefined);
    board.report('s2', 'watch: connect ECONNREFUSED');
    const t0 = Date.now();
    assert.equal(board.problem(t0 + 1000), undefined, 'a short blip is not a problem');
    // A later failure keeps the first failure's time.
    board.report('s2', 'list: 503');
    assert.match(board.problem(t0 + JOIN_UNHEALTHY_AFTER_MS + 1000) ?? '', /^join watcher of site s2 cannot watch for 6\d s: list: 503$/);
    board.report('s2', undefined);
    assert.equal(board.problem(t0 + JOIN_UNHEALTHY_AFTER_MS + 2000), undefined, 'watching again clears it');
    board.forget('s1');
    assert.deepEqual(board.sites(), ['s2']);
  });
});
