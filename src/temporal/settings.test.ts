import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectOptions, temporalSettingsFromEnv } from './settings.ts';

/** The directories {@link profiles} made, removed once the tests are done. */
const made: string[] = [];

/** A directory with a profiles file of `text`, and a HOME without one. */
function profiles(text: string): { file: string; home: string } {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-envconfig-'));
  made.push(dir);
  const file = join(dir, 'temporal.toml');
  writeFileSync(file, text);
  return { file, home: join(dir, 'home') };
}

const FILE = `
[profile.default]
address = "temporal.example:7233"
namespace = "from-default"

[profile.cloud]
address = "ns.acct.tmprl.cloud:7233"
namespace = "ns.acct"
api_key = "key-from-file"

[profile.mtls]
address = "mtls.example:7233"
[profile.mtls.tls]
server_name = "frontend"
client_cert_data = "CERT"
client_key_data = "KEY"
`;

describe('temporalSettingsFromEnv', () => {
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  it('defaults to a plain local server without a profiles file or variables', () => {
    const { home } = profiles('');
    assert.deepEqual(temporalSettingsFromEnv({ HOME: home }), { temporalAddress: 'localhost:7233', namespace: 'default', taskQueue: 'relabel' });
  });

  it('reads the variables; an empty one counts as unset', () => {
    const { home } = profiles('');
    const settings = temporalSettingsFromEnv({
      HOME: home,
      TEMPORAL_ADDRESS: 'a:1',
      TEMPORAL_NAMESPACE: '',
      RELABEL_TASK_QUEUE: 'q',
      TEMPORAL_GRPC_META_X_TEAM: 'ops',
    });
    assert.deepEqual(settings, { temporalAddress: 'a:1', namespace: 'default', taskQueue: 'q', connect: { metadata: { 'x-team': 'ops' } } });
  });

  it('reads the profile TEMPORAL_PROFILE names from TEMPORAL_CONFIG_FILE, the default profile when none is named', () => {
    const { file, home } = profiles(FILE);
    assert.deepEqual(temporalSettingsFromEnv({ HOME: home, TEMPORAL_CONFIG_FILE: file }), {
      temporalAddress: 'temporal.example:7233',
      namespace: 'from-default',
      taskQueue: 'relabel',
    });
    // An API key turns TLS on (Temporal Cloud).
    assert.deepEqual(temporalSettingsFromEnv({ HOME: home, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' }), {
      temporalAddress: 'ns.acct.tmprl.cloud:7233',
      namespace: 'ns.acct',
      taskQueue: 'relabel',
      connect: { tls: true, apiKey: 'key-from-file' },
    });
    const mtls = temporalSettingsFromEnv({ HOME: home, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'mtls' });
    const tls = connectOptions(mtls).tls as { serverNameOverride?: string; clientCertPair?: { crt: Uint8Array; key: Uint8Array } };
    assert.equal(tls.serverNameOverride, 'frontend');
    assert.equal(Buffer.from(tls.clientCertPair?.crt ?? []).toString(), 'CERT');
    assert.equal(Buffer.from(tls.clientCertPair?.key ?? []).toString(), 'KEY');
  });

  it('lets variables override the profile', () => {
    const { file, home } = profiles(FILE);
    const settings = temporalSettingsFromEnv({
      HOME: home,
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_ADDRESS: 'b:2',
      TEMPORAL_API_KEY: 'key-from-env',
      TEMPORAL_TLS: 'false',
    });
    assert.deepEqual(settings, { temporalAddress: 'b:2', namespace: 'ns.acct', taskQueue: 'relabel', connect: { tls: false, apiKey: 'key-from-env' } });
  });

  it('keeps a profile it cannot use as an error naming the file and profile, thrown on connecting', () => {
    const { file, home } = profiles(FILE);
    const missing = temporalSettingsFromEnv({ HOME: home, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope', TEMPORAL_ADDRESS: 'c:3' });
    assert.equal(missing.temporalAddress, 'c:3');
    assert.equal(missing.configError, `Temporal connection settings (profile nope of ${file}): Profile 'nope' not found in config data`);
    assert.throws(() => connectOptions(missing), { message: missing.configError });

    const broken = profiles('[profile.default\naddress = 1');
    const invalid = temporalSettingsFromEnv({ HOME: broken.home, TEMPORAL_CONFIG_FILE: broken.file });
    assert.match(invalid.configError ?? '', new RegExp(`^Temporal connection settings \\(profile default of ${broken.file}\\): .+`));
    assert.ok((invalid.configError ?? '').length < 400);

    const certs = profiles('[profile.default.tls]\nclient_cert_path = "/nonexistent/client.pem"\nclient_key_path = "/nonexistent/client.key"\n');
    assert.match(temporalSettingsFromEnv({ HOME: certs.home, TEMPORAL_CONFIG_FILE: certs.file }).configError ?? '', /ENOENT.*\/nonexistent\/client\.pem/);
  });

  it('reads a TEMPORAL_CONFIG_FILE that does not exist as no profiles', () => {
    const { home } = profiles('');
    assert.deepEqual(temporalSettingsFromEnv({ HOME: home, TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }), {
      temporalAddress: 'localhost:7233',
      namespace: 'default',
      taskQueue: 'relabel',
    });
  });
});
