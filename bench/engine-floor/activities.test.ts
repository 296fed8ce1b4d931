import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, PatchRefused } from '../../test/kit/plan/apply-json-patch.ts';
import { FLOOR_OWNED_ANNOTATION, floorValues } from '../floor-labels.ts';
import { floorPatch, type FloorNode } from './activities.ts';

type Stored = { metadata: { uid: string; labels?: Record<string, string>; annotations?: Record<string, string> } };

describe('floorPatch', () => {
  const next = floorValues('t2');

  it('adds both maps whole to a node that has neither, after testing them absent', () => {
    const node: FloorNode = { name: 'n1', uid: 'u1', labels: null, annotations: null };
    const after = applyJsonPatch<Stored>({ metadata: { uid: 'u1' } }, floorPatch(node, 't2'));
    assert.deepEqual(after.metadata, { uid: 'u1', labels: next.labels, annotations: next.annotations });
  });

  it("replaces the previous pass's values and leaves every other key alone", () => {
    const before = floorValues('t1');
    const stored: Stored = {
      metadata: { uid: 'u1', labels: { ...before.labels, 'kubernetes.io/hostname': 'n1' }, annotations: { ...before.annotations, other: 'x' } },
    };
    const node: FloorNode = { name: 'n1', uid: 'u1', labels: before.labels, annotations: before.annotations };
    const after = applyJsonPatch(stored, floorPatch(node, 't2'));
    assert.deepEqual(after.metadata.labels, { ...next.labels, 'kubernetes.io/hostname': 'n1' });
    assert.deepEqual(after.metadata.annotations, { ...next.annotations, other: 'x' });
  });

  it('is refused when a key it read changed, or the node is another one of the same name', () => {
    const node: FloorNode = { name: 'n1', uid: 'u1', labels: {}, annotations: {} };
    const changed: Stored = { metadata: { uid: 'u1', labels: { 'floor.example.com/label-3': 'theirs' }, annotations: { other: 'x' } } };
    assert.throws(() => applyJsonPatch(changed, floorPatch(node, 't2')), PatchRefused);
    const remade: Stored = { metadata: { uid: 'u2', labels: { a: 'b' }, annotations: { [FLOOR_OWNED_ANNOTATION]: 'x' } } };
    assert.throws(() => applyJsonPatch(remade, floorPatch({ ...node, annotations: { [FLOOR_OWNED_ANNOTATION]: 'x' } }, 't2')), PatchRefused);
  });
});
