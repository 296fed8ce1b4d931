/**
 * `npm run demo`: the whole product on the embedded default. Builds the
 * servers if needed, starts the local stack and a worker, then drives the
 * real `relabel` CLI as an operator would: stage and commit the sample site,
 * record a site action, register the sample nodes, run update_labels, change
 * one document, commit, run again and show exactly that change applied.
 * The stack stays up afterwards so the runs can be browsed in the Temporal UI.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { OWNED_ANNOTATIONS_ANNOTATION, OWNED_LABELS_ANNOTATION, OWNED_TAINTS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../src/core/plan/constants.ts';
import { validateSite } from '../src/core/site/validate-site.ts';
import { defaultStackDir, envLines } from '../stack/cli.ts';
import { isAlive } from '../stack/processes.ts';
import { readStack, startStack, type StackInfo } from '../stack/stack.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../src/worker/config.ts';

const root = resolve(import.meta.dirname, '..');
const say = (text: string) => console.log(`\n\x1b[1m==> ${text}\x1b[0m`);

function ensureTools(): void {
  // The demo needs the servers only; the test Keystone (Python) is the tests' own.
  const built = spawnSync(join(root, 'tools/build-tools.sh'), ['--servers'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('building the local stack servers failed (see above)');
}

async function ensureStack(dir: string): Promise<StackInfo> {
  const existing = readStack(dir);
  if (existing && existing.processes.every((p) => isAlive(p.pid))) {
    console.log(`using the stack already running in ${dir}`);
    return existing;
  }
  return startStack({ dir, log: (l) => console.log(l) });
}

function startWorker(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = fork(join(root, 'src/worker.ts'), [], {
    execArgv: [...process.execArgv, ...WORKER_NODE_FLAGS],
    env: { ...env, ...WORKER_ENV, RELABEL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((res, rej) => {
    child.once('message', () => res(child));
    child.once('exit', (code) => rej(new Error(`the worker exited with ${code}`)));
  });
}

/** Runs the real CLI, showing the command and its output; returns its exit code. */
function relabel(env: NodeJS.ProcessEnv, ...args: string[]): number {
  console.log(`$ relabel ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [join(root, 'src/client.ts'), ...args], { env, stdio: 'inherit' });
  return r.status ?? 1;
}

async function registerNodes(adminKubeconfig: string, names: string[]): Promise<void> {
  const core = loadKubeConfig(adminKubeconfig).makeApiClient(CoreV1Api);
  let created = 0;
  for (const name of names) {
    try {
      await core.createNode({
        body: {
          // Joined with the uninitialized taint: no pods until relabel's labels have landed.
          spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }] },
          metadata: {
            name,
            labels: {
              'kubernetes.io/hostname': name,
              'kubernetes.io/os': 'linux',
              'kubernetes.io/arch': 'amd64',
              'beta.kubernetes.io/os': 'linux',
              'beta.kubernetes.io/arch': 'amd64',
              'example.com/owner': 'ops-team',
            },
          },
        },
      });
      created++;
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
  console.log(
    `${created} node(s) registered, ${names.length - created} already there; each carries example.com/owner=ops-team ` +
      `(a label relabel must never touch) and the ${UNINITIALIZED_TAINT_KEY}:NoSchedule taint (the policy lifts it with the labels)`,
  );
}

async function main(): Promise<void> {
  say('Building the local stack servers from Go modules (cached after the first time)');
  ensureTools();
  const stackDir = defaultStackDir();
  say('Starting the local stack: Temporal dev server + Web UI, etcd, kube-apiserver (RBAC on)');
  const stack = await ensureStack(stackDir);
  const demoDir = join(stackDir, 'demo');
  rmSync(demoDir, { recursive: true, force: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_UI_URL: stack.temporalUiUrl,
    KUBECONFIG: stack.kubeconfig,
    RELABEL_STORE_URL: `sqlite:${join(demoDir, 'revisions.db')}`,
  };
  say('Starting a relabel worker');
  const worker = await startWorker(env);
  try {
    const site = join(root, 'examples/site');
    const validation = validateSite(
      ['nodes.yaml', 'policy.yaml', 'profiles.yaml', 'racks.yaml', 'site.yaml'].map((f) => ({ source: f, text: readFileSync(join(site, f), 'utf8') })),
    );
    if (!validation.ok) throw new Error('the sample site does not validate');
    const nodes = Object.keys(validation.design.nodes);

    say('Staging and committing the sample site, and recording a site action');
    if (relabel(env, 'docs', 'stage', 'site', site) !== 0) throw new Error('staging failed');
    relabel(env, 'docs', 'commit', '-m', 'sample site');
    relabel(env, 'docs', 'tag', '1', 'site-action-success', '--data', '{"action":"deploy_site"}');

    say(`Registering the ${nodes.length} sample nodes as the kubelet would`);
    await registerNodes(stack.adminKubeconfig, nodes);

    say('update_labels on every node of the site');
    const first = relabel(env, 'update-labels', '--nodes', nodes.join(','), '--wait');
    if (first !== 0) throw new Error(`update_labels exited with ${first}`);

    say('Changing one document: the compute-dpdk profile gains sriov-vf=enabled');
    const edited = mkdtempSync(join(tmpdir(), 'relabel-demo-site-'));
    cpSync(site, edited, { recursive: true });
    const profiles = join(edited, 'profiles.yaml');
    const text = readFileSync(profiles, 'utf8').replace('      hugepages-1gi: enabled\n', '      hugepages-1gi: enabled\n      sriov-vf: enabled\n');
    writeFileSync(profiles, text);
    relabel(env, 'docs', 'stage', 'site', edited);
    relabel(env, 'docs', 'commit', '-m', 'SR-IOV VFs on DPDK compute nodes');
    relabel(env, 'docs', 'diff', '1', '2');

    say('update_labels again: exactly that change is applied, nothing else is written');
    const second = relabel(env, 'update-labels', '--nodes', nodes.join(','), '--wait');
    if (second !== 0) throw new Error(`update_labels exited with ${second}`);

    const sample = nodes.find((n) => validation.design.nodes[n]?.hostProfile === 'compute-dpdk') ?? nodes[0];
    say(`Labels of ${sample} now (kubectl get node ${sample} --show-labels)`);
    const node = await loadKubeConfig(stack.adminKubeconfig)
      .makeApiClient(CoreV1Api)
      .readNode({ name: sample as string });
    for (const [k, v] of Object.entries(node.metadata?.labels ?? {}).sort()) console.log(`  ${k}=${v}`);
    console.log(
      `  (annotation ${OWNED_LABELS_ANNOTATION} lists the ${node.metadata?.annotations?.[OWNED_LABELS_ANNOTATION]?.split(',').length} keys relabel owns)`,
    );
    const taints = (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
    console.log(`  taints: ${taints.length ? taints.join(', ') : 'none'} (${UNINITIALIZED_TAINT_KEY} lifted by the first run)`);

    const storage = nodes.find((n) => validation.design.nodes[n]?.hostProfile === 'storage') ?? nodes[0];
    say(`Annotations and taints relabel manages on ${storage} (from the storage host profile)`);
    const stored = await loadKubeConfig(stack.adminKubeconfig)
      .makeApiClient(CoreV1Api)
      .readNode({ name: storage as string });
    const owned = stored.metadata?.annotations?.[OWNED_ANNOTATIONS_ANNOTATION]?.split(',') ?? [];
    for (const key of owned) console.log(`  annotation ${key}=${stored.metadata?.annotations?.[key] ?? ''}`);
    console.log(`  taints: ${(stored.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ') || 'none'}`);
    console.log(`  (owned taints: ${stored.metadata?.annotations?.[OWNED_TAINTS_ANNOTATION] ?? 'none'}; anyone else's are never touched)`);
  } finally {
    worker.kill('SIGTERM');
  }
  say('Done. The stack is still up: browse the runs in the Temporal UI');
  console.log(`  ${stack.temporalUiUrl}/namespaces/default/workflows`);
  console.log(`To use the CLI against it:\n  ${envLines(stack).join('\n  ')}\n  export RELABEL_STORE_URL=${env.RELABEL_STORE_URL}`);
  console.log('Stop it with: npm run stack:down');
}

main().catch((err: unknown) => {
  console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
