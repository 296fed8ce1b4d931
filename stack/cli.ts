/**
 * `npm run stack:up` / `stack:down` / `stack:status`: the local stack from a
 * shell. Ports come from flags or RELABEL_STACK_PORT_* variables.
 */
import { Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_PORTS, StackTemporal, readStack, startStack, stopStack, type StackInfo, type StackPorts } from './stack.ts';
import { isAlive } from './processes.ts';

/** Directory holding the local stack's data, logs and state. */
export function defaultStackDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.RELABEL_STACK_DIR ?? '.data/stack');
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`not a count: ${value}`);
  return n;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`not a number of seconds: ${value}`);
  return n;
}

function keyValue(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf('=');
  if (eq < 1) throw new InvalidArgumentError(`not key=value: ${value}`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

function temporalKind(value: string): StackTemporal {
  const kinds = Object.values(StackTemporal) as string[];
  if (!kinds.includes(value)) throw new InvalidArgumentError(`not one of ${kinds.join(', ')}: ${value}`);
  return value as StackTemporal;
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
    ...(info.temporalUiUrl ? [`export TEMPORAL_UI_URL=${info.temporalUiUrl}`] : []),
    `export KUBECONFIG=${info.kubeconfig}`,
    `export RELABEL_ADMIN_KUBECONFIG=${info.adminKubeconfig}`,
  ];
}

/** One line describing the simulated cluster, when the stack runs one. */
function simulatedLine(info: StackInfo): string[] {
  const sim = info.simulatedCluster;
  if (!sim) return [];
  const names = sim.nodes === 0 ? 'no nodes' : `${sim.nodes} KWOK nodes ${sim.nodePrefix}0…${sim.nodePrefix}${sim.nodes - 1}`;
  const heartbeat = sim.heartbeatSeconds > 0 ? `status heartbeat every ${sim.heartbeatSeconds} s` : 'no status heartbeat';
  const lease = sim.leaseSeconds > 0 ? `Lease renewed every ${sim.leaseSeconds / 4} s` : 'no Leases';
  return [`simulated cluster: ${names}; ${heartbeat}, ${lease}`];
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
  controllerManagerPort: number;
  schedulerPort: number;
  kwokPort: number;
  kwokNodes?: number;
  kwokNodePrefix: string;
  kwokNodeLabel?: Record<string, string>;
  kwokHeartbeat: number;
  kwokLease: number;
  output: string;
  temporal: StackTemporal;
}

const program = new Command('stack').description('Run the local Temporal + Kubernetes stack on loopback');

program
  .command('up')
  .description('start Temporal (with Web UI), etcd and kube-apiserver (and, with --kwok-nodes, the simulated cluster); wait until ready')
  .option('--dir <dir>', 'data, logs and state directory', defaultStackDir())
  .option('--temporal-port <port>', 'Temporal frontend gRPC port', port, DEFAULT_PORTS.temporal)
  .option('--ui-port <port>', 'Temporal Web UI port', port, DEFAULT_PORTS.temporalUi)
  .option('--apiserver-port <port>', 'kube-apiserver secure port', port, DEFAULT_PORTS.apiserver)
  .option('--temporal-http-port <port>', 'Temporal HTTP API port (default: Temporal port + 10)', port)
  .option('--temporal-metrics-port <port>', 'Temporal metrics port (default: Temporal port + 11)', port)
  .option('--etcd-port <port>', 'etcd client port', port, DEFAULT_PORTS.etcdClient)
  .option('--etcd-peer-port <port>', 'etcd peer port (default: etcd client port + 1)', port)
  .option('--kwok-nodes <n>', 'also run the simulated cluster (controller manager, scheduler, KWOK) with N KWOK nodes', count)
  .option('--kwok-node-prefix <prefix>', 'names of the KWOK nodes: <prefix>0, <prefix>1, …', 'kwok-node-')
  .option('--kwok-node-label <key=value>', 'a label every KWOK node carries (repeatable)', keyValue)
  .option('--kwok-heartbeat <seconds>', "seconds between a KWOK node's status heartbeats (0: off)", seconds, 20)
  .option('--kwok-lease <seconds>', 'KWOK node Lease duration, renewed every quarter of it (0: no Leases)', seconds, 40)
  .option('--controller-manager-port <port>', 'kube-controller-manager health/metrics port (with --kwok-nodes)', port, DEFAULT_PORTS.controllerManager)
  .option('--scheduler-port <port>', 'kube-scheduler health/metrics port (with --kwok-nodes)', port, DEFAULT_PORTS.scheduler)
  .option('--kwok-port <port>', "KWOK's health port (with --kwok-nodes)", port, DEFAULT_PORTS.kwok)
  .option(
    '--temporal <kind>',
    'dev: the CLI dev server with Web UI; postgres: temporal-server on PostgreSQL (production-shaped, no Web UI)',
    temporalKind,
    StackTemporal.dev,
  )
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
      controllerManager: opts.controllerManagerPort,
      scheduler: opts.schedulerPort,
      kwok: opts.kwokPort,
    };
    const kwok =
      opts.kwokNodes === undefined
        ? undefined
        : {
            nodes: opts.kwokNodes,
            nodePrefix: opts.kwokNodePrefix,
            heartbeatSeconds: opts.kwokHeartbeat,
            leaseSeconds: opts.kwokLease,
            ...(opts.kwokNodeLabel ? { nodeLabels: opts.kwokNodeLabel } : {}),
          };
    const info = await startStack({ dir: opts.dir, ports, temporal: opts.temporal, log: (l) => console.error(l), ...(kwok ? { kwok } : {}) });
    if (opts.output === 'json') {
      console.log(JSON.stringify(info, null, 2));
    } else {
      console.log(
        `stack up in ${info.dir} (logs there). ${info.temporalUiUrl ? `Temporal UI: ${info.temporalUiUrl}` : 'Temporal: temporal-server on PostgreSQL (no Web UI)'}`,
      );
      console.log([...simulatedLine(info), ...envLines(info)].join('\n'));
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
      console.log([...simulatedLine(info), ...envLines(info)].join('\n'));
    }
  });

if (import.meta.main) {
  await program.parseAsync().catch((err: unknown) => {
    console.error(`stack: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
