/**
 * The flags that choose a run's targets (`update-labels`, `plan`): named
 * nodes, names from a file, every node of the design, or a Drydock-style
 * filter; exactly one of them.
 */
import { type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { normalizeTargets } from '../core/plan/targets.ts';
import type { TargetSelection } from '../facade/index.ts';
import { ExitCode } from './exit-codes.ts';
import { labelPair, nameList, nodeList } from './parsers.ts';

/** The flags of update-labels (and plan) that choose the targets. */
export type TargetOptions = {
  nodes?: string[];
  nodesFrom?: string;
  all?: boolean;
  nodeSet?: string[];
  rack?: string[];
  tag?: string[];
  label?: Record<string, string>;
};

/** Node names read from `file` (`-`: standard input), separated by commas or white space. */
function namesFrom(file: string, cmd: Command): string[] {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    cmd.error(`error: cannot read ${file === '-' ? 'standard input' : file}: ${(err as Error).message}`, { exitCode: ExitCode.invalidInput });
  }
  const names = text.split(/[\s,]+/).filter((n) => n !== '');
  const parsed = normalizeTargets(names);
  if (!parsed.ok) cmd.error(`error: --nodes-from ${file}: ${parsed.message}`, { exitCode: ExitCode.invalidInput });
  return parsed.targets;
}

/**
 * What update-labels runs on: named targets, or a selection from the
 * design. Exactly one of --nodes, --nodes-from, --all and a filter; a usage
 * error (exit 2) otherwise, before anything is opened.
 */
export function targetsOf(opts: TargetOptions, cmd: Command): { targets: string[] } | { targets: undefined; select: TargetSelection } {
  const filter = {
    ...(opts.rack ? { rack_names: opts.rack } : {}),
    ...(opts.tag ? { node_tags: opts.tag } : {}),
    ...(opts.label ? { node_labels: opts.label } : {}),
  };
  const hasFilter = Object.keys(filter).length > 0;
  const given = [opts.nodes !== undefined, opts.nodesFrom !== undefined, opts.all === true, opts.nodeSet !== undefined, hasFilter].filter(Boolean).length;
  if (given !== 1) {
    cmd.error(
      `error: choose the targets with exactly one of --nodes, --nodes-from, --all, --node-set, or --rack/--tag/--label${given > 1 ? ' (several were given)' : ''}`,
      {
        exitCode: ExitCode.invalidInput,
      },
    );
  }
  if (opts.nodes) return { targets: opts.nodes };
  if (opts.nodesFrom !== undefined) return { targets: namesFrom(opts.nodesFrom, cmd) };
  if (opts.all) return { targets: undefined, select: { all: true } };
  if (opts.nodeSet) return { targets: undefined, select: { nodeSets: opts.nodeSet } };
  return { targets: undefined, select: { filter: { filter_set_type: 'intersection', filter_set: [{ filter_type: 'intersection', ...filter }] } } };
}

/** Adds the flags choosing the targets: --nodes, --nodes-from, --all, --node-set, and the filter flags --rack, --tag, --label. */
export function withTargetOptions(cmd: Command): Command {
  return cmd
    .option('--nodes <names>', 'comma-separated node names, such as n1,n2', nodeList)
    .option('--nodes-from <file>', 'node names from a file (- for standard input), separated by commas, spaces or lines')
    .option('--all', "every node of the revision's design, the members of its node sets included")
    .option('--node-set <names>', 'the members of these node sets, found in the cluster when the run is planned (comma-separated; repeatable)', nameList)
    .option('--rack <names>', 'nodes in one of these racks (comma-separated; repeatable)', nameList)
    .option('--tag <tags>', 'nodes with every one of these tags (comma-separated; repeatable)', nameList)
    .option('--label <key=value>', 'nodes whose design labels include this pair (repeatable; all must match)', labelPair);
}
