import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selfTimes, topLines, type CpuProfile } from './profile-top.ts';

const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });

const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', '', -1) },
    { id: 2, callFrame: frame('plan', 'file:///src/plan.ts', 9) },
    { id: 3, callFrame: frame('', 'file:///src/plan.ts', 20) },
    { id: 4, callFrame: frame('(idle)', '', -1) },
  ],
  startTime: 100_000,
  samples: [2, 3, 2, 4],
  timeDeltas: [1000, 500, 2000, 9000],
};

describe('selfTimes', () => {
  it("charges each sample's delta to its function, over every profile given", () => {
    const times = selfTimes([profile, profile]);
    assert.equal(times.get('plan /src/plan.ts:10'), 6000);
    assert.equal(times.get('(anonymous) /src/plan.ts:21'), 1000);
    assert.equal(times.get('(idle) (native):0'), 18000);
  });

  it('keeps only the samples taken in the window when given one', () => {
    // The samples are taken at 101,000, 101,500, 103,500 and 112,500 µs.
    const times = selfTimes([profile], 'function', [101_200, 104_000]);
    assert.deepEqual(
      [...times],
      [
        ['(anonymous) /src/plan.ts:21', 500],
        ['plan /src/plan.ts:10', 2000],
      ],
    );
  });

  it('adds up by source file when asked', () => {
    assert.equal(selfTimes([profile], 'file').get('/src/plan.ts'), 3500);
  });
});

describe('topLines', () => {
  it('lists the top functions by self time with their share of the busy time, idle left out', () => {
    assert.deepEqual(topLines(selfTimes([profile]), 1), [
      'busy 4 ms (idle left out)',
      '   self ms      %  function',
      '       3.0   85.7  plan /src/plan.ts:10',
    ]);
  });
});
