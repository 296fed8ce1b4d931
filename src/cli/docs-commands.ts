/**
 * `relabel docs …`: validate, stage, commit, inspect and tag site document
 * revisions. Thin over the documents facade: read files, call, print.
 */
import { Argument, type Command, Option } from 'commander';
import { FailureType } from '../core/plan/failure-types.ts';
import { formatError, listedErrors, type SiteError } from '../core/plan/site-error.ts';
import { validateSite } from '../core/site/validate-site.ts';
import type { Revision, StagedBucket } from '../store/revisions/revision-store.ts';
import { withContext, type SetExit } from './context.ts';
import { exitCodeForType, ExitCode } from './exit-codes.ts';
import { fields, note, outputOption, printJson, say, table, type OutputFormat } from './output.ts';
import { jsonObject, nonNegativeInteger, positiveInteger } from './parsers.ts';
import { readSourceFiles } from './source-files.ts';
import { readPeglegSite } from './pegleg-site.ts';
import { RelabelError } from '../facade/relabel-error.ts';
import { USAGE_ERROR } from './exit-codes.ts';

const revisionArgument = (name: string, description: string) => new Argument(`<${name}>`, description).argParser(positiveInteger);

function stagedJson(b: StagedBucket) {
  return { bucket: b.bucket, sources: b.files.map((f) => f.source), stagedAt: b.stagedAt };
}

/** Prints each warning of a site (a selector on a label Cluster API keeps on Machines only) on stderr, as `relabel: warning: …`. */
function warn(warnings: readonly SiteError[] | undefined): void {
  for (const w of warnings ?? []) note(`relabel: warning: ${formatError(w)}`);
}

/** What `docs stage` checks, after its options. */
const STAGE_HELP =
  "\nChecked here: YAML syntax, each document's schema, label syntax, names given twice in the bucket;\n" +
  'and, of the site the bucket would make with the committed documents and the buffer, that no\n' +
  'node-set selector reads a label relabel writes. Other references to other documents (host\n' +
  'profiles, racks, the label policy), in this bucket or another, are checked by docs commit, so a\n' +
  'site can be staged one bucket at a time. A selector on a label Cluster API keeps on Machines only\n' +
  '(cluster.x-k8s.io/deployment-name…) is a warning on stderr, not an error.\n' +
  'Invalid documents: every error listed, nothing staged.\nJSON: {bucket, sources, stagedAt, warnings: [warning…]}.';

/** Files a staging names in its line; a Pegleg site stages hundreds, counted after these. */
const FILES_NAMED = 5;

function namesShown(names: readonly string[]): string {
  const shown = names.slice(0, FILES_NAMED).join(', ');
  return names.length > FILES_NAMED ? `${shown}, … ${names.length - FILES_NAMED} more (docs buffer -o json lists them)` : shown;
}

function tagText(r: Revision): string {
  return r.tags.map((t) => t.tag).join(',') || '-';
}

/** The files named on the command line, or the site of a Pegleg repository; a usage error unless exactly one of the two is given. */
async function documentFiles(paths: readonly string[], opts: { pegleg?: string; site?: string }, naming: 'path' | 'stored') {
  if (opts.pegleg === undefined) {
    if (opts.site !== undefined) throw new RelabelError(USAGE_ERROR, '--site names a site of a --pegleg repository; give --pegleg too');
    if (paths.length === 0) throw new RelabelError(USAGE_ERROR, 'give the documents: YAML files or directories, or --pegleg REPO --site NAME');
    return readSourceFiles(paths, naming);
  }
  if (paths.length > 0) throw new RelabelError(USAGE_ERROR, '--pegleg collects the whole site: give no paths with it');
  if (opts.site === undefined) throw new RelabelError(USAGE_ERROR, '--pegleg needs --site NAME (a folder of site/)');
  return readPeglegSite(opts.pegleg, opts.site);
}

