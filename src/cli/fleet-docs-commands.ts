/**
 * `relabel fleet docs reach`: which sites of a Pegleg repository a change
 * reaches. Every site is rendered and validated at a base commit and at
 * the head (the working tree, or a commit), and compared: its documents,
 * and its nodes' desired labels, annotations and taints. With
 * `--registry`, the sites are set beside the fleet registry, whose names
 * are the repository's site names by convention. Writes nothing.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ChangedSourceDocument, DocumentKey, KeyChanges, KeyCounts, NodeChange } from '../core/site/site-reach.ts';
import { withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { outputOption, printJson, say, table, type OutputFormat } from './output.ts';
import { nameList, positiveInteger } from './parsers.ts';
import { peglegReach, type PeglegReach, type SiteReach } from './pegleg-reach.ts';

/** Items of each list (files, documents, nodes, errors) shown when not told. */
const DEFAULT_LIMIT = 20;
/** Most items of each list `--limit` may ask for. */
const MAX_LIMIT = 1000;

function limitOption(text: string): number {
  const n = positiveInteger(text);
  if (n > MAX_LIMIT) throw new InvalidArgumentError(`must be at most ${MAX_LIMIT}`);
  return n;
}

/** A list cut to `limit`, with how long it was. */
const bounded = <T>(items: readonly T[], limit: number) => ({ total: items.length, items: items.slice(0, limit) });

/** Registered site names, when asked for: which compared sites are registered, and which registered sites the repository lacks. */
type Registry = { names: ReadonlySet<string> };

/** The report as `-o json` prints it: every list bounded by `limit`, with its total. */
export function reachJson(reach: PeglegReach, limit: number, registry?: Registry) {
  const statusCount = (status: SiteReach['status']) => reach.sites.filter((s) => s.status === status).length;
  const notInRepository = registry ? [...registry.names].filter((n) => !reach.repositorySites.includes(n)).sort() : [];
  return {
    repository: reach.repository,
    base: reach.base,
    head: reach.head,
    changedFiles: bounded(reach.changedFiles, limit),
    sites: reach.sites.map((s) => ({
      name: s.name,
      type: s.type,
      status: s.status,
      inScope: s.inScope,
      layers: s.layers,
      ...(registry ? { registered: registry.names.has(s.name) } : {}),
      changedSources: bounded(s.changedSources, limit),
      ...(s.diff
        ? {
            documents: {
              added: bounded(s.diff.documents.added, limit),
              changed: bounded(s.diff.documents.changed, limit),
              removed: bounded(s.diff.documents.removed, limit),
            },
            nodes: { ...bounded(s.diff.nodes, limit), keys: s.diff.keys },
          }
        : {}),
      ...(s.failed ? { failed: { at: s.failed.at, ...bounded(s.failed.errors, limit) } } : {}),
    })),
    ...(registry ? { registry: { registered: registry.names.size, notInRepository: bounded(notInRepository, limit) } } : {}),
    totals: {
      sites: reach.sites.length,
      inScope: reach.sites.filter((s) => s.inScope).length,
      reached: statusCount('reached'),
      inScopeUnchanged: reach.sites.filter((s) => s.inScope && s.status === 'unchanged').length,
      unchanged: statusCount('unchanged'),
      added: statusCount('added'),
      removed: statusCount('removed'),
      failed: statusCount('failed'),
    },
  };
}

const countsText = (c: KeyCounts) => `+${c.gained} ~${c.changed} -${c.lost}`;
const docName = (d: DocumentKey) => `${d.schema} ${JSON.stringify(d.name)}`;
const causeText = (d: ChangedSourceDocument) => `${d.source} ${docName(d)}${d.layer ? ` (layer ${d.layer})` : ''}`;

function keysText(what: string, k: KeyChanges): string[] {
  return [
    ...Object.entries(k.gained).map(([key, v]) => `+${what} ${key}=${v}`),
    ...Object.entries(k.changed).map(([key, { from, to }]) => `~${what} ${key}=${from}→${to}`),
    ...Object.entries(k.lost).map(([key, v]) => `-${what} ${key}=${v}`),
  ];
}

