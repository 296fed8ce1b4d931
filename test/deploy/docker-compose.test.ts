/**
 * docker-compose.yml cannot run here (no Docker engine), so it is checked
 * statically: the services exist, the relabel services run files that exist
 * with the image the repo builds, and their settings are ones relabel reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/core/plan/constants.ts';
import { parseStoreUrl } from '../../src/store/open-store.ts';
import { workerConfigFromEnv } from '../../src/worker/config.ts';

const root = new URL('../../', import.meta.url).pathname;
type Service = { image?: string; build?: string; command?: string[]; environment?: Record<string, string>; depends_on?: unknown };
const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8')) as { services: Record<string, Service> };

describe('docker-compose.yml', () => {
  it('has Temporal on PostgreSQL, the Temporal UI, the relabel worker and API server', () => {
    for (const name of ['postgresql', 'temporal', 'temporal-ui', 'relabel-worker', 'relabel-api']) assert.ok(compose.services[name], `service ${name}`);
    assert.match(compose.services.postgresql?.image ?? '', /^postgres:/);
    assert.equal(compose.services.temporal?.environment?.DB, 'postgres12');
    assert.equal(compose.services.temporal?.environment?.POSTGRES_SEEDS, 'postgresql');
    assert.match(compose.services['temporal-ui']?.image ?? '', /^temporalio\/ui:/);
  });

  it('runs relabel entry points that exist, from the image this repo builds', () => {
    assert.ok(existsSync(`${root}Dockerfile`));
    for (const name of ['relabel-worker', 'relabel-api']) {
      const service = compose.services[name] as Service;
      assert.equal(service.build, '.');
      const [runtime, ...args] = service.command ?? [];
      const script = args.find((a) => !a.startsWith('--'));
      assert.equal(runtime, 'node');
      assert.ok(existsSync(`${root}${script}`), `${name} runs ${script}, which must exist`);
    }
  });

  it('configures relabel through settings it reads', () => {
    const env = compose.services['relabel-worker']?.environment ?? {};
    const config = workerConfigFromEnv(env);
    assert.equal(config.temporalAddress, 'temporal:7233');
    assert.equal(config.kubeconfig, '/etc/relabel/kubeconfig');
    const store = parseStoreUrl(env.RELABEL_STORE_URL as string);
    assert.equal(store.kind, 'postgres');
  });

  it('registers every search attribute relabel sets', () => {
    const script = (compose.services['temporal-admin']?.command ?? []).join(' ');
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) assert.match(script, new RegExp(`--name ${name} --type ${type}`));
  });
});
