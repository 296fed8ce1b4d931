import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  assignFleetWaves,
  effectiveFleetRollout,
  fleetApprovalAfter,
  fleetHalts,
  fleetRolloutErrors,
  parseFleetCanary,
  parseFleetWaveSizes,
  rolloutSites,
  type FleetWave,
  type WaveSite,
} from './fleet-waves.ts';
import { defaultTaskQueue, fleetErrors, fleetSiteErrors, MAX_FLEET_SITES, siteNameErrors, type FleetSite } from './sites.ts';
import { maximalLabelKey, maximalSites } from '../../../test/kit/fleet/maximal-sites.ts';

const site = (name: string, labels: Record<string, string> = {}): FleetSite => ({ name, taskQueue: defaultTaskQueue(name), labels });
const eight = Array.from({ length: 8 }, (_, i) => site(`edge-0${i + 1}`, { region: i < 4 ? 'east' : 'west' }));
const waves = (sites: readonly WaveSite[], rollout: Parameters<typeof effectiveFleetRollout>[0]): FleetWave[] => {
  const out = assignFleetWaves(sites, effectiveFleetRollout(rollout));
  assert.ok(out.ok, out.ok ? '' : out.message);
  return out.value;
};

describe('fleet sites', () => {
  it('takes a site with a name, its own task queue and labels; names what is wrong with a bad one', () => {
    assert.deepEqual(fleetSiteErrors(site('seaworthy', { type: 'cruiser' })), []);
    assert.equal(defaultTaskQueue('seaworthy'), 'relabel-seaworthy');
    for (const bad of ['', 'Sea', '-a', 'a-', 'a_b', 'a'.repeat(64)]) assert.equal(siteNameErrors(bad).length, 1, bad);
    const errors = fleetSiteErrors({ name: 'edge-01', taskQueue: 'has space', labels: { 'bad key!': 'v', region: 'not ok!' } });
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.ok(
      errors.every((e) => e.startsWith('site edge-01: ')),
      errors.join('\n'),
    );
  });

  it('refuses a name registered twice and two sites on one task queue (one worker would take both sites’ work)', () => {
    assert.deepEqual(fleetErrors(eight), []);
    const errors = fleetErrors([site('a'), site('a'), { name: 'b', taskQueue: 'relabel-a', labels: {} }]);
    assert.ok(
      errors.some((e) => e === 'site a: registered 2 times'),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) => e === "site b: task queue relabel-a is already site a's"),
      errors.join('\n'),
    );
  });

  it("carries in a rollout's input only each site's name, queue and grouping label: the most sites of the longest entries stay well inside 2 MB", () => {
    const sites = maximalSites(MAX_FLEET_SITES);
    assert.deepEqual(fleetErrors(sites), [], 'the registry takes them');
    assert.deepEqual(fleetErrors(maximalSites(MAX_FLEET_SITES + 1)), [`${MAX_FLEET_SITES + 1} sites: a fleet holds at most ${MAX_FLEET_SITES}`]);
    const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));
    // Every label of every site: past Temporal's 2 MB payload limit several times over.
    assert.ok(bytes(sites) > 12_000_000, String(bytes(sites)));
    const by = maximalLabelKey(7);
    const grouped = rolloutSites(sites, { by: { label: by } });
    assert.ok(bytes(grouped) < 700_000, `grouped by a label: ${bytes(grouped)} bytes`);
    assert.ok(bytes(rolloutSites(sites, {})) < 310_000, `no grouping: ${bytes(rolloutSites(sites, {}))} bytes`);
    assert.deepEqual(grouped[3], { name: sites[3]?.name, taskQueue: sites[3]?.taskQueue, labels: { [by]: sites[3]?.labels[by] } });
    assert.deepEqual(rolloutSites([site('a', { region: 'x' })], { by: { label: 'type' } }), [site('a')], 'a site without the label carries none');
    const waves = (s: FleetSite[]) => assignFleetWaves(s, effectiveFleetRollout({ by: { label: by }, canary: { count: 1 } }));
    assert.deepEqual(waves(grouped), waves(sites), 'the waves are those of the whole entries');
  });
});

