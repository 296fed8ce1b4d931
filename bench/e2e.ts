/**
 * `npm run bench:e2e -- [NODES] [CONCURRENCY...]`: update_labels end to end on
 * a local stack of its own (real Temporal, real kube-apiserver), one worker
 * process in this process. Registers NODES nodes, then for each concurrency
 * runs update_labels over all of them twice (a first run that writes every
 * node, and an immediate second one that writes none) and prints nodes per
 * second and the worker's peak heap. Stops its stack at the end.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { parseAllDocuments } from 'yaml';
import { loadKubeConfig } from '../src/activities/kube-nodes.ts';
import { createRuns } from '../src/facade/runs.ts';
import { freePorts, startStack, stopStack } from '../src/stack/stack.ts';
import { openStore } from '../src/store/open-store.ts';
import { createWorker } from '../src/worker.ts';

const count = Number(process.argv[2] ?? 500);
const concurrencies = process.argv.slice(3).map(Number);
if (concurrencies.length === 0) concurrencies.push(10, 50);

/** The sample site with `count` nodes generated from its node templates, in a site of its own. */
function site(): { files: { source: string; text: string }[]; nodes: string[] } {
  const dir = new URL('../examples/site/', import.meta.url).pathname;
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml')).map((f) => ({ source: f, text: readFileSync(join(dir, f), 'utf8') }));
  const templates = parseAllDocuments(files.find((f) => f.source === 'nodes.yaml')?.text ?? '').map((d) => d.toJS()).filter(Boolean);
  const nodes: string[] = [];
  const docs = Array.from({ length: count }, (_, i) => {
    const doc = structuredClone(templates[i % templates.length]);
    doc.metadata.name = `bench-${String(i).padStart(5, '0')}`;
    nodes.push(doc.metadata.name);
    return `---\n${JSON.stringify(doc)}\n`;
  });
  return { files: [...files.filter((f) => f.source !== 'nodes.yaml'), { source: 'nodes.yaml', text: docs.join('') }], nodes };
}

/** `files` with a `bench-round` label added to the base host profile (inherited by every node). */
function withRound(files: { source: string; text: string }[], round: number) {
  return files.map((f) =>
    f.source === 'profiles.yaml' ? { ...f, text: f.text.replace('      node-exporter: enabled\n', `      node-exporter: enabled\n      bench-round: "r${round}"\n`) } : f,
  );
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bench-'));
  const stack = await startStack({ dir: join(dir, 'stack'), ports: await freePorts() });
  try {
    const { files, nodes } = site();
    const storeUrl = `sqlite:${join(dir, 'revisions.db')}`;
    const store = await openStore(storeUrl);
    await store.stage('site', files);
    await store.tag((await store.commit()).id, 'site-action-success');
    const core = loadKubeConfig(stack.adminKubeconfig).makeApiClient(CoreV1Api);
    let t0 = performance.now();
    for (const name of nodes) await core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
    console.log(`registered ${count} nodes in ${Math.round(performance.now() - t0)} ms`);

    const taskQueue = 'relabel-bench';
    const { worker, close } = await createWorker({ temporalAddress: stack.temporalAddress, namespace: 'default', taskQueue, kubeconfig: stack.kubeconfig, storeUrl });
    const running = worker.run();
    const connection = await Connection.connect({ address: stack.temporalAddress });
    const runs = createRuns({ client: new Client({ connection }), store, taskQueue, namespace: 'default' });
    let peakHeap = 0;
    const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 200);
    const results = [];
    for (const [round, concurrency] of concurrencies.entries()) {
      if (round > 0) {
        // A new revision changing one inherited label, so this round's first pass writes every node again.
        await store.stage('site', withRound(files, round));
        await store.commit({ message: `bench round ${round}` });
      }
      for (const pass of ['write', 'no-op'] as const) {
        t0 = performance.now();
        const done = await runs.wait(await runs.start({ targets: nodes, concurrency }));
        const ms = performance.now() - t0;
        results.push({ concurrency, pass, nodes: count, status: done.result?.status, written: done.result?.counts.written, seconds: +(ms / 1000).toFixed(1), nodesPerSecond: Math.round(count / (ms / 1000)) });
        console.log(JSON.stringify(results.at(-1)));
      }
    }
    clearInterval(sampler);
    console.log(JSON.stringify({ peakHeapMB: Math.round(peakHeap / 1e6) }));
    worker.shutdown();
    await running;
    await close();
    await connection.close();
    await store.close();
  } finally {
    await stopStack(join(dir, 'stack'), { purge: true });
  }
}

main().catch((err: unknown) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
