import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '@erp/contracts';
import { partnerApiDocument, partnerApiDocumentText } from '../write-openapi';
import { openApiPath } from './openapi';
import { apiRoutes } from './routes';
import { WEBHOOK_ROUTES } from './webhooks';

const COMMITTED = path.resolve(__dirname, '../../../../libs/contracts/openapi.json');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('the OpenAPI document', () => {
  const sut: Json = partnerApiDocument();
  const routes = apiRoutes({ standard: 1000, withDateFilters: 2000 });

  it('is the committed libs/contracts/openapi.json (run `npm run openapi` after changing a route or a contract)', () => {
    expect(readFileSync(COMMITTED, 'utf8')).toBe(partnerApiDocumentText());
  });

  it('carries the interface version, the base path and the bearer scheme required by default', () => {
    expect(sut.openapi).toBe('3.1.0');
    expect(sut.info.version).toBe(API_VERSION);
    expect(sut.servers).toEqual([expect.objectContaining({ url: '/api/external/v1' })]);
    expect(sut.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(sut.security).toEqual([{ bearerAuth: [] }]);
  });

  it('lists every route of the table with its method, and every route declares what it answers', () => {
    for (const route of routes) {
      expect(sut.paths[openApiPath(route.path)]?.[route.method]).toBeDefined();
    }
    expect(routes.filter((route) => !route.response).map((route) => `${route.method.toUpperCase()} ${route.path}`)).toEqual([]);
  });

  it('lists the inbound webhooks under their own server, without the API key', () => {
    for (const route of WEBHOOK_ROUTES) {
      const item = sut.paths[openApiPath(route.path)];
      expect(item.servers).toEqual([expect.objectContaining({ url: '/api/webhook' })]);
      expect(item.post.security).toEqual([]);
      expect(Object.keys(item.post.responses)).toEqual(expect.arrayContaining(['200', '401']));
    }
  });

  it('documents list parameters with their bounds, defaults and enums', () => {
    const params = Object.fromEntries(sut.paths['/sales'].get.parameters.map((p: Json) => [p.name, p]));
    expect(params.page.schema).toEqual({ type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 });
    expect(params.per_page.schema).toEqual({ type: 'integer', minimum: 1, maximum: 200, default: 100 });
    expect(params.fecha_inicio.schema).toEqual(expect.objectContaining({ type: 'string', format: 'date' }));
    expect(params.estado.schema.enum).toEqual(['Completada', 'Pendiente', 'Anulada', 'Cotizacion']);
    expect(params.order_direction.schema.enum).toEqual(['asc', 'desc']);
    expect(sut.paths['/inventory/{id}'].get.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'id', required: true, schema: expect.objectContaining({ type: 'integer', minimum: 1 }) }),
    ]);
  });

  it('types query parameters as the spec does, with the accepted spellings described', () => {
    const params = Object.fromEntries(sut.paths['/inventory'].get.parameters.map((p: Json) => [p.name, p.schema]));
    expect(params.con_stock).toEqual({ type: 'boolean', description: expect.stringMatching(/`1` y `0`/) });
    expect(params.stock_minimo).toEqual(params.con_stock);
    expect(params.enable).toEqual(expect.objectContaining({ type: 'integer', enum: [0, 1] }));
  });

  it('declares 414 and 431 on every operation, and Location on every 201', () => {
    for (const [template, item] of Object.entries<Json>(sut.paths)) {
      for (const [method, op] of Object.entries<Json>(item).filter(([m]) => ['get', 'post', 'put'].includes(m))) {
        expect([`${method} ${template}`, Object.keys(op.responses)]).toEqual([`${method} ${template}`, expect.arrayContaining(['414', '431'])]);
        if (op.responses['201']) expect(op.responses['201'].headers.Location).toEqual({ $ref: '#/components/headers/Location' });
      }
    }
  });

  it('gives responses the envelope, amounts as numbers and timestamps as date-time', () => {
    const list = sut.paths['/inventory'].get.responses['200'].content['application/json'].schema;
    expect(list.required).toEqual(['success', 'data', 'pagination', 'meta']);
    const product = sut.components.schemas.Product;
    expect(product.properties.precio).toEqual({ type: 'number' });
    expect(product.properties.created_at).toEqual({ type: 'string', format: 'date-time' });
    const created = sut.paths['/sales'].post.responses;
    expect(Object.keys(created)).toEqual(expect.arrayContaining(['200', '201', '422']));
    expect(created['201'].content['application/json'].schema.properties.meta.required).toContain('idempotent');
  });

  it('declares the rate-limit headers on authenticated answers and Retry-After on 429 and 503', () => {
    const ok = sut.paths['/system/rate-limit'].get.responses['200'].headers;
    expect(Object.keys(ok)).toEqual(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(Object.keys(sut.components.responses.TooManyRequests.headers)).toContain('Retry-After');
    expect(Object.keys(sut.components.responses.ServiceUnavailable.headers)).toContain('Retry-After');
    expect(Object.keys(sut.components.responses.Unauthorized.headers)).toEqual(['X-Request-Id']);
  });

  it('keeps the spec field names of the request bodies', () => {
    const sale = sut.paths['/sales'].post.requestBody.content['application/json'].schema;
    expect(sale.required).toEqual(['fecha', 'estado', 'id_bodega', 'id_documento', 'detalles']);
    expect(sale.properties.detalles).toEqual(expect.objectContaining({ minItems: 1, maxItems: 100 }));
    const packages = sut.paths['/packages/import'].post.requestBody.content['application/json'].schema;
    expect(packages.properties.packages).toEqual(expect.objectContaining({ minItems: 1, maxItems: 500 }));
    expect(Object.keys(packages.properties.packages.items.properties)).toEqual(
      expect.arrayContaining(['cliente', 'codigo_asesor', 'wr', 'guia', 'piezas', 'embalaje', 'peso', 'precio', 'id_sucursal', 'sucursal', 'volumen', 'nota']),
    );
  });
});