/** `docs validate|stage|buffer|discard`: check documents and work on the buffer before a commit. */
function addBufferCommands(docs: Command, setExit: SetExit): void {
  docs
    .command('validate')
    .description('validate site documents as one site, as a commit would; stores nothing')
    .argument('[path...]', 'YAML files, or directories searched for .yaml/.yml files')
    .addOption(new Option('--pegleg <repo>', 'a Pegleg repository: collect --site from it as Pegleg does (global/, type/<site_type>/, site/<name>/)'))
    .addOption(new Option('--site <name>', 'the site of the --pegleg repository'))
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nDocuments are rendered as Deckhand renders them (layers, substitutions, replacements) and then validated.\n' +
        'Every error is listed as file:line:col document path: message.\nJSON: {ok, files, design} or {ok: false, files, errors}.',
    )
    .action(async (paths: string[], opts: { output: OutputFormat; pegleg?: string; site?: string }) => {
      // Pure: the core's validation, without opening (and so creating) a store.
      const files = await documentFiles(paths, opts, 'path');
      const result = validateSite(files);
      const sources = files.map((f) => f.source);
      if (opts.output === 'json') {
        printJson(
          result.ok
            ? { ok: true, files: sources, design: result.design, warnings: result.warnings ?? [] }
            : { ok: false, files: sources, errors: result.errors },
        );
      } else if (result.ok) {
        warn(result.warnings);
        const d = result.design;
        const sets = d.nodeSets ? `, ${Object.keys(d.nodeSets).length} node set(s)` : '';
        say(
          `ok: ${files.length} file(s), ${Object.keys(d.nodes).length} node(s)${sets}, ${Object.keys(d.racks).length} rack(s), ` +
            `${d.hostProfiles.length} host profile(s)${d.site ? `, site ${d.site}` : ''}`,
        );
      } else {
        for (const line of listedErrors(result.errors)) say(line);
        say(`${result.errors.length} error(s) in ${new Set(result.errors.map((e) => e.source)).size} file(s)`);
      }
      setExit(result.ok ? ExitCode.ok : exitCodeForType(FailureType.DocumentValidationFailed));
    });

  docs
    .command('stage')
    .description('stage files as the whole content of a bucket, after checking each document on its own')
    .argument('<bucket>', 'bucket name, such as site')
    .argument('[path...]', 'YAML files (named by base name) or directories (files named by path inside them)')
    .addOption(new Option('--pegleg <repo>', "a Pegleg repository: stage --site's collected documents (global/, type/<site_type>/, site/<name>/)"))
    .addOption(new Option('--site <name>', 'the site of the --pegleg repository'))
    .addOption(outputOption())
    .addHelpText('after', STAGE_HELP)
    .action(async (bucket: string, paths: string[], opts: { pegleg?: string; site?: string }, cmd: Command) => {
      const files = await documentFiles(paths, opts, 'stored');
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const staged = await documents.stage(bucket, files);
          if (format === 'json') return printJson({ ...stagedJson(staged), warnings: staged.warnings });
          warn(staged.warnings);
          say(`staged bucket ${staged.bucket}: ${staged.files.length} file(s): ${namesShown(staged.files.map((f) => f.source))}`);
          say('commit with: relabel docs commit -m MESSAGE (the whole site is validated then)');
        }),
      );
    });

  docs
    .command('buffer')
    .description('show the staged buckets waiting to be committed')
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: [{bucket, sources, stagedAt}].')
    .action(async (_opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const buffer = await documents.buffer();
          if (format === 'json') return printJson(buffer.map(stagedJson));
          if (buffer.length === 0) return say('the buffer is empty');
          say(
            table(
              ['BUCKET', 'FILES', 'STAGED'],
              buffer.map((b) => [b.bucket, String(b.files.length), b.stagedAt.toISOString()]),
            ),
          );
        }),
      );
    });

  docs
    .command('discard')
    .description('drop everything staged')
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: {discarded: [bucket…]}.')
    .action(async (_opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const discarded = await documents.discard();
          if (format === 'json') return printJson({ discarded });
          say(discarded.length === 0 ? 'the buffer was already empty' : `discarded: ${discarded.join(', ')}`);
        }),
      );
    });
}

