/**
 * Every command a user can copy from the README, docs/ and `relabel --help`
 * is one the CLI takes as written: each `relabel` line of a code block parses
 * (its command exists, its flags and their values are accepted, its
 * arguments are there), each `npm run` names a script and each `node` a file.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CommanderError, type Command } from 'commander';
import { buildProgram } from './program.ts';
import { PAGES, ROOT } from '../../test/kit/docs/pages.ts';

/** A command as a user would type it, and where it is written. */
interface Documented {
  readonly where: string;
  readonly words: readonly string[];
}

/** Shell words of `line`: quotes kept together, a `#` comment dropped. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else word = (word ?? '') + ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word ??= '';
    } else if (ch === '#' && word === undefined) {
      break;
    } else if (/\s/.test(ch)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The commands of one shell line: split at `&&`, `||`, `;` and `|`, a trailing `&` dropped. */
function commandsOf(line: string): string[][] {
  const commands: string[][] = [[]];
  for (const word of shellWords(line.replace(/^\s*\$\s+/, ''))) {
    if (['&&', '||', ';', '|'].includes(word)) commands.push([]);
    else if (word !== '&') commands.at(-1)?.push(word);
  }
  return commands.filter((c) => c.length > 0);
}

/** The lines of the fenced code blocks of a Markdown page, with their line numbers. */
function codeLines(page: string): { line: string; at: number }[] {
  const lines: { line: string; at: number }[] = [];
  let inBlock = false;
  readFileSync(join(ROOT, page), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*```/.test(line)) inBlock = !inBlock;
      else if (inBlock) lines.push({ line, at: i + 1 });
    });
  return lines;
}

/** Every command of the pages' code blocks. */
function documentedCommands(): Documented[] {
  return PAGES.flatMap((page) => codeLines(page).flatMap(({ line, at }) => commandsOf(line).map((words) => ({ where: `${page}:${at}`, words }))));
}

/** How a page runs the CLI: the launcher of the clone, `npx relabel`, or `relabel` on the PATH. */
const LAUNCHERS = ['bin/relabel.js', './bin/relabel.js', 'relabel'];

/** `words` without a leading `npx` or `node`, when they run relabel. */
function relabelArgs(words: readonly string[]): string[] | undefined {
  const start = words[0] === 'npx' || words[0] === 'node' ? 1 : 0;
  const launcher = words[start];
  return launcher !== undefined && LAUNCHERS.includes(launcher) ? words.slice(start + 1) : undefined;
}

/** Commander's messages go nowhere; every command of the tree. */
function quiet(command: Command): void {
  command.configureOutput({ writeOut: () => {}, writeErr: () => {} });
  for (const sub of command.commands) quiet(sub);
}

/** Parses `args` as `relabel` would, stopping before the command's action runs; the usage error, if any. */
async function usageError(args: readonly string[]): Promise<string | undefined> {
  const program = buildProgram(() => {});
  quiet(program);
  const parsed = new Error('parsed');
  program.hook('preAction', () => {
    throw parsed;
  });
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 'no command ran';
  } catch (err) {
    if (err === parsed) return undefined;
    if (err instanceof CommanderError) return err.message;
    throw err;
  }
}

/** Everything `relabel --help` and each command's `--help` print. */
function helpTexts(): string {
  const program = buildProgram(() => {});
  let text = '';
  const collect = (command: Command): void => {
    command.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
    command.outputHelp();
    for (const sub of command.commands) collect(sub);
  };
  collect(program);
  return text;
}

/** The lines of every `Examples:` section of `help`, up to the blank line that ends it. */
function exampleLines(help: string): string[] {
  const lines: string[] = [];
  let inExamples = false;
  for (const line of help.split('\n')) {
    if (/^\s*Examples:\s*$/.test(line)) inExamples = true;
    else if (line.trim() === '') inExamples = false;
    else if (inExamples) lines.push(line);
  }
  return lines;
}

describe('the commands the README and docs show', () => {
  const documented = documentedCommands();

  it('finds the commands it checks (the README shows the main job and the tests)', () => {
    const relabel = documented.filter((c) => relabelArgs(c.words));
    assert.ok(relabel.length >= 40, `only ${relabel.length} relabel commands found`);
    const inReadme = (command: string) => documented.some((c) => c.where.startsWith('README.md') && c.words.join(' ') === command);
    assert.ok(inReadme('npm run demo'), 'the README shows the main job');
    assert.ok(inReadme('npm test'), 'the README shows the tests');
  });

  it('the README runs the CLI as bin/relabel.js, which npm prints nothing before, and the test command is the one CI runs', () => {
    const readme = documented.filter((c) => c.where.startsWith('README.md'));
    const viaNpx = readme.filter((c) => c.words[0] === 'npx');
    assert.deepEqual(viaNpx, []);
    assert.ok(readme.filter((c) => c.words[0] === 'bin/relabel.js').length >= 10);
    assert.match(readFileSync(join(ROOT, '.ci/run'), 'utf8'), /^npm test$/m);
    const bin = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin;
    assert.equal(bin.relabel, 'bin/relabel.js');
  });

  it('parses every relabel command as written', async () => {
    const wrong: string[] = [];
    for (const { where, words } of documented) {
      const args = relabelArgs(words);
      if (!args) continue;
      const error = await usageError(args);
      if (error) wrong.push(`${where}: relabel ${args.join(' ')}: ${error}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('names only npm scripts that exist and node scripts that are there', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const wrong: string[] = [];
    for (const { where, words } of documented) {
      if (words[0] === 'npm' && words[1] === 'run' && !(words[2] && words[2] in scripts)) wrong.push(`${where}: npm run ${words[2]}`);
      if (words[0] === 'npm' && words[1] === 'test' && !('test' in scripts)) wrong.push(`${where}: npm test`);
      if (words[0] === 'node' && words[1] && !words[1].startsWith('-') && !existsSync(join(ROOT, words[1]))) wrong.push(`${where}: node ${words[1]}`);
      if (words[0]?.startsWith('bin/') && !existsSync(join(ROOT, words[0]))) wrong.push(`${where}: ${words[0]}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('parses every example of relabel --help and of each command’s help', async () => {
    const examples = exampleLines(helpTexts())
      .flatMap((line) => commandsOf(line))
      .map((words) => relabelArgs(words))
      .filter((args): args is string[] => args !== undefined);
    assert.ok(examples.length >= 8, `only ${examples.length} examples found`);
    const wrong: string[] = [];
    for (const args of examples) {
      const error = await usageError(args);
      if (error) wrong.push(`relabel ${args.join(' ')}: ${error}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('refuses what the CLI refuses (the check bites)', async () => {
    assert.match((await usageError(['update-labels', '--no-such-flag'])) ?? '', /unknown option/);
    assert.match((await usageError(['status'])) ?? '', /missing required argument/);
    assert.match((await usageError(['runs', '--limit', 'many'])) ?? '', /limit/);
  });
});
