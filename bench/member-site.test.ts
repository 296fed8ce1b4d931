import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { validateSite, type DesignNode } from '../src/core/site/validate-site.ts';
import { benchSite } from './bench-site.ts';
import { MEMBER_LABEL, memberDesign, memberSite } from './member-site.ts';
import { memberPassesWanted } from './member-passes.ts';

describe('bench node-set members', () => {
  const site = benchSite('bench-', 60);
  const members = memberSite(site.files, site.nodes);

  it('names no node: every node is a member of one set, selected by the label it registered with', () => {
    const schemas = members
      .files('r')
      .flatMap((f) => parseAllDocuments(f.text).map((d) => (d.toJS() as { schema?: string } | null)?.schema))
      .filter((s) => s !== undefined);
    assert.equal(schemas.filter((s) => s === 'drydock/BaremetalNode/v1').length, 0);
    assert.equal(schemas.filter((s) => s === 'relabel/NodeSet/v1').length, members.sets.length);
    const design = memberDesign(members, 'r');
    assert.deepEqual(Object.keys(design.nodes), site.nodes);
    for (const set of Object.values(design.nodeSets ?? {})) assert.deepEqual(Object.keys(set.selector.matchLabels ?? {}), [MEMBER_LABEL]);
    assert.deepEqual(Object.keys(members.labels('bench-00007')), [MEMBER_LABEL]);
    assert.deepEqual(members.labels('elsewhere-1'), {});
  });

  it('gives each member what its BaremetalNode gives it, plus bench-round', () => {
    const named = validateSite(site.files);
    if (!named.ok) throw new Error('the bench site does not validate');
    const design = memberDesign(members, 'members-dev');
    for (const node of site.nodes) {
      const want: DesignNode | undefined = named.design.nodes[node];
      const got = design.nodes[node];
      assert.deepEqual({ ...got?.labels, 'bench-round': undefined }, { ...want?.labels, 'bench-round': undefined }, node);
      assert.equal(got?.labels['bench-round'], 'members-dev');
      assert.deepEqual(got?.annotations, want?.annotations, node);
      assert.deepEqual(got?.taints, want?.taints, node);
    }
  });

  it('refuses member passes that cannot measure what they say', () => {
    assert.equal(memberPassesWanted(['floor', 'all', 'noop']), false);
    assert.equal(memberPassesWanted(['all', 'members', 'members-noop']), true);
    assert.equal(memberPassesWanted(['seed-members', 'members-noop', 'floor', 'plan']), true);
    assert.throws(() => memberPassesWanted(['members-noop']), /needs members or seed-members/);
    assert.throws(() => memberPassesWanted(['seed-members', 'members', 'all', 'members-noop']), /not with members, all,/);
  });
});
