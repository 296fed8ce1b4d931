/**
 * Global setup for `npm test`: one real local stack (Temporal dev server,
 * etcd, kube-apiserver) on free loopback ports, shared by every integration
 * test through environment variables, and stopped afterwards. A server that
 * is missing or fails to start fails the whole run; nothing is skipped.
 * RELABEL_TEST_TEMPORAL=postgres runs Temporal as temporal-server on
 * PostgreSQL (stack/temporal-postgres.ts) instead of the dev server.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StackTemporal, freePorts, startStack, stopStack } from '../stack/stack.ts';

let stackDir: string | undefined;

export async function globalSetup(): Promise<void> {
  const t0 = Date.now();
  stackDir = mkdtempSync(join(tmpdir(), 'relabel-test-stack-'));
  const temporal = (process.env.RELABEL_TEST_TEMPORAL || StackTemporal.dev) as StackTemporal;
  if (!Object.values(StackTemporal).includes(temporal)) {
    throw new Error(`RELABEL_TEST_TEMPORAL=${temporal}: expected one of ${Object.values(StackTemporal).join(', ')}`);
  }
  const info = await startStack({ dir: stackDir, ports: await freePorts(), temporal, log: (l) => console.log(`# stack: ${l}`) });
  process.env.TEMPORAL_ADDRESS = info.temporalAddress;
  if (info.temporalUiUrl) process.env.TEMPORAL_UI_URL = info.temporalUiUrl;
  process.env.KUBECONFIG = info.kubeconfig;
  process.env.RELABEL_ADMIN_KUBECONFIG = info.adminKubeconfig;
  process.env.RELABEL_TEST_STACK_DIR = stackDir;
  // Worker processes the tests start serve their metrics and health on a free port each.
  process.env.RELABEL_METRICS_PORT = '0';
  console.log(`# stack: up in ${Date.now() - t0} ms (${stackDir})`);
}

export async function globalTeardown(): Promise<void> {
  if (stackDir) {
    const stopped = await stopStack(stackDir, { purge: !process.env.RELABEL_KEEP_STACK });
    console.log(`# stack: stopped ${stopped.join(', ')}`);
  }
}
