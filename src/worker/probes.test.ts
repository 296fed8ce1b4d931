import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { listenForProbes, ProbeListenError, startWorkerProbes, workerReadiness } from './probes.ts';

describe('the worker probes server', () => {
  it('answers liveness, readiness as told, relays the exporter text, and refuses other paths and methods', async () => {
    const exporter = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end('temporal_worker_start 1\n'));
    await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
    const exporterUrl = `http://127.0.0.1:${(exporter.address() as AddressInfo).port}/metrics`;
    let ready = false;
    const probes = await startWorkerProbes({
      port: 0,
      host: '127.0.0.1',
      sdkMetricsUrl: exporterUrl,
      readiness: async () => ({ ready, message: ready ? 'ok' : 'not yet' }),
    });
    try {
      const get = async (path: string, method = 'GET') => {
        const r = await fetch(`${probes.url}${path}`, { method });
        return { code: r.status, type: r.headers.get('content-type'), text: await r.text() };
      };
      assert.deepEqual(await get('/health/live'), { code: 200, type: 'application/json; charset=utf-8', text: '{"live":true}\n' });
      assert.deepEqual(await get('/health/ready'), { code: 503, type: 'application/json; charset=utf-8', text: '{"ready":false,"message":"not yet"}\n' });
      ready = true;
      assert.equal((await get('/health/ready')).code, 200);
      assert.deepEqual(await get('/metrics?x=1'), { code: 200, type: 'text/plain; version=0.0.4', text: 'temporal_worker_start 1\n' });
      assert.equal((await get('/health/ready', 'POST')).code, 405);
      assert.equal((await get('/nothing')).code, 404);
      exporter.close();
      exporter.closeAllConnections();
      assert.equal((await get('/metrics')).code, 503, 'an exporter that does not answer');
    } finally {
      await probes.close();
      exporter.close();
    }
  });

  it('listens on loopback unless told otherwise, and says which address cannot be had', async () => {
    const readiness = async () => ({ ready: true, message: 'ok' });
    const first = await startWorkerProbes({ port: 0, readiness });
    try {
      assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(first.url, `http://127.0.0.1:${first.port}`);
      await assert.rejects(startWorkerProbes({ port: first.port, readiness }), (err: unknown) => {
        assert.ok(err instanceof ProbeListenError);
        assert.deepEqual([err.code, err.message], ['EADDRINUSE', `127.0.0.1:${first.port} is already in use`]);
        return true;
      });
    } finally {
      await first.close();
    }
  });

  it('as the worker flags ask: a port asked for that is taken, or an address not of this host, is an error naming the flag', async () => {
    const readiness = async () => ({ ready: true, message: 'ok' });
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const taken = await listenForProbes({ address: '127.0.0.1', port: 0, readiness, warn });
    try {
      await assert.rejects(
        listenForProbes({ address: '127.0.0.1', port: taken.port, readiness, warn }),
        new RegExp(
          `^Error: --metrics-port ${taken.port} \\(RELABEL_METRICS_PORT\\): 127\\.0\\.0\\.1:${taken.port} is already in use \\(another worker on this host\\?\\): give each worker a port of its own, or 0 for any free one$`,
        ),
      );
      // A documentation address (RFC 5737) that no interface of this host has.
      const mine = new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)));
      const foreign = ['203.0.113.77', '198.51.100.77', '192.0.2.177'].find((a) => !mine.has(a)) as string;
      await assert.rejects(listenForProbes({ address: foreign, port: 0, readiness, warn }), {
        message: `--metrics-address ${foreign} (RELABEL_METRICS_ADDRESS): ${foreign} is not an address of this host`,
      });
      assert.deepEqual(warnings, []);
    } finally {
      await taken.close();
    }
  });

  it('is not ready before the worker exists', async () => {
    assert.deepEqual(await workerReadiness(undefined), { ready: false, message: 'worker starting: connecting to Temporal and loading the workflow code' });
  });
});
