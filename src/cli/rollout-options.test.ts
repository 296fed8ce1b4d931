import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ExitCode } from './exit-codes.ts';
import type { Rollout } from '../core/plan/waves.ts';
import {
  checkedRollout,
  parseCanaryFlag,
  parseHealthTimeoutFlag,
  parseMaxFailedNodesFlag,
  parseWaveSizeFlag,
  parseWavesFlag,
  withRolloutOptions,
  type RolloutFlags,
} from './rollout-options.ts';

/** Parses `args` as a command with the rollout flags; the flags it got, or the usage error it gave. */
function parse(args: string[]): { flags?: RolloutFlags; rollout?: Rollout | undefined; error?: string; exitCode?: number } {
  let out: { flags?: RolloutFlags; rollout?: Rollout | undefined } = {};
  let error = '';
  const cmd = withRolloutOptions(new Command('update-labels'))
    .exitOverride()
    .configureOutput({ writeErr: (s) => (error += s), writeOut: () => undefined })
    .action((flags: RolloutFlags, c: Command) => {
      out = { flags, rollout: checkedRollout(flags, c) };
    });
  try {
    cmd.parse(args, { from: 'user' });
    return out;
  } catch (err) {
    assert.ok(err instanceof CommanderError, String(err));
    return { error, exitCode: err.exitCode };
  }
}

test("the rollout flags parse into the run's rollout", () => {
  const { rollout } = parse([
    '--waves',
    'rack',
    '--wave-size',
    '10%',
    '--canary',
    '1',
    '--approval',
    'first',
    '--health-timeout',
    '600',
    '--max-failed-nodes',
    '2',
  ]);
  assert.deepEqual(rollout, { by: 'rack', size: { percent: 10 }, canary: 1, approval: 'first', healthTimeoutSeconds: 600, maxFailedNodes: 2 });
  assert.deepEqual(parse(['--waves', 'label:ceph-osd', '--wave-size', '25']).rollout, { by: { label: 'ceph-osd' }, size: { count: 25 } });
  assert.deepEqual(parse(['--waves', 'none']).rollout, { by: 'none' });
  assert.deepEqual(parse(['--health-timeout', '0']).rollout, { healthTimeoutSeconds: 0 }, 'no health gate');
  assert.equal(parse([]).rollout, undefined, 'no flag: no rollout, the policy decides');
});

test('a bad value is a usage error naming the flag', () => {
  const cases: [string[], string][] = [
    [['--waves', 'row'], "option '--waves <rack|label:KEY|none>' argument 'row' is invalid"],
    [['--waves', 'label:'], 'expected rack, label:<key> or none'],
    [['--wave-size', '0'], "option '--wave-size <N|P%>' argument '0' is invalid"],
    [['--wave-size', '101%'], 'a percentage from 1% to 100%'],
    [['--canary', '0'], "option '--canary <n>' argument '0' is invalid"],
    [['--approval', 'sometimes'], "option '--approval <gate>' argument 'sometimes' is invalid. Allowed choices are none, first, each"],
    [['--health-timeout', '86401'], "option '--health-timeout <seconds>' argument '86401' is invalid"],
    [['--health-timeout', '1.5'], 'whole seconds'],
    [['--max-failed-nodes', '-1'], "option '--max-failed-nodes <n>' argument '-1' is invalid"],
  ];
  for (const [args, message] of cases) {
    const { error, exitCode } = parse(args);
    assert.ok(error?.includes(message), `${args.join(' ')}: ${error}`);
    assert.notEqual(exitCode, 0, args.join(' '));
  }
});

test("the parsers throw commander's InvalidArgumentError with the core's message", () => {
  assert.deepEqual(parseWavesFlag(' rack '), 'rack');
  assert.deepEqual(parseWaveSizeFlag('5'), { count: 5 });
  assert.equal(parseCanaryFlag('3'), 3);
  assert.equal(parseHealthTimeoutFlag('86400'), 86_400);
  assert.equal(parseMaxFailedNodesFlag('0'), 0);
  assert.throws(
    () => parseWavesFlag('label:a b'),
    (e: unknown) => e instanceof InvalidArgumentError && /expected rack, label:<key> or none/.test(e.message),
  );
  assert.throws(() => parseWaveSizeFlag('ten'), InvalidArgumentError);
  assert.throws(() => parseCanaryFlag('1e3'), InvalidArgumentError);
});

test('checkedRollout refuses what the facade would, with exit 2', () => {
  const cmd = new Command('x').exitOverride().configureOutput({ writeErr: () => undefined });
  assert.throws(
    () => checkedRollout({ canary: 0 }, cmd),
    (e: unknown) => e instanceof CommanderError && e.exitCode === ExitCode.invalidInput && /invalid rollout: canary/.test(e.message),
  );
});
