import { Registry } from 'prom-client';
import { createReadinessChecks, startOpsServer } from './ops-server';

describe('the ops server', () => {
  const get = async (port: number, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  };

  it('answers /healthz, /metrics from its registry, and 404 elsewhere', async () => {
    const metrics = new Registry();
    metrics.setDefaultLabels({ service: 'spec' });
    const sut = await startOpsServer({ port: 0, host: '127.0.0.1', metrics, readiness: createReadinessChecks(), stopping: () => false });
    try {
      expect(await get(sut.port, '/healthz')).toEqual({ status: 200, body: '{"status":"ok"}' });
      expect((await get(sut.port, '/metrics')).status).toBe(200);
      expect((await get(sut.port, '/otra')).status).toBe(404);
    } finally {
      await sut.close();
    }
  });

  it('is ready while every required check passes and it is not stopping; an optional check only reports degraded', async () => {
    const readiness = createReadinessChecks();
    let stopping = false;
    readiness.add('postgres', async () => 'ok');
    readiness.add('replica', async () => Promise.reject(new Error('sin conexión')), { required: false });
    const sut = await startOpsServer({ port: 0, host: '127.0.0.1', metrics: new Registry(), readiness, stopping: () => stopping });
    try {
      const ready = await get(sut.port, '/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ status: 'ready', checks: { postgres: 'ok', replica: 'degraded: sin conexión' } });
      stopping = true;
      const notReady = await get(sut.port, '/readyz');
      expect(notReady.status).toBe(503);
      expect(JSON.parse(notReady.body)).toEqual({
        status: 'not ready',
        checks: { postgres: 'ok', replica: 'degraded: sin conexión', shutdown: 'in progress' },
      });
    } finally {
      await sut.close();
    }
  });

  it('is not ready when a required check fails', async () => {
    const readiness = createReadinessChecks();
    readiness.add('nats', async () => Promise.reject(new Error('disconnected')));
    expect(await readiness.run()).toEqual({ ready: false, results: { nats: 'down: disconnected' } });
  });
});