/** `docs commit`: the buffer as a new revision, validated whole. */
function addCommitCommand(docs: Command, setExit: SetExit): void {
  docs
    .command('commit')
    .description('commit the staged buckets as a new revision, after validating the whole site they make')
    .option('-m, --message <text>', 'message kept with the revision')
    .addOption(new Option('--force', 'commit even when the site is invalid; its errors are printed as warnings').conflicts('dryRun'))
    .addOption(new Option('--dry-run', 'validate the site as a commit would, and commit nothing'))
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nThe site validated is the committed one with the staged buckets laid over it: references\n' +
        'across documents and buckets, inheritance, label conflicts, one policy and region per site.\n' +
        'Invalid site: every error listed, nothing committed, the buffer kept. With --force it is\n' +
        'committed anyway, a warning with the error count on stderr; update-labels refuses that\n' +
        'revision until a later commit fixes it.\n' +
        'JSON: the revision {id, createdAt, message, buckets, tags, warnings: [error… then warning…]};\n' +
        'with --dry-run {dryRun: true, ok, buckets, errors, warnings} (exit 2 when not ok).',
    )
    .action(async (opts: { message?: string; force?: boolean; dryRun?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          if (opts.dryRun) {
            const { buckets, errors, warnings } = await documents.checkCommit();
            const code = errors.length === 0 ? ExitCode.ok : exitCodeForType(FailureType.DocumentValidationFailed);
            if (format === 'json') {
              printJson({ dryRun: true, ok: errors.length === 0, buckets, errors, warnings });
              return code;
            }
            warn(warnings);
            for (const line of listedErrors(errors)) say(line);
            say(
              errors.length === 0
                ? `dry run: the site is valid with the staged bucket(s) ${buckets.join(', ')}; nothing committed`
                : `dry run: ${errors.length} error(s) in ${new Set(errors.map((e) => e.source)).size} file(s); nothing committed`,
            );
            return code;
          }
          const { revision, warnings, forced } = await documents.commit({
            ...(opts.message !== undefined ? { message: opts.message } : {}),
            ...(opts.force ? { force: true } : {}),
          });
          if (forced > 0) {
            note(
              `relabel: warning: revision ${revision.id} was committed with --force despite ${forced} site validation error(s); update-labels refuses it until a later commit fixes them`,
            );
            if (format !== 'json') for (const line of listedErrors(warnings.slice(0, forced))) note(line);
          }
          warn(warnings.slice(forced));
          if (format === 'json') return printJson({ ...revision, warnings });
          say(`committed revision ${revision.id} (buckets: ${revision.buckets.join(', ')})`);
        }),
      );
    });
}

