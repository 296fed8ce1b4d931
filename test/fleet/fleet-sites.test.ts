/**
 * The fleet registry through the CLI, against the real Temporal server:
 * sites registered with their own task queues, and each site's worker
 * health as Temporal's pollers show it — a real relabel worker polling one
 * site's queue counts as polling, a queue no worker polls does not.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FleetPage } from '../../src/facade/fleet.ts';
import { exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';

describe('relabel fleet sites', () => {
  const store = `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-fleet-')), 'centre.db')}`;
  const suffix = uniqueSuffix();
  const [served, gone] = [`fs${suffix}-a`, `fs${suffix}-b`];
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  const cli = (...args: string[]) => relabelCli(['--store', store, 'fleet', 'sites', ...args]);

  before(async () => {
    relabel = await startRelabel(`sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-site-')), 'site.db')}`);
  });
  after(async () => {
    await relabel?.stop();
  });

  it("registers sites on their own queues and shows which one's worker polls", async () => {
    exits(await cli('add', served, '--queue', relabel.taskQueue, '--label', 'region=east', '--label', 'type=edge'), 0);
    exits(await cli('add', gone, '--label', 'region=west'), 0);
    const taken = exits(await cli('add', `fs${suffix}-c`, '--queue', relabel.taskQueue), 5);
    assert.match(taken.stderr, new RegExp(`task queue ${relabel.taskQueue} is already site ${served}'s`));

    // The worker polls for workflow and activity tasks once it runs: Temporal lists it among the queue's pollers.
    let page: FleetPage | undefined;
    for (let tries = 0; tries < 50; tries++) {
      const listed = await cli('list', '-o', 'json');
      page = JSON.parse(listed.stdout) as FleetPage;
      if (page.sites.find((s) => s.name === served)?.worker?.polling) {
        exits(listed, 4);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [a, b] = [page?.sites.find((s) => s.name === served), page?.sites.find((s) => s.name === gone)];
    assert.deepEqual([a?.taskQueue, a?.labels, a?.worker?.polling], [relabel.taskQueue, { region: 'east', type: 'edge' }, true]);
    assert.ok((a?.worker?.workers ?? 0) >= 1 && (a?.worker?.identities.length ?? 0) >= 1, JSON.stringify(a?.worker));
    assert.deepEqual([b?.taskQueue, b?.worker], [`relabel-${gone}`, { polling: false, workers: 0, identities: [] }]);
    assert.match((await cli('list')).stdout, new RegExp(`${gone}\\s+relabel-${gone}\\s+region=west\\s+NO WORKER`));
  });

  it('removes a site, refuses an unknown one, and pages in name order', async () => {
    exits(await cli('remove', gone), 0);
    assert.match(exits(await cli('remove', gone), 3).stderr, new RegExp(`site ${gone} is not registered`));
    exits(await cli('add', `fs${suffix}-d`), 0);
    const first = JSON.parse(exits(await cli('list', '--no-health', '--limit', '1', '-o', 'json'), 0).stdout) as FleetPage;
    assert.deepEqual([first.sites.map((s) => s.name), first.total, first.next], [[served], 2, served]);
    const second = JSON.parse(exits(await cli('list', '--no-health', '--after', served, '-o', 'json'), 0).stdout) as FleetPage;
    assert.deepEqual([second.sites.map((s) => s.name), second.next], [[`fs${suffix}-d`], undefined]);
  });
});
