/**
 * A stack of a test file's own with the simulated cluster (the real
 * controller manager and scheduler, KWOK's nodes), which the file's tests and
 * the helpers they call use instead of the shared stack: the node lifecycle
 * controller would otherwise taint the other tests' kubelet-less nodes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import type { SimulatedClusterOptions } from '../stack/simulated-cluster.ts';
import { freePorts, startStack, stopStack, type StackInfo } from '../stack/stack.ts';

const STACK_ENV = ['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'KUBECONFIG', 'RELABEL_ADMIN_KUBECONFIG'] as const;

/** A running simulated stack, its admin clients, and `stop()`, which stops it and gives the environment back. */
export interface SimulatedStack {
  info: StackInfo;
  /** The stack's directory (to restart its servers). */
  dir: string;
  core: CoreV1Api;
  apps: AppsV1Api;
  /** Stops the stack (purging its data) and restores the environment; the names of the processes stopped, in order. */
  stop(): Promise<string[]>;
}

/**
 * Starts the stack with the simulated cluster under a temporary directory
 * named after `name`, and points this process's stack environment at it.
 */
export async function startSimulatedStack(name: string, kwok: SimulatedClusterOptions): Promise<SimulatedStack> {
  const dir = mkdtempSync(join(tmpdir(), `relabel-${name}-`));
  const saved = Object.fromEntries(STACK_ENV.map((k) => [k, process.env[k]]));
  const t0 = Date.now();
  const info = await startStack({ dir, ports: await freePorts(), kwok, log: (l) => console.log(`# sim stack: ${l}`) });
  console.log(`# sim stack: up in ${Date.now() - t0} ms`);
  process.env.TEMPORAL_ADDRESS = info.temporalAddress;
  process.env.TEMPORAL_UI_URL = info.temporalUiUrl;
  process.env.KUBECONFIG = info.kubeconfig;
  process.env.RELABEL_ADMIN_KUBECONFIG = info.adminKubeconfig;
  assert.ok(info.simulatedCluster);
  const admin = loadKubeConfig(info.adminKubeconfig);
  return {
    info,
    dir,
    core: admin.makeApiClient(CoreV1Api),
    apps: admin.makeApiClient(AppsV1Api),
    async stop() {
      const stopped = await stopStack(dir, { purge: true });
      for (const k of STACK_ENV) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      return stopped;
    },
  };
}
