import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatError } from './site-error.ts';
import { policyDoc, source } from '../../../test/kit/site/documents.ts';
import { validateSite } from '../site/validate-site.ts';
import { DEFAULT_MAX_REMOVAL_FRACTION } from '../site/label-policy.ts';
import { createRemovalTally, describeRemoval, MAX_LISTED_KEYS, removalRefusal } from './removal-brake.ts';

describe('the mass-removal tally', () => {
  it('adds nodes up: owned, removed, nodes losing a label, keys ranked by nodes', () => {
    const tally = createRemovalTally(0.5);
    tally.add(3, ['b', 'c']);
    tally.add(3, ['c']);
    tally.add(2, []);
    const result = tally.result();
    assert.deepEqual(result, {
      owned: 8,
      removed: 3,
      nodes: 2,
      keys: [
        { key: 'c', nodes: 2 },
        { key: 'b', nodes: 1 },
      ],
      moreKeys: 0,
      maxFraction: 0.5,
      exceeded: false,
    });
    assert.equal(
      describeRemoval(result),
      "would remove 3 of 8 owned labels (38%) on 2 nodes, within the policy's max_removal_fraction 0.5; keys: c (2 nodes), b (1 node)",
    );
  });

  it('is exceeded exactly when more than the fraction of owned labels goes; nothing removed never is', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(6), fc.nat(6)), { maxLength: 30 }), fc.double({ min: 0, max: 1, noNaN: true }), (nodes, fraction) => {
        const tally = createRemovalTally(fraction);
        let owned = 0;
        let removed = 0;
        for (const [own, extra] of nodes) {
          const gone = Math.min(own, extra);
          tally.add(
            own,
            Array.from({ length: gone }, (_, i) => `k${i}`),
          );
          owned += own;
          removed += gone;
        }
        const r = tally.result();
        assert.equal(r.owned, owned);
        assert.equal(r.removed, removed);
        assert.equal(r.exceeded, removed > 0 && removed > fraction * owned);
        assert.ok(r.keys.length <= MAX_LISTED_KEYS);
      }),
    );
  });

  it('keeps the refusal bounded however many keys go', () => {
    const tally = createRemovalTally(0.5);
    for (let i = 0; i < 5000; i++) tally.add(2, [`example.com/key-${i}`, 'common']);
    const r = tally.result();
    assert.equal(r.keys.length, MAX_LISTED_KEYS);
    assert.equal(r.keys[0]?.key, 'common');
    assert.equal(r.moreKeys, 5001 - MAX_LISTED_KEYS);
    const message = removalRefusal(r, 4);
    assert.ok(message.length < 1000, `${message.length} characters`);
    assert.match(
      message,
      /^mass-removal brake: run 4 would remove 10000 of 10000 owned labels \(100%\) on 5000 nodes, more than the policy's max_removal_fraction 0\.5; keys: common \(5000 nodes\), .* and 4991 more keys\. Nothing was written\./,
    );
  });
});

describe('max_removal_fraction in the label policy', () => {
  const fractionOf = (line: string) => {
    const result = validateSite([source('p.yaml', policyDoc('p', line === '' ? {} : { max_removal_fraction: line }))]);
    return result.ok ? result.design.policy.maxRemovalFraction : result.errors.map(formatError);
  };

  it('is optional (default 0.5) and taken from 0 to 1', () => {
    assert.equal(fractionOf(''), DEFAULT_MAX_REMOVAL_FRACTION);
    assert.equal(DEFAULT_MAX_REMOVAL_FRACTION, 0.5);
    assert.equal(fractionOf('max_removal_fraction: 0'), 0);
    assert.equal(fractionOf('max_removal_fraction: 0.25'), 0.25);
    assert.equal(fractionOf('max_removal_fraction: 1'), 1);
  });

  it('refuses a value outside 0 to 1, or not a number, naming where', () => {
    assert.deepEqual(fractionOf('max_removal_fraction: 1.5'), [
      'p.yaml:13:25 relabel/LabelPolicy/v1 "p" data.max_removal_fraction: Too big: expected number to be <=1',
    ]);
    assert.deepEqual(fractionOf('max_removal_fraction: -0.1'), [
      'p.yaml:13:25 relabel/LabelPolicy/v1 "p" data.max_removal_fraction: Too small: expected number to be >=0',
    ]);
    assert.match(String(fractionOf("max_removal_fraction: 'half'")), /data\.max_removal_fraction: Invalid input: expected number, received string/);
  });
});
