/**
 * The end-to-end benchmark's passes over node-set members (see bench/e2e.ts):
 * the same nodes as the named passes, but a revision whose design names
 * none of them, only node sets selecting them by the label they registered
 * with (bench/member-site.ts); each run targets the sets
 * (`relabel update-labels --node-set …`), so relabel finds the members in
 * its LIST of the cluster. Each pass is a fresh worker and one run, checked
 * and reported as the named passes are (bench/relabel-passes.ts).
 *
 * - `members`: every node changed: the sets give `bench-round: members` (on
 *   a later Temporal `members-<temporal>`), a value no named revision gives,
 *   so it changes every node whatever ran before it;
 * - `members-noop`: the same revision again: nothing changed;
 * - `seed-members`: the nodes registered already as the members revision
 *   wants (for the 50,000-node no-op, as `seed` is for the named one).
 */
import type { Design } from '../src/core/site/validate-site.ts';
import { commitSite } from './bench-site.ts';
import { wrongNodes } from './bench-nodes.ts';
import { concurrency, continueAsNewAfter, passes } from './bench-options.ts';
import { report } from './bench-report.ts';
import { pass, type SizeContext } from './relabel-passes.ts';
import { MEMBER_LABEL, memberDesign, memberSite, type MemberSite } from './member-site.ts';

/** The member passes' names in `--passes`. */
export const MemberPass = { members: 'members', noop: 'members-noop', seed: 'seed-members' } as const;

/** The round of the first members revision, which seeding makes too. */
const FIRST_ROUND = 'members';

/** Named passes that write relabel's labels: with `seed-members`, the nodes would no longer be as the seeded revision wants. */
const WRITING_PASSES = ['seed', 'all', 'noop', 'one-percent', 'retry', 'drift'];

/**
 * Whether `--passes` asks for a member pass; throws on a combination that
 * cannot measure what it says (a no-op with nothing to make it one, seeded
 * nodes a pass would change first).
 */
export function memberPassesWanted(asked: readonly string[] = passes): boolean {
  const has = (p: string) => asked.includes(p);
  if (has(MemberPass.noop) && !has(MemberPass.members) && !has(MemberPass.seed)) {
    throw new Error(`--passes ${MemberPass.noop} needs ${MemberPass.members} or ${MemberPass.seed} first (it applies the revision they leave)`);
  }
  const clash = has(MemberPass.seed) ? [MemberPass.members, ...WRITING_PASSES].filter(has) : [];
  if (clash.length > 0) {
    throw new Error(`--passes ${MemberPass.seed} creates the nodes as the members revision wants: not with ${clash.join(', ')}, which would change them first`);
  }
  return Object.values<string>(MemberPass).some(has);
}

/** The member passes' state over one size, across the Temporals it is measured on. */
export type MemberBench = {
  site: MemberSite;
  /** What `seed-members` registers each node as: a member of the first members revision. */
  seed?: Design;
  /**
   * The members revision the nodes were last brought to (by seeding or a
   * `members` pass): its round, its number once committed, and its design
   * with every member added.
   */
  last?: { round: string; revision?: number; design: Design };
};

/** The member passes' state for the bench site of `files` and `nodes`, or undefined when no member pass is asked for. */
export function memberBench(files: SizeContext['site']['files'], nodes: readonly string[]): MemberBench | undefined {
  if (!memberPassesWanted()) return undefined;
  const site = memberSite(files, nodes);
  console.log(`# members: ${site.sets.length} node sets (${site.sets[0]} … ${site.sets.at(-1)}) selecting the nodes by ${MEMBER_LABEL}`);
  if (!passes.includes(MemberPass.seed)) return { site };
  const design = memberDesign(site, FIRST_ROUND);
  return { site, seed: design, last: { round: FIRST_ROUND, design } };
}

/** Commits the members revision of `round`; its number and its design with every member. */
async function commitMembers(ctx: SizeContext, bench: MemberBench, round: string): Promise<{ round: string; revision: number; design: Design }> {
  const design = await commitSite(ctx.store, ctx.designs, bench.site.files(round), `bench: every node a node-set member (${round})`);
  const revision = (await ctx.store.revisions.latest())?.id;
  if (revision === undefined) throw new Error('no revision after a commit');
  return { round, revision, design: bench.site.expanded(design) };
}

/** The member passes asked for, on one Temporal (`ctx.round` set on every one after the first). */
export async function memberPasses(ctx: SizeContext, bench: MemberBench): Promise<void> {
  const start = (revision: number) => () =>
    ctx.runs.start({
      targets: undefined,
      select: { nodeSets: bench.site.sets },
      revision,
      concurrency,
      ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}),
    });
  const checkNodes = async (label: string, design: Design) => {
    const wrong = await wrongNodes(ctx.core, ctx.prefix, design);
    report({ nodes: ctx.size, pass: label, wrongNodes: wrong.length, sample: wrong.slice(0, 5) }, wrong.length === 0);
  };
  if (passes.includes(MemberPass.members)) {
    const last = await commitMembers(ctx, bench, ctx.round === undefined ? FIRST_ROUND : `${FIRST_ROUND}-${ctx.round}`);
    bench.last = last;
    await pass(ctx, 'members-changed', start(last.revision), { status: 'success', written: ctx.size });
    await checkNodes('members-changed: nodes as desired', last.design);
  }
  if (passes.includes(MemberPass.noop)) {
    const last = bench.last;
    if (last === undefined) throw new Error(`${MemberPass.noop} without a members revision`);
    // Seeded nodes: their revision is committed when first applied.
    const revision = last.revision ?? (bench.last = await commitMembers(ctx, bench, last.round)).revision;
    await pass(ctx, 'members-no-op', start(revision), { status: 'success', written: 0 });
    await checkNodes('members-no-op: nodes as desired', last.design);
  }
}