describe('fleet waves', () => {
  it('parses --waves as counts in turn or a percentage, --canary as a count or names', () => {
    assert.deepEqual(parseFleetWaveSizes('3,4'), { ok: true, value: { sizes: [3, 4] } });
    assert.deepEqual(parseFleetWaveSizes('25%'), { ok: true, value: { percent: 25 } });
    for (const bad of ['', '0', '3,,4', '3,-1', '101%', '0%', 'many']) assert.equal(parseFleetWaveSizes(bad).ok, false, bad);
    assert.deepEqual(parseFleetCanary('1'), { ok: true, value: { count: 1 } });
    assert.deepEqual(parseFleetCanary('edge-01, edge-02'), { ok: true, value: { sites: ['edge-01', 'edge-02'] } });
    assert.equal(parseFleetCanary('a,,b').ok, false);
  });

  it('takes a canary site, then waves of 3 and 4 (the issue’s rollout of 8 sites)', () => {
    assert.deepEqual(waves(eight, { canary: { count: 1 }, waves: { sizes: [3, 4] } }), [
      { name: 'canary', sites: ['edge-01'] },
      { name: 'sites (1/2)', sites: ['edge-02', 'edge-03', 'edge-04'] },
      { name: 'sites (2/2)', sites: ['edge-05', 'edge-06', 'edge-07', 'edge-08'] },
    ]);
  });

  it('repeats the last size, takes a percentage of the whole fleet, and groups by a site label', () => {
    assert.deepEqual(
      waves(eight, { waves: { sizes: [1, 3] } }).map((w) => w.sites.length),
      [1, 3, 3, 1],
    );
    assert.deepEqual(
      waves(eight, { waves: { percent: 25 } }).map((w) => w.sites.length),
      [2, 2, 2, 2],
    );
    const byRegion = waves([...eight, site('core-1')], { canary: { sites: ['edge-05'] }, by: { label: 'region' } });
    assert.deepEqual(
      byRegion.map((w) => `${w.name}: ${w.sites.join(',')}`),
      ['canary: edge-05', 'region=east: edge-01,edge-02,edge-03,edge-04', 'region=west: edge-06,edge-07,edge-08', '(no region): core-1'],
    );
  });

  it('refuses a canary naming a site the rollout does not cover, or one site twice', () => {
    const unknown = assignFleetWaves(eight, effectiveFleetRollout({ canary: { sites: ['edge-09'] } }));
    assert.deepEqual(unknown, { ok: false, message: 'canary: "edge-09": not among the rollout\'s sites' });
    assert.equal(assignFleetWaves(eight, effectiveFleetRollout({ canary: { sites: ['edge-01', 'edge-01'] } })).ok, false);
  });

  it('checks a rollout given as data; fills in the gates', () => {
    assert.deepEqual(fleetRolloutErrors({ canary: { count: 1 }, waves: { sizes: [3, 4] }, approval: 'first', maxFailedSites: 1, siteWaitSeconds: 60 }), []);
    assert.equal(
      fleetRolloutErrors({ canary: { count: 0 }, waves: { sizes: [] }, approval: 'later' as never, maxFailedSites: -1, siteWaitSeconds: 1e9 }).length,
      5,
    );
    const r = effectiveFleetRollout({});
    assert.deepEqual(r, { approval: 'none', maxFailedSites: 0, siteWaitSeconds: 600 });
    assert.equal(fleetHalts(r, 0), false);
    assert.equal(fleetHalts(r, 1), true);
    const first = effectiveFleetRollout({ approval: 'first' });
    assert.deepEqual(
      [0, 1, 2].map((i) => fleetApprovalAfter(first, i, 3)),
      [true, false, false],
    );
    const each = effectiveFleetRollout({ approval: 'each' });
    assert.deepEqual(
      [0, 1, 2].map((i) => fleetApprovalAfter(each, i, 3)),
      [true, true, false],
    );
  });

  it('puts every site in exactly one non-empty wave, whatever the rollout', () => {
    const arbSites = fc
      .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/), { maxLength: 60 })
      .chain((names) =>
        fc.tuple(fc.constant(names), fc.array(fc.constantFrom('a', 'b', 'c', undefined), { minLength: names.length, maxLength: names.length })),
      );
    const arbRollout = fc.record(
      {
        canary: fc.option(fc.integer({ min: 1, max: 70 }), { nil: undefined }),
        sizes: fc.option(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }), { nil: undefined }),
        percent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        by: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(arbSites, arbRollout, ([names, groups], r) => {
        const sites: WaveSite[] = names.map((name, i) => {
          const labels: Record<string, string> = {};
          const tier = groups[i];
          if (tier !== undefined) labels.tier = tier;
          return { name, labels };
        });
        const out = waves(sites, {
          ...(r.canary !== undefined ? { canary: { count: r.canary } } : {}),
          ...(r.percent !== undefined ? { waves: { percent: r.percent } } : r.sizes !== undefined ? { waves: { sizes: r.sizes } } : {}),
          ...(r.by ? { by: { label: 'tier' } } : {}),
        });
        assert.ok(out.every((w) => w.sites.length > 0));
        assert.deepEqual(out.flatMap((w) => w.sites).sort(), [...names].sort());
      }),
    );
  });
});
