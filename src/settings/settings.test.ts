/**
 * The settings table: a value is parsed by one parser whether it comes from
 * a flag or from the environment, and refused with the same rule naming
 * the flag and the variable; the entry points refuse a bad variable before
 * opening anything.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { workerConfigFromEnv } from '../worker/config.ts';
import { relabelConfigFromEnv } from '../facade/index.ts';
import { environmentHelp, SettingError, settingFromEnv, settingOption, variableFromEnv, type Setting } from './setting.ts';
import { API, CONNECTION, PROXY_VARIABLES, VARIABLES, WORKER } from './table.ts';
import { defaultDataDir } from '../store/open-store.ts';
import { runNode } from '../../test/kit/node-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Commander's message for `value` given as the setting's flag. */
function flagError(setting: Setting<unknown>, value: string): string {
  let message = '';
  const program = new Command('t')
    .exitOverride()
    .configureOutput({ writeErr: (text) => (message += text) })
    .addOption(settingOption(setting));
  assert.throws(() => program.parse([setting.flags.split(' ')[0] ?? '', value], { from: 'user' }), CommanderError);
  return message.trim();
}

/** The message of the SettingError `value` of the setting's variable raises. */
function envError(setting: Setting<unknown>, value: string): string {
  const env = { [setting.env ?? '']: value };
  try {
    settingFromEnv(setting, env);
  } catch (err) {
    assert.ok(err instanceof SettingError);
    return err.message;
  }
  assert.fail(`${setting.env}=${value} was accepted`);
}

/** A node process on an entry point, with `env` added; it must stop by itself. */
function entry(path: string, args: string[], env: Record<string, string>) {
  return runNode([path, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
}

describe('settings: one parser for the flag and the variable', () => {
  const bad: [Setting<unknown>, string, string][] = [
    [WORKER.kubeQps, 'fifty', 'must be a whole number ≥ 0'],
    [WORKER.kubeBurst, '-1', 'must be a whole number ≥ 0'],
    [WORKER.metricsPort, '70000', 'must be a port number, 0 to 65535'],
    [WORKER.metricsAddress, 'everywhere', 'must be an IP address of this host'],
    [CONNECTION.logLevel, 'loud', 'log level "loud": expected one of trace, debug, info, warn, error'],
  ];
  for (const [setting, value, rule] of bad) {
    it(`refuses ${setting.env}=${value} as it refuses ${setting.flags.split(' ')[0]} ${value}`, () => {
      const fromEnv = envError(setting, value);
      const fromFlag = flagError(setting, value);
      assert.ok(fromEnv.startsWith(`option '${setting.flags}' value '${value}' from env '${setting.env}' is invalid. ${rule}`), fromEnv);
      assert.ok(fromFlag.startsWith(`error: option '${setting.flags}' argument '${value}' is invalid. ${rule}`), fromFlag);
      assert.equal(fromEnv.split('is invalid. ')[1], fromFlag.split('is invalid. ')[1], 'the same rule both ways');
    });
  }

  it('reads good values, treats an empty variable as unset, and refuses RELABEL_KUBE_QPS=fifty in the worker configuration', () => {
    assert.equal(settingFromEnv(WORKER.kubeQps, { RELABEL_KUBE_QPS: '7' }), 7);
    assert.equal(settingFromEnv(WORKER.metricsPort, { RELABEL_METRICS_PORT: '' }), undefined);
    assert.equal(workerConfigFromEnv({ RELABEL_KUBE_QPS: '0' }).kubeQps, 0);
    assert.throws(() => workerConfigFromEnv({ RELABEL_KUBE_QPS: 'fifty' }), /option '--kube-qps <n>' value 'fifty' from env 'RELABEL_KUBE_QPS' is invalid/);
    assert.equal(relabelConfigFromEnv({ RELABEL_STORE_URL: 'sqlite:/tmp/x.db' }).storeUrl, 'sqlite:/tmp/x.db');
  });

  it('declares each flag and each variable once', () => {
    const rows: Setting<unknown>[] = [...Object.values(CONNECTION), ...Object.values(WORKER), ...Object.values(API)];
    const flags = rows.map((s) => s.flags.split(' ')[0]);
    const vars = [...rows.flatMap((s) => (s.env ? [s.env] : [])), ...Object.values(VARIABLES).map((v) => v.env), ...PROXY_VARIABLES.map((v) => v.env)];
    assert.equal(new Set(flags).size, flags.length, flags.join());
    assert.equal(new Set(vars).size, vars.length, vars.join());
  });
});

describe('settings: variables with no flag', () => {
  it('reads each from its row, an empty value as unset, with the default of the row', () => {
    assert.equal(variableFromEnv(VARIABLES.uiUrl, {}), 'http://localhost:8233');
    assert.equal(variableFromEnv(VARIABLES.uiUrl, { TEMPORAL_UI_URL: '' }), 'http://localhost:8233');
    assert.equal(relabelConfigFromEnv({ TEMPORAL_UI_URL: 'http://ui:8080' }).uiUrl, 'http://ui:8080');
    assert.equal(relabelConfigFromEnv({}).searchAttributes, true);
    assert.equal(relabelConfigFromEnv({ RELABEL_SEARCH_ATTRIBUTES: 'off' }).searchAttributes, false);
    assert.equal(workerConfigFromEnv({ RELABEL_SEARCH_ATTRIBUTES: 'off' }).searchAttributes, false);
    assert.equal(variableFromEnv(VARIABLES.debug, {}), false);
    assert.equal(variableFromEnv(VARIABLES.debug, { RELABEL_DEBUG: '1' }), true);
    assert.equal(variableFromEnv(VARIABLES.path, {}), '/usr/local/bin:/usr/bin:/bin');
    assert.equal(defaultDataDir({ RELABEL_DATA_DIR: '/srv/relabel', XDG_DATA_HOME: '/xdg' }), '/srv/relabel');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: '/xdg' }), '/xdg/relabel');
  });

  it('names the variable of a refused value', () => {
    const strict = { env: 'RELABEL_X', help: 'x', parse: (v: string) => WORKER.kubeQps.parse(v) };
    assert.throws(() => settingFromEnv(strict, { RELABEL_X: 'many' }), {
      name: 'SettingError',
      message: "env 'RELABEL_X' value 'many' is invalid. must be a whole number ≥ 0",
    });
  });

  it('lists a variable in the help with no flag after it', () => {
    assert.equal(environmentHelp([VARIABLES.uiUrl]), '  TEMPORAL_UI_URL  Temporal Web UI, for links (default http://localhost:8233)');
  });
});

