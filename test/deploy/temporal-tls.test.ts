/**
 * The worker and the CLI reach Temporal over mutual TLS through a profile of
 * a Temporal profiles file. The local dev server serves plain gRPC, so the
 * test puts a TLS-terminating proxy in front of it (node:tls, ALPN h2, a
 * client certificate required), with a CA, a server and a client certificate
 * made by the `openssl` CLI; only the proxy's port is in the profile. A
 * profile without the client certificate is refused by the proxy.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { hostPort } from '../../src/temporal/reach.ts';
import { adminCore, createNode, exits, kubeconfigPath, relabelCli as relabel, startWorkerProcess, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

/** Files of a CA and of a server (localhost, 127.0.0.1) and a client certificate it signed, made with openssl. */
function certificates(dir: string): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=relabel test CA');
  for (const [name, extensions] of [
    ['server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'],
    ['client', 'extendedKeyUsage=clientAuth\n'],
  ] as const) {
    writeFileSync(at(`${name}.ext`), `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n${extensions}`);
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=relabel test ${name}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
  }
  return { ca: at('ca.pem'), serverCert: at('server.pem'), serverKey: at('server.key'), clientCert: at('client.pem'), clientKey: at('client.key') };
}

describe('Temporal over mutual TLS through a profile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-tls-'));
  const prefix = `tls${uniqueSuffix()}`;
  const { files, nodes } = prefixedSite(prefix);
  const targets = nodes.slice(0, 2);
  const profilesFile = join(dir, 'temporal.toml');
  /** TLS sessions the proxy accepted: ALPN protocol and whether the client certificate was verified. */
  const sessions: { alpn: string | false | null; authorized: boolean }[] = [];
  let refused = 0;
  let proxy: Server;
  let env: Record<string, string> = {};
  let worker: ChildProcess | undefined;

  before(async () => {
    const certs = certificates(dir);
    const upstream = hostPort(temporalAddress());
    assert.ok(upstream, 'the stack names its Temporal address');
    proxy = createServer(
      {
        key: readFileSync(certs.serverKey),
        cert: readFileSync(certs.serverCert),
        ca: readFileSync(certs.ca),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        sessions.push({ alpn: socket.alpnProtocol, authorized: socket.authorized });
        const server = tcpConnect(upstream);
        socket.pipe(server).pipe(socket);
        const close = () => {
          socket.destroy();
          server.destroy();
        };
        socket.on('error', close).on('close', close);
        server.on('error', close).on('close', close);
      },
    );
    proxy.on('tlsClientError', () => refused++);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    writeFileSync(
      profilesFile,
      [
        '[profile.mtls]',
        `address = "127.0.0.1:${port}"`,
        'namespace = "default"',
        '[profile.mtls.tls]',
        `server_ca_cert_path = "${certs.ca}"`,
        'server_name = "localhost"',
        `client_cert_path = "${certs.clientCert}"`,
        `client_key_path = "${certs.clientKey}"`,
        '',
        '[profile.no-client-cert]',
        `address = "127.0.0.1:${port}"`,
        'namespace = "default"',
        '[profile.no-client-cert.tls]',
        `server_ca_cert_path = "${certs.ca}"`,
        'server_name = "localhost"',
        '',
      ].join('\n'),
    );
    const { store, url } = await storeWithSite(files);
    await store.close();
    for (const name of targets) await createNode(adminCore(), name);
    env = {
      // Empty: unset for relabel, so only the profile says where Temporal is and how to reach it.
      TEMPORAL_ADDRESS: '',
      TEMPORAL_NAMESPACE: '',
      TEMPORAL_CONFIG_FILE: profilesFile,
      TEMPORAL_PROFILE: 'mtls',
      HOME: join(dir, 'home'),
      RELABEL_STORE_URL: url,
      RELABEL_TASK_QUEUE: `relabel-tls-${prefix}`,
      KUBECONFIG: kubeconfigPath(),
    };
    worker = await startWorkerProcess(env);
  });

  after(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker?.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    proxy?.close();
    for (const name of targets) await adminCore().deleteNode({ name }).catch(() => undefined);
  });

  it('runs update_labels: the worker and the CLI both connect through the TLS proxy with their client certificate', async () => {
    const beforeCli = sessions.length;
    assert.ok(beforeCli >= 1, 'the worker connected through the proxy');
    const run = exits(await relabel(['update-labels', '--nodes', targets.join(','), '--wait'], env), 0);
    assert.match(run.stdout, /^status: success: 2 of 2 node\(s\) succeeded, 0 failed, 2 written$/m);
    assert.ok(sessions.length > beforeCli, 'the CLI connected through the proxy');
    assert.deepEqual(new Set(sessions.map((s) => JSON.stringify(s))), new Set([JSON.stringify({ alpn: 'h2', authorized: true })]), 'every session: HTTP/2, client verified');
    for (const name of targets) {
      const node = await adminCore().readNode({ name });
      assert.ok(node.metadata?.annotations?.['relabel.airshipit.org/owned-labels'], `${name} relabelled`);
    }
  });

  it('is refused without the client certificate: the CLI exits 6 saying it cannot reach Temporal', async () => {
    const was = refused;
    const run = exits(await relabel(['runs', '--site', `${prefix}-site`], { ...env, TEMPORAL_PROFILE: 'no-client-cert' }), 6);
    assert.match(run.stderr, /cannot reach Temporal at 127\.0\.0\.1:\d+ \(namespace default\)/);
    assert.ok(refused > was, 'the proxy refused the handshake');
  });
});
