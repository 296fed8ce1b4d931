/**
 * The benchmark's nodes as node-set members (see bench/member-passes.ts):
 * the same nodes as the bench site's (bench/bench-site.ts), each registered
 * with the label a Cluster API MachineDeployment puts on its Nodes, and a
 * site whose design names none of them: one `relabel/NodeSet/v1` per kind
 * of node of the sample site, selecting its nodes by that label. A member
 * wants exactly what the BaremetalNode naming it in the bench site gives
 * it, plus `bench-round: <round>`, so that a members run after a named one
 * changes every node, and the reverse. Pure but for reading the sample
 * site once.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { expandNodeSets } from '../src/core/plan/node-sets.ts';
import { validateSite, type Design } from '../src/core/site/validate-site.ts';
import type { SourceFile } from '../src/store/revisions/revision-store.ts';

/**
 * The label every member registers with: Cluster API's, which its
 * controllers own and relabel never writes, so a selector may read it.
 */
export const MEMBER_LABEL = 'cluster.x-k8s.io/deployment-name';

const SAMPLE_NODES = new URL('../examples/site/nodes.yaml', import.meta.url).pathname;

type NodeData = { host_profile?: string; metadata?: Record<string, unknown> & { owner_data?: Record<string, string> } };

/** What a set gives its members: a sample node's `host_profile` and `metadata`, less what is Drydock's own (`boot_mac`). */
function kindOf(data: NodeData): NodeData {
  const { boot_mac: _bootMac, ...metadata } = data.metadata ?? {};
  return { ...(data.host_profile === undefined ? {} : { host_profile: data.host_profile }), metadata };
}

/** The sample site's node documents' kinds, in order, and the set (by index into `kinds`) each falls in. */
function sampleKinds(): { kinds: NodeData[]; setOf: number[] } {
  const kinds: NodeData[] = [];
  const setOf: number[] = [];
  const seen = new Map<string, number>();
  for (const doc of parseAllDocuments(readFileSync(SAMPLE_NODES, 'utf8'))) {
    const data = (doc.toJS() as { data?: NodeData } | null)?.data;
    if (data === undefined) continue;
    const kind = kindOf(data);
    const key = JSON.stringify(kind);
    if (!seen.has(key)) {
      seen.set(key, kinds.length);
      kinds.push(kind);
    }
    setOf.push(seen.get(key) as number);
  }
  return { kinds, setOf };
}

/** The members of the bench site's nodes: their sets, what each registers with, the site of a round. */
export type MemberSite = {
  /** The node sets, by name, sorted. */
  sets: string[];
  /** The labels node `name` registers with: its MachineDeployment's (none for a name the bench site did not make). */
  labels(name: string): Record<string, string>;
  /** The bench site's files with every BaremetalNode replaced by the node sets, each giving its members `bench-round: round`. */
  files(round: string): SourceFile[];
  /** `design` (of {@link MemberSite.files}) with every node added as a member of its set, as relabel's planner finds it. */
  expanded(design: Design): Design;
};

/** A set's name: its MachineDeployment's, which its selector matches. */
const setName = (i: number) => `bench-md-${String(i).padStart(2, '0')}`;

/**
 * The members made of `files` and `nodes` of a bench site
 * ({@link import('./bench-site.ts').benchSite}): node i is generated from
 * sample node i (modulo their number), so it is a member of that node's
 * kind's set.
 */
export function memberSite(files: readonly SourceFile[], nodes: readonly string[]): MemberSite {
  const { kinds, setOf } = sampleKinds();
  const byNode = new Map(nodes.map((name, i) => [name, setName(setOf[i % setOf.length] as number)]));
  const labels = (name: string): Record<string, string> => {
    const set = byNode.get(name);
    return set === undefined ? {} : { [MEMBER_LABEL]: set };
  };
  const setsText = (round: string) =>
    kinds
      .map((kind, i) => {
        const metadata = { ...kind.metadata, owner_data: { ...kind.metadata?.owner_data, 'bench-round': round } };
        const data = { selector: { matchLabels: { [MEMBER_LABEL]: setName(i) } }, ...kind, metadata };
        const doc = { schema: 'relabel/NodeSet/v1', metadata: { schema: 'metadata/Document/v1', name: setName(i) }, data };
        return `---\n${JSON.stringify(doc)}\n`;
      })
      .join('');
  return {
    sets: kinds.map((_, i) => setName(i)),
    labels,
    files: (round) => [...files.filter((f) => f.source !== 'nodes.yaml'), { source: 'node-sets.yaml', text: setsText(round) }],
    expanded: (design) =>
      expandNodeSets(
        design,
        (function* () {
          for (const name of nodes) yield { name, labels: labels(name) };
        })(),
      ).design,
  };
}

/** The design of {@link MemberSite.files} for `round`, with every member added: what seeding members makes of each node. */
export function memberDesign(site: MemberSite, round: string): Design {
  const validation = validateSite(site.files(round));
  if (!validation.ok) throw new Error(`bench member site does not validate: ${validation.errors.map((e) => e.message).join('; ')}`);
  return site.expanded(validation.design);
}
