/**
 * `npm run stack:up` / `stack:down` / `stack:status`: the local stack from a
 * shell. Ports come from flags or RELABEL_STACK_PORT_* variables.
 */
import { Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_PORTS, readStack, startStack, stopStack, type StackInfo, type StackPorts } from './stack.ts';
import { isAlive } from './processes.ts';

/** Directory holding the local stack's data, logs and state. */
export function defaultStackDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.RELABEL_STACK_DIR ?? '.data/stack');
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError(`not a TCP port: ${value}`);
  return n;
}

/** Shell lines exporting what clients need to reach the stack. */
export function envLines(info: StackInfo): string[] {
  return [
    `export TEMPORAL_ADDRESS=${info.temporalAddress}`,
    `export TEMPORAL_UI_URL=${info.temporalUiUrl}`,
    `export KUBECONFIG=${info.kubeconfig}`,
    `export RELABEL_ADMIN_KUBECONFIG=${info.adminKubeconfig}`,
  ];
}

interface UpOptions {
  dir: string;
  temporalPort: number;
  temporalHttpPort?: number;
  temporalMetricsPort?: number;
  uiPort: number;
  apiserverPort: number;
  etcdPort: number;
  etcdPeerPort?: number;
  output: string;
}

const program = new Command('stack').description('Run the local Temporal + Kubernetes stack on loopback');

program
  .command('up')
  .description('start Temporal (with Web UI), etcd and kube-apiserver; wait until ready')
  .option('--dir <dir>', 'data, logs and state directory', defaultStackDir())
  .option('--temporal-port <port>', 'Temporal frontend gRPC port', port, DEFAULT_PORTS.temporal)
  .option('--ui-port <port>', 'Temporal Web UI port', port, DEFAULT_PORTS.temporalUi)
  .option('--apiserver-port <port>', 'kube-apiserver secure port', port, DEFAULT_PORTS.apiserver)
  .option('--temporal-http-port <port>', 'Temporal HTTP API port (default: Temporal port + 10)', port)
  .option('--temporal-metrics-port <port>', 'Temporal metrics port (default: Temporal port + 11)', port)
  .option('--etcd-port <port>', 'etcd client port', port, DEFAULT_PORTS.etcdClient)
  .option('--etcd-peer-port <port>', 'etcd peer port (default: etcd client port + 1)', port)
  .option('-o, --output <format>', 'text or json', 'text')
  .action(async (opts: UpOptions) => {
    const ports: StackPorts = {
      temporal: opts.temporalPort,
      temporalHttp: opts.temporalHttpPort ?? opts.temporalPort + 10,
      temporalMetrics: opts.temporalMetricsPort ?? opts.temporalPort + 11,
      temporalUi: opts.uiPort,
      apiserver: opts.apiserverPort,
      etcdClient: opts.etcdPort,
      etcdPeer: opts.etcdPeerPort ?? opts.etcdPort + 1,
    };
    const info = await startStack({ dir: opts.dir, ports, log: (l) => console.error(l) });
    if (opts.output === 'json') {
      console.log(JSON.stringify(info, null, 2));
    } else {
      console.log(`stack up in ${info.dir} (logs there). Temporal UI: ${info.temporalUiUrl}`);
      console.log(envLines(info).join('\n'));
    }
  });

program
  .command('down')
  .description('stop every process of the stack and wait for them to exit')
  .option('--dir <dir>', 'data, logs and state directory', defaultStackDir())
  .option('--purge', 'also delete the data directory')
  .action(async (opts: { dir: string; purge?: boolean }) => {
    const stopped = await stopStack(opts.dir, { purge: opts.purge });
    console.log(stopped.length ? `stopped ${stopped.join(', ')}` : 'no stack was running');
  });

program
  .command('status')
  .description('show whether the stack is running and how to reach it')
  .option('--dir <dir>', 'data, logs and state directory', defaultStackDir())
  .option('-o, --output <format>', 'text or json', 'text')
  .action((opts: { dir: string; output: string }) => {
    const info = readStack(opts.dir);
    const running = info?.processes.filter((p) => isAlive(p.pid)).map((p) => p.name) ?? [];
    if (opts.output === 'json') {
      console.log(JSON.stringify({ running, stack: info }, null, 2));
    } else if (!info) {
      console.log('no stack recorded; start one with npm run stack:up');
    } else {
      console.log(`running: ${running.join(', ') || 'nothing'}`);
      console.log(envLines(info).join('\n'));
    }
  });

if (import.meta.main) {
  await program.parseAsync().catch((err: unknown) => {
    console.error(`stack: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