/** `docs list|show|diff`: read revisions. */
function addRevisionReadCommands(docs: Command, setExit: SetExit): void {
  docs
    .command('list')
    .description('list the committed revisions, oldest first')
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: [{id, createdAt, message, buckets, tags}].')
    .action(async (_opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const revisions = await documents.list();
          if (format === 'json') return printJson(revisions);
          if (revisions.length === 0) return say('no revisions committed yet');
          say(
            table(
              ['REV', 'CREATED', 'BUCKETS', 'TAGS', 'MESSAGE'],
              revisions.map((r) => [String(r.id), r.createdAt.toISOString(), r.buckets.join(','), tagText(r), r.message ?? '']),
            ),
          );
        }),
      );
    });

  docs
    .command('show')
    .description('show one revision with its tags, or with --documents its YAML')
    .addArgument(revisionArgument('rev', 'revision number'))
    .option('--documents', "print the revision's documents (YAML, one comment line naming each file)")
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: the revision {id, createdAt, message, buckets, tags}; with --documents also documents: [{bucket, source, text}].')
    .action(async (rev: number, opts: { documents?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const revision = await documents.show(rev);
          const files = opts.documents ? await documents.files(rev) : undefined;
          if (format === 'json') return printJson(files ? { ...revision, documents: files } : revision);
          if (files) {
            for (const f of files) process.stdout.write(`# ${f.bucket}/${f.source} (revision ${rev})\n${f.text}${f.text.endsWith('\n') ? '' : '\n'}`);
            return;
          }
          say(
            fields([
              ['revision', revision.id],
              ['created', revision.createdAt.toISOString()],
              ['message', revision.message ?? undefined],
              ['buckets', revision.buckets.join(', ')],
              ['tags', revision.tags.length === 0 ? '-' : undefined],
            ]),
          );
          for (const t of revision.tags) {
            const data = Object.keys(t.data).length > 0 ? `  ${JSON.stringify(t.data)}` : '';
            say(`  ${t.tag}  ${t.createdAt.toISOString()}${data}`);
          }
        }),
      );
    });

  docs
    .command('diff')
    .description('show which buckets and files changed between two revisions')
    .addArgument(new Argument('<from>', 'older revision (0: the empty site)').argParser(nonNegativeInteger))
    .addArgument(revisionArgument('to', 'newer revision'))
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: {from, to, buckets: [{bucket, status, sources: [{source, status}]}]}.')
    .action(async (from: number, to: number, _opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const diff = await documents.diff(from, to);
          if (format === 'json') return printJson(diff);
          const changed = diff.buckets.filter((b) => b.status !== 'unchanged');
          if (changed.length === 0) return say(`no differences between revisions ${from} and ${to}`);
          const rows: string[][] = [];
          for (const b of changed) {
            rows.push([b.status, `${b.bucket}/`]);
            for (const s of b.sources) if (s.status !== 'unchanged') rows.push([s.status, `${b.bucket}/${s.source}`]);
          }
          say(`revision ${from} → ${to}:`);
          say(table(['STATUS', 'PATH'], rows));
        }),
      );
    });
}

/** `docs tag|untag`: mark revisions (a site action's outcome, or the operator's own tags). */
function addTagCommands(docs: Command, setExit: SetExit): void {
  docs
    .command('tag')
    .description('tag a revision (site-action-success, site-action-failure or free-form)')
    .addArgument(revisionArgument('rev', 'revision number'))
    .argument('<tag>', 'tag name: lower-case letters, digits, - and .')
    .addOption(new Option('--data <json>', 'JSON object kept with the tag').argParser(jsonObject))
    .addOption(outputOption())
    .addHelpText('after', '\nIdempotent: tagging again replaces the data.\nJSON: {revision, tag, data, createdAt}.')
    .action(async (rev: number, tag: string, opts: { data?: Record<string, unknown> }, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const set = await documents.tag(rev, tag, opts.data);
          if (format === 'json') return printJson({ revision: rev, ...set });
          say(`tagged revision ${rev} ${set.tag}`);
        }),
      );
    });

  docs
    .command('untag')
    .description('remove a tag from a revision')
    .addArgument(revisionArgument('rev', 'revision number'))
    .argument('<tag>', 'tag name')
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: {revision, tag, removed}.')
    .action(async (rev: number, tag: string, _opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async ({ documents, format }) => {
          const removed = await documents.untag(rev, tag);
          if (format === 'json') return printJson({ revision: rev, tag, removed });
          say(removed ? `removed tag ${tag} from revision ${rev}` : `revision ${rev} had no tag ${tag}`);
        }),
      );
    });
}

/** Adds `docs` and its subcommands to `program`. */
export function addDocsCommands(program: Command, setExit: SetExit): void {
  const docs = program.command('docs').description('validate, stage, commit, inspect and tag site document revisions');

  addBufferCommands(docs, setExit);
  addCommitCommand(docs, setExit);
  addRevisionReadCommands(docs, setExit);
  addTagCommands(docs, setExit);
}
