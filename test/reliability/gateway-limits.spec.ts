import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { Bus } from '@erp/bus';
import { createLogger } from '@erp/runtime';
import type { Authenticator } from '../../services/gateway/src/auth/authenticator';
import { createApp } from '../../services/gateway/src/http/app';
import { apiRoutes } from '../../services/gateway/src/http/routes';
import type { RateLimiter } from '../../services/gateway/src/limits/rate-limiter';
import { Stack } from '../support/stack';
import { companiesOf, reliabilityFixture, type Company, type CompanyRef } from './support/fixture';
import { call } from './support/http';

const API = '/api/external/v1';

/**
 * What the gateway does at its limits: more requests at once than it serves (503 with
 * Retry-After at once, not a queue), a path it cannot decode, a body nested deeper than any
 * contract needs. Each was found by the reliability suite answering 500 or 503 from a bad input.
 */
describe('the gateway at its limits', () => {
  let stack: Stack;
  let companies: Record<CompanyRef, Company>;

  beforeAll(async () => {
    stack = await Stack.start({
      services: ['gateway', 'inventory', 'packages'],
      gateway: { MAX_INFLIGHT_REQUESTS: '4', RATE_LIMIT_STANDARD: '1000000', RATE_LIMIT_DATE_FILTERED: '1000000' },
    });
    companies = companiesOf(await stack.seed(reliabilityFixture({ sales: false })));
  });
  afterAll(() => stack.stop());

  it('refuses what is past its in-flight limit with 503 and Retry-After at once, and serves the rest', async () => {
    const answers = await Promise.all(
      Array.from({ length: 120 }, () => call(`${stack.baseUrl}${API}/inventory?per_page=50`, { key: companies.a.key })),
    );
    const refused = answers.filter((a) => a.status === 503);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 503]));
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.headers.get('retry-after')).toBe('1');
      expect(a.body).toEqual({
        success: false,
        error: 'El servidor está atendiendo demasiadas solicitudes; reintente después de Retry-After',
        code: 503,
        reason: 'servidor_saturado',
      });
    }
    // Refused before authentication: they do not count against the quota.
    expect(refused.every((a) => a.headers.get('x-ratelimit-remaining') === null)).toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.running.get('gateway')!.opsPort}/metrics`)).text();
    expect(Number(/^erp_gateway_requests_shed_total\{[^}]*\} (\d+)/m.exec(metrics)?.[1])).toBe(refused.length);
    // Once the burst is over, everything is served again.
    const after = await call(`${stack.baseUrl}${API}/inventory/summary`, { key: companies.a.key });
    expect(after.status).toBe(200);
  });

  it.each(['%', '%zz', '%E0%A4%A'])('answers a path id with the broken escape %p with 400 in the envelope', async (id) => {
    for (const [method, path] of [
      ['GET', `/sales/${id}`],
      ['GET', `/inventory/${id}`],
      ['POST', `/inventory/${id}`],
    ] as const) {
      const res = await call(`${stack.baseUrl}${API}${path}`, { method, key: companies.a.key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: 'Parámetros inválidos',
        code: 400,
        reason: 'parametro_invalido',
        details: { _: ['La ruta contiene una secuencia de escape (%) inválida'] },
      });
    }
  });

  it('answers a body nested thousands of levels deep with 400, storing nothing', async () => {
    for (const depth of [65, 5_000, 50_000]) {
      const body = `{"packages": [${'['.repeat(depth)}${']'.repeat(depth)}]}`;
      const res = await call(`${stack.baseUrl}${API}/packages/import`, {
        method: 'POST',
        key: companies.a.key,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: 'El cuerpo de la solicitud anida demasiados niveles',
        code: 400,
        reason: 'json_invalido',
        details: { _: ['El JSON anida más de 64 niveles de objetos o listas'] },
      });
    }
    // 64 levels are still taken as JSON: the item is refused on its own, as any other bad item.
    const fine = await call(`${stack.baseUrl}${API}/packages/import`, {
      method: 'POST',
      key: companies.a.key,
      json: { packages: [JSON.parse(`${'['.repeat(62)}${']'.repeat(62)}`)] },
    });
    expect(fine.status).toBe(200);
    expect(fine.body.errors).toHaveLength(1);
    expect(await stack.query('select count(*)::int as n from packages.paquetes')).toEqual([{ n: 0 }]);
  });
});

describe('the gateway given text with the NUL character', () => {
  let stack: Stack;
  let companies: Record<CompanyRef, Company>;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'packages'], gateway: { RATE_LIMIT_STANDARD: '1000000' } });
    companies = companiesOf(await stack.seed(reliabilityFixture({ sales: false })));
  });
  afterAll(() => stack.stop());

  // Postgres text cannot hold U+0000: these reached the services and failed there with 500.
  it('refuses it in a query filter with 400 naming the parameter', async () => {
    const res = await call(`${stack.baseUrl}${API}/inventory?marca=%00&tipo=Producto`, { key: companies.a.key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Parámetros inválidos',
      code: 400,
      reason: 'parametro_invalido',
      details: { marca: ['No puede contener el carácter nulo (U+0000)'] },
    });
  });

  it('refuses it in a body with the route’s body status, naming the field, storing nothing', async () => {
    const item = {
      cliente: 'Cliente',
      codigo_asesor: 'AS-01\u0000',
      wr: 'WR-NUL',
      guia: 'G',
      embalaje: 'Caja',
      piezas: 1,
      peso: 1,
      precio: 1,
      cuenta_a_terceros: 0,
      otros: 0,
      total: 1,
      sucursal: 'Sucursal Centro',
    };
    const res = await call(`${stack.baseUrl}${API}/packages/import`, { method: 'POST', key: companies.a.key, json: { packages: [item] } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      error: 'Datos inválidos',
      code: 400,
      reason: 'cuerpo_invalido',
      details: { 'packages.0.codigo_asesor': ['No puede contener el carácter nulo (U+0000)'] },
    });
    expect(await stack.query('select count(*)::int as n from packages.paquetes')).toEqual([{ n: 0 }]);
    const sale = await call(`${stack.baseUrl}${API}/sales`, {
      method: 'POST',
      key: companies.a.key,
      json: { observaciones: 'nota\u0000' },
    });
    expect(sale.status).toBe(422);
    expect(sale.body.details).toEqual({ observaciones: ['No puede contener el carácter nulo (U+0000)'] });
  });
});

describe('the gateway when its own database is out of reach', () => {
  it('answers 503 with Retry-After, as for any unavailable dependency, not 500', async () => {
    // What pg throws while Postgres restarts: the key cannot be checked, so nothing can be served.
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const sut = createApp({
      bus: {} as Bus,
      auth: { cached: () => undefined, verify: async () => Promise.reject(refused) } as unknown as Authenticator,
      limiter: {} as RateLimiter,
      logger: createLogger('gateway', 'silent'),
      metrics: new Registry(),
      routes: apiRoutes({ standard: 1000, withDateFilters: 2000 }),
      isDraining: () => false,
    });
    const server = sut.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await call(`http://127.0.0.1:${(server.address() as AddressInfo).port}${API}/sales`, {
        key: 'any_key_0123456789abcdef0123456789',
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toEqual({ success: false, error: 'Base de datos no disponible', code: 503, reason: 'servicio_no_disponible' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
