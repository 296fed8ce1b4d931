import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { hostPort, refusedAtOnce, socketReason, temporalUnreachable, transportCause } from './reach.ts';

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('temporal reach', () => {
  it('reads host:port addresses, IPv6 in brackets', () => {
    assert.deepEqual(hostPort('127.0.0.1:7233'), { host: '127.0.0.1', port: 7233 });
    assert.deepEqual(hostPort('[::1]:7233'), { host: '::1', port: 7233 });
    assert.deepEqual(hostPort('temporal.example:443'), { host: 'temporal.example', port: 443 });
    for (const bad of ['garbage', 'h:0', 'h:99999', 'dns:///h:7233', '']) assert.equal(hostPort(bad), undefined, bad);
  });

  it('says socket errors in plain words', () => {
    assert.equal(socketReason('ECONNREFUSED', 'h'), 'connection refused');
    assert.equal(socketReason('ENOTFOUND', 'h'), 'host h not found');
    assert.equal(socketReason('ETIMEDOUT', 'h', 2000), 'no answer within 2 s');
    assert.equal(socketReason('EWHATEVER', 'h'), undefined);
  });

  it("keeps the gist of a client's transport error, bounded", () => {
    const native =
      'tonic::transport::Error(Transport, ConnectError(ConnectError("tcp connect error", 127.0.0.1:7999, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" })))';
    assert.equal(transportCause(new Error(native)), 'Connection refused');
    const dns =
      'tonic::transport::Error(Transport, ConnectError(ConnectError("dns error", Custom { kind: Uncategorized, error: "failed to lookup address information: Name or service not known" })))';
    assert.equal(transportCause(new Error(dns)), 'failed to lookup address information: Name or service not known');
    assert.equal(transportCause(new Error('Failed to connect before the deadline\nmore')), 'Failed to connect before the deadline');
    assert.ok(transportCause(new Error('x'.repeat(10_000))).length <= 200);
  });

  it('fails at once on a refused port, and leaves a listening one or a proxy to the client', async () => {
    const port = await closedPort();
    assert.equal(await refusedAtOnce(`127.0.0.1:${port}`, 'ns', { env: {} }), `cannot reach Temporal at 127.0.0.1:${port} (namespace ns): connection refused`);
    for (const env of [{ https_proxy: 'http://proxy:3128' }, { GRPC_PROXY: 'http://proxy:3128' }])
      assert.equal(await refusedAtOnce(`127.0.0.1:${port}`, 'ns', { env }), undefined, JSON.stringify(env));
    assert.match((await refusedAtOnce(`127.0.0.1:${port}`, 'ns', { env: { HTTP_PROXY: '' } })) ?? '', /connection refused/, 'an empty variable is unset');
    assert.equal(await refusedAtOnce('garbage', 'ns', { env: {} }), undefined);
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const open = (server.address() as AddressInfo).port;
    try {
      assert.equal(await refusedAtOnce(`127.0.0.1:${open}`, 'ns', { env: {} }), undefined);
      assert.equal(
        await temporalUnreachable(`127.0.0.1:${open}`, 'ns', new Error('Failed to connect before the deadline'), { env: {} }),
        `cannot reach Temporal at 127.0.0.1:${open} (namespace ns): the port accepts connections, but the gRPC connection failed: Failed to connect before the deadline`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal(
      await temporalUnreachable('garbage', 'ns', new Error('boom')),
      'cannot reach Temporal at garbage (namespace ns): the address is not host:port (boom)',
    );
  });
});