function nodeLine(n: NodeChange): string {
  const keys = [...keysText('label', n.labels), ...keysText('annotation', n.annotations), ...keysText('taint', n.taints)];
  const notes = [...(n.kind === 'node_set' ? ['node set'] : []), ...(n.change === 'changed' ? [] : [n.change])];
  const what = `${n.name}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
  const shown = keys.slice(0, 6).join(', ') + (keys.length > 6 ? `, … ${keys.length - 6} more` : '');
  const from = n.causes.length > 0 ? `; from ${n.causes.slice(0, 3).map(causeText).join(', ')}${n.causes.length > 3 ? ', …' : ''}` : '';
  return `    ${what}: ${shown}${from}`;
}

const more = (total: number, shown: number, what: string) => (total > shown ? [`    … ${total - shown} more ${what} (-o json --limit N lists them)`] : []);

/** The report for people: a line for the change, a table of sites, then each reached or failed site's details. */
export function reachText(reach: PeglegReach, limit: number, registry?: Registry): string {
  const json = reachJson(reach, limit, registry);
  const head = reach.head.ref === null ? 'the working tree' : `${reach.head.ref} (${reach.head.commit?.slice(0, 12) ?? ''})`;
  const files = json.changedFiles;
  const lines = [
    `${reach.base.ref} (${reach.base.commit.slice(0, 12)}) → ${head}: ${files.total} file(s) changed${files.total > 0 ? `: ${files.items.map((f) => f.path).join(', ')}${files.total > files.items.length ? ', …' : ''}` : ''}`,
  ];
  const headers = [
    'SITE',
    'TYPE',
    'LAYERS CHANGED',
    'STATUS',
    'DOCUMENTS +~-',
    'NODES',
    'LABELS',
    'ANNOTATIONS',
    'TAINTS',
    ...(registry ? ['REGISTERED'] : []),
  ];
  const rows = reach.sites.map((s) => {
    const d = s.diff;
    return [
      s.name,
      s.type,
      s.layers.join(',') || '-',
      s.status === 'failed' ? `FAILED at ${s.failed?.at}` : s.status,
      d ? `+${d.documents.added.length} ~${d.documents.changed.length} -${d.documents.removed.length}` : '-',
      d ? String(d.nodes.length) : '-',
      d ? countsText(d.keys.labels) : '-',
      d ? countsText(d.keys.annotations) : '-',
      d ? countsText(d.keys.taints) : '-',
      ...(registry ? [registry.names.has(s.name) ? 'yes' : 'no'] : []),
    ];
  });
  lines.push(table(headers, rows));
  for (const s of reach.sites) {
    if (s.failed) {
      lines.push(`${s.name}: does not validate at the ${s.failed.at}:`, ...s.failed.errors.slice(0, limit).map((e) => `    ${e}`));
      lines.push(...more(s.failed.errors.length, limit, 'error(s)'));
    } else if (s.diff && s.diff.nodes.length > 0) {
      lines.push(`${s.name}:`, ...s.diff.nodes.slice(0, limit).map(nodeLine), ...more(s.diff.nodes.length, limit, 'node(s)'));
    }
  }
  const t = json.totals;
  lines.push(
    `${t.sites} site(s): ${t.inScope} under a changed layer, ${t.reached} reached, ${t.inScopeUnchanged} under a changed layer but unchanged (overridden or no effect), ` +
      `${t.added} added, ${t.removed} removed, ${t.failed} failed`,
  );
  if (json.registry) {
    const missing = json.registry.notInRepository;
    lines.push(
      `registry: ${json.registry.registered} site(s)${missing.total > 0 ? `; not in the repository: ${missing.items.join(', ')}${missing.total > missing.items.length ? ', …' : ''}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** The exit code: 2 when a site fails at the head, 4 when one fails only at the base, else 0. */
export function reachExit(reach: PeglegReach): number {
  if (reach.sites.some((s) => s.failed?.at === 'head')) return ExitCode.invalidInput;
  return reach.sites.some((s) => s.failed) ? ExitCode.partialSuccess : ExitCode.ok;
}

/** Adds `fleet docs` and its `reach` command. */
export function addFleetDocsCommands(fleet: Command, setExit: SetExit): void {
  const docs = fleet.command('docs').description("the fleet's site documents: what a change to shared layers reaches");
  docs
    .command('reach')
    .description(
      'which sites of a Pegleg repository a change reaches: each site rendered at --base and at the head, its documents and nodes compared; writes nothing',
    )
    .requiredOption('--pegleg <repo>', 'the Pegleg repository (global/, type/<site_type>/, site/<name>/site-definition.yaml)')
    .option('--base <ref>', 'the git ref to compare from', 'HEAD')
    .option('--head <ref>', 'the git ref to compare to (default: the working tree as it is on disk)')
    .option('--sites <a,b>', 'only these sites (default: every site of the repository)', nameList)
    .option('--registry', 'set the sites beside the fleet registry of the store (--store / RELABEL_STORE_URL): registry names are site names')
    .addOption(
      new Option('--limit <n>', `items of each list shown: files, documents, nodes, errors (at most ${MAX_LIMIT})`)
        .argParser(limitOption)
        .default(DEFAULT_LIMIT),
    )
    .addOption(outputOption())
    .addHelpText(
      'after',
      "\nA changed file under global/ could reach every site, under type/<t>/ the sites of type t, under site/<s>/ site s: that is a site's\n" +
        "LAYERS CHANGED. Whether it does is what rendering says: a site's own document can override what it inherits.\n" +
        'Nothing is checked out or written: the base is read from git objects, the registry only read.\n' +
        'Exit code: 0; 2 for bad input or when a site does not validate at the head (its errors listed); 4 when one does not only at the base.\n' +
        'JSON: {repository, base: {ref, commit}, head: {ref, commit?}, changedFiles: {total, items}, sites: [{name, type, status, inScope, layers,\n' +
        '  registered?, changedSources, documents?: {added, changed, removed}, nodes?: {total, items, keys}, failed?: {at, total, items}}],\n' +
        '  registry?: {registered, notInRepository}, totals}.',
    )
    .action(
      async (
        opts: { pegleg: string; base: string; head?: string; sites?: string[]; registry?: boolean; limit: number; output: OutputFormat },
        cmd: Command,
      ) => {
        const reach = await peglegReach({
          repo: opts.pegleg,
          base: opts.base,
          ...(opts.head !== undefined ? { head: opts.head } : {}),
          ...(opts.sites !== undefined ? { sites: opts.sites } : {}),
        });
        const print = (registry?: Registry) => {
          if (opts.output === 'json') printJson(reachJson(reach, opts.limit, registry));
          else say(reachText(reach, opts.limit, registry));
          return reachExit(reach);
        };
        // Without --registry no store is opened (opening one may create it).
        if (opts.registry !== true) return setExit(print());
        setExit(await withContext(cmd, async (ctx) => print({ names: new Set((await (await ctx.fleet()).all()).map((s) => s.name)) })));
      },
    );
}
