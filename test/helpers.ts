/**
 * Shared helpers for integration tests: clients for the stack that the global
 * setup started (never any other cluster), and unique names per test.
 */
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { Connection, Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadKubeConfig } from '../src/activities/kube-nodes.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: integration tests run under the global setup (npm test), which starts the local stack`);
  return value;
}

/** The stack's Temporal frontend address. */
export const temporalAddress = (): string => required('TEMPORAL_ADDRESS');
/** The relabel (least-privilege) kubeconfig path. */
export const kubeconfigPath = (): string => required('KUBECONFIG');
/** The cluster-admin kubeconfig path. */
export const adminKubeconfigPath = (): string => required('RELABEL_ADMIN_KUBECONFIG');

/** A short unique suffix for names created by one test. */
export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

/** A CoreV1Api client with cluster-admin rights on the test stack. */
export function adminCore(): CoreV1Api {
  return loadKubeConfig(adminKubeconfigPath()).makeApiClient(CoreV1Api);
}

/** Creates a Node as the kubelet would register it, with kubelet-owned labels. */
export async function createNode(core: CoreV1Api, name: string, labels: Record<string, string> = {}): Promise<V1Node> {
  return core.createNode({
    body: {
      metadata: {
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'beta.kubernetes.io/os': 'linux',
          'beta.kubernetes.io/arch': 'amd64',
          ...labels,
        },
      },
    },
  });
}

/** Connections to the stack's Temporal server for a client and a worker. */
export async function temporalConnections(): Promise<{ client: Client; native: NativeConnection; close(): Promise<void> }> {
  const connection = await Connection.connect({ address: temporalAddress() });
  const native = await NativeConnection.connect({ address: temporalAddress() });
  return {
    client: new Client({ connection }),
    native,
    async close() {
      await connection.close();
      await native.close();
    },
  };
}
