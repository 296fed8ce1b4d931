/**
 * Every way of starting the worker (npm script, image, compose file, cluster
 * manifest) passes exactly the V8 flags and the environment the worker is
 * measured with.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { WORKER_ENV, WORKER_NODE_FLAGS } from './config.ts';

const root = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('worker launchers', () => {
  it('start node with WORKER_NODE_FLAGS before src/worker.ts', () => {
    const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.worker;
    const env = Object.entries(WORKER_ENV).map(([name, value]) => `${name}=${value}`);
    assert.equal(script, `${env.join(' ')} node ${WORKER_NODE_FLAGS.join(' ')} src/worker.ts`);
    const command = JSON.stringify(['node', ...WORKER_NODE_FLAGS, 'src/worker.ts']).replaceAll(',', ', ');
    for (const file of ['Dockerfile', 'docker-compose.yml', 'deploy/worker.yaml']) {
      assert.ok(read(file).includes(command), `${file} starts the worker with ${command}`);
    }
  });

  it('the image sets WORKER_ENV, for the compose file and the cluster manifests that run it', () => {
    const image = read('Dockerfile');
    for (const [name, value] of Object.entries(WORKER_ENV)) assert.match(image, new RegExp(`^ENV ${name}=${value}$`, 'm'), `Dockerfile sets ${name}=${value}`);
  });
});
