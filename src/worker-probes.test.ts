import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWorkerProbes, workerReadiness } from './worker-probes.ts';

describe('the worker probes server', () => {
  it('answers liveness, readiness as told, relays the exporter text, and refuses other paths and methods', async () => {
    const exporter = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end('temporal_worker_start 1\n'));
    await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
    const exporterUrl = `http://127.0.0.1:${(exporter.address() as AddressInfo).port}/metrics`;
    let ready = false;
    const probes = await startWorkerProbes({ port: 0, host: '127.0.0.1', sdkMetricsUrl: exporterUrl, readiness: async () => ({ ready, message: ready ? 'ok' : 'not yet' }) });
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

  it('is not ready before the worker exists', async () => {
    assert.deepEqual(await workerReadiness(undefined), { ready: false, message: 'worker starting: connecting to Temporal and loading the workflow code' });
  });
});