describe('settings: the entry points refuse a bad variable before opening anything', { concurrency: true }, () => {
  it('the worker exits 1 on RELABEL_KUBE_QPS=fifty with the message of --kube-qps fifty, naming the variable', async () => {
    const [byEnv, byFlag] = await Promise.all([entry('src/worker.ts', [], { RELABEL_KUBE_QPS: 'fifty' }), entry('src/worker.ts', ['--kube-qps', 'fifty'], {})]);
    assert.equal(byEnv.status, 1);
    assert.equal(byEnv.stderr, "error: option '--kube-qps <n>' value 'fifty' from env 'RELABEL_KUBE_QPS' is invalid. must be a whole number ≥ 0\n");
    assert.equal(byFlag.status, 1);
    assert.equal(byFlag.stderr, "error: option '--kube-qps <n>' argument 'fifty' is invalid. must be a whole number ≥ 0\n");
  });

  it('the API server exits 1 on RELABEL_LOG_LEVEL=loud, as on --log-level loud', async () => {
    const [byEnv, byFlag] = await Promise.all([
      entry('src/api/main.ts', ['--listen', '127.0.0.1:0'], { RELABEL_LOG_LEVEL: 'loud' }),
      entry('src/api/main.ts', ['--listen', '127.0.0.1:0', '--log-level', 'loud'], {}),
    ]);
    assert.equal(byEnv.status, 1);
    assert.match(byEnv.stderr, /^error: option '--log-level <level>' value 'loud' from env 'RELABEL_LOG_LEVEL' is invalid\. log level "loud": expected one of/);
    assert.equal(byFlag.status, 1);
    assert.match(byFlag.stderr, /^error: option '--log-level <level>' argument 'loud' is invalid\. log level "loud": expected one of/);
  });
});
