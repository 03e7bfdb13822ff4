import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { API_VERSION, SaleCreateBody, SaleUpdateBody } from '@erp/contracts';
import { documentText, partnerApiDocument } from './write-openapi';
import { openApiPath, webhooksDocument } from './openapi';
import { apiRoutes } from '../http/routes';
import { WEBHOOK_ROUTES } from '../http/webhooks';

const COMMITTED = path.resolve(__dirname, '../../../../libs/contracts/openapi.json');
const COMMITTED_WEBHOOKS = path.resolve(__dirname, '../../../../libs/contracts/openapi-webhooks.json');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('the OpenAPI document', () => {
  const sut: Json = partnerApiDocument();
  const routes = apiRoutes({ standard: 1000, withDateFilters: 2000 });

  it('is the committed libs/contracts/openapi.json (run `npm run openapi` after changing a route or a contract)', () => {
    expect(readFileSync(COMMITTED, 'utf8')).toBe(documentText(sut));
    expect(readFileSync(COMMITTED_WEBHOOKS, 'utf8')).toBe(documentText(webhooksDocument()));
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

  it('describes the inbound webhooks in their own document, whose server is their base, so generic clients reach them', () => {
    const webhooks: Json = webhooksDocument();
    expect(webhooks.servers).toEqual([expect.objectContaining({ url: '/api/webhook' })]);
    expect(webhooks.security).toBeUndefined();
    for (const route of WEBHOOK_ROUTES) {
      const item = webhooks.paths[openApiPath(route.path)];
      expect(item.servers).toBeUndefined();
      expect(Object.keys(item.post.responses)).toEqual(expect.arrayContaining(['200', '401']));
      expect(sut.paths[openApiPath(route.path)]).toBeUndefined();
    }
    expect(sut.paths['/openapi-webhooks.json'].get.security).toEqual([]);
  });

  it('documents list parameters with their bounds, defaults and enums', () => {
    const params = Object.fromEntries(sut.paths['/sales'].get.parameters.map((p: Json) => [p.name, p]));
    expect(params.page.schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: 1,
      description: expect.stringMatching(/modo cursor/),
    });
    expect(params.per_page.schema).toEqual({ type: 'integer', minimum: 1, maximum: 200, default: 100 });
    expect(params.fecha_inicio.schema).toEqual(expect.objectContaining({ type: 'string', format: 'date' }));
    expect(params.estado.schema.enum).toEqual(['Completada', 'Pendiente', 'Anulada', 'Cotizacion']);
    expect(params.order_direction.schema.enum).toEqual(['asc', 'desc']);
    expect(sut.paths['/inventory/{id}'].get.parameters).toEqual([
      expect.objectContaining({ in: 'path', name: 'id', required: true, schema: expect.objectContaining({ type: 'integer', minimum: 1 }) }),
      expect.objectContaining({ in: 'header', name: 'If-None-Match', schema: expect.objectContaining({ type: 'string' }) }),
    ]);
  });

  it('declares the ETag, If-None-Match and a 304 with the quota headers on every GET with a key, and on nothing else', () => {
    for (const [template, item] of Object.entries<Json>(sut.paths)) {
      const operations = Object.entries<Json>(item).filter(
        ([m, op]) => ['get', 'post', 'put', 'delete'].includes(m) && op.security?.length !== 0,
      );
      for (const [method, op] of operations) {
        // A download's bytes are resumed with Range, not revalidated with an ETag.
        const isGet = method === 'get' && !template.endsWith('/download');
        const conditional = {
          etag: Object.keys(op.responses['200']?.headers ?? {}).includes('ETag'),
          ifNoneMatch: (op.parameters ?? []).some((p: Json) => p.name === 'If-None-Match'),
          notModified: Object.keys(op.responses['304']?.headers ?? {}),
        };
        expect([`${method} ${template}`, conditional]).toEqual([
          `${method} ${template}`,
          isGet
            ? {
                etag: true,
                ifNoneMatch: true,
                notModified: ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag'],
              }
            : { etag: false, ifNoneMatch: false, notModified: [] },
        ]);
      }
    }
  });

  it('types query parameters as the spec does, with the accepted spellings described', () => {
    const params = Object.fromEntries(sut.paths['/inventory'].get.parameters.map((p: Json) => [p.name, p.schema]));
    expect(params.con_stock).toEqual({ type: 'boolean', description: expect.stringMatching(/`1` y `0`/) });
    expect(params.stock_minimo).toEqual(params.con_stock);
    expect(params.enable).toEqual(expect.objectContaining({ type: 'integer', enum: [0, 1] }));
  });

  it('declares 414 and 431 on every operation, and Location on every 201', () => {
    for (const [template, item] of Object.entries<Json>(sut.paths)) {
      for (const [method, op] of Object.entries<Json>(item).filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
        expect([`${method} ${template}`, Object.keys(op.responses)]).toEqual([
          `${method} ${template}`,
          expect.arrayContaining(['414', '431']),
        ]);
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
    expect(Object.keys(ok)).toEqual(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'ETag']);
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
      expect.arrayContaining([
        'cliente',
        'codigo_asesor',
        'wr',
        'guia',
        'piezas',
        'embalaje',
        'peso',
        'precio',
        'id_sucursal',
        'sucursal',
        'volumen',
        'nota',
      ]),
    );
  });

  describe('request bodies say what the contract enforces', () => {
    // multipleOf 0.0001 needs a decimal-aware check: in binary floating point 1.2345 / 0.0001 is 12344.999999999998.
    const ajv = addFormats(new Ajv2020({ strict: false, multipleOfPrecision: 8 }));
    const bodySchema = (path: string, method: string) =>
      ajv.compile(sut.paths[path][method].requestBody.content['application/json'].schema);
    const base = {
      fecha: '2026-03-10',
      estado: 'Completada',
      id_sucursal: 1,
      id_bodega: 1,
      id_documento: 1,
      id_canal: 1,
      detalles: [{ id_producto: 1, cantidad: 1 }],
    };
    const line = (extra: Record<string, unknown>) => ({ ...base, detalles: [{ id_producto: 1, cantidad: 1, ...extra }] });
    const without = (field: string) => Object.fromEntries(Object.entries(base).filter(([k]) => k !== field));

    it.each<[string, Record<string, unknown>]>([
      ['a complete sale', base],
      ['sucursal by name', { ...without('id_sucursal'), sucursal: 'Centro' }],
      ['neither id_sucursal nor sucursal', without('id_sucursal')],
      ['no id_canal on a sale', without('id_canal')],
      ['no id_canal on a quotation', { ...without('id_canal'), estado: 'Cotizacion' }],
      ['Pendiente without id_cliente', { ...base, estado: 'Pendiente' }],
      ['Pendiente with id_cliente', { ...base, estado: 'Pendiente', id_cliente: 3 }],
      ['cotizacion true on a sale', { ...base, cotizacion: true }],
      ['cotizacion true on a quotation', { ...base, estado: 'Cotizacion', cotizacion: true }],
      ['a date that is not AAAA-MM-DD', { ...base, fecha: '10/03/2026' }],
      ['fecha_expiracion as a date', { ...base, fecha_expiracion: '2026-04-10' }],
      ['cantidad with 4 decimals', line({ cantidad: 1.2345 })],
      ['cantidad with 5 decimals', line({ cantidad: 1.23456 })],
      ['precio with 4 decimals', line({ precio: 10.0001 })],
      ['descuento with 3 decimals', line({ descuento: 0.125 })],
      ['porcentaje_impuesto above 100', line({ porcentaje_impuesto: 100.5 })],
      ['monto_pago with 2 decimals', { ...base, monto_pago: 10.25 }],
      ['cambio with 3 decimals', { ...base, cambio: 0.005 }],
      ['a line by code', { ...base, detalles: [{ codigo_producto: 'LAP-14', cantidad: 1 }] }],
      ['a line without product', { ...base, detalles: [{ cantidad: 1 }] }],
    ])('POST /sales: %s is accepted by the document exactly when the contract accepts it', (_name, body) => {
      expect(bodySchema('/sales', 'post')(body)).toBe(SaleCreateBody.safeParse(body).success);
    });

    it.each<[string, Record<string, unknown>]>([
      ['a note', { observaciones: 'x' }],
      ['cotizacion true with Pre-venta', { cotizacion: true, estado: 'Pre-venta' }],
      ['cotizacion true with Completada', { cotizacion: true, estado: 'Completada' }],
      ['Pendiente clearing id_cliente', { estado: 'Pendiente', id_cliente: null }],
      ['a kept line by id', { detalles: [{ id: 4, cantidad: 2 }] }],
      ['a new line without product', { detalles: [{ cantidad: 2 }] }],
    ])('PUT /sales/{id}: %s is accepted by the document exactly when the contract accepts it', (_name, body) => {
      expect(bodySchema('/sales/{id}', 'put')(body)).toBe(SaleUpdateBody.safeParse(body).success);
    });
  });

  it('declares the scope of every operation once, in the route table, and shows it in the security requirement and the description', () => {
    const unscoped = routes.filter((r) => r.scope === undefined).map((r) => `${r.method} ${r.path}`);
    expect(unscoped).toEqual(['get /system/rate-limit']);
    for (const route of routes) {
      const op = sut.paths[openApiPath(route.path)][route.method];
      expect([route.path, op.security]).toEqual([route.path, [{ bearerAuth: route.scope ? [route.scope] : [] }]]);
      expect(op.description).toContain(route.scope ? `Alcance: \`${route.scope}\`` : 'cualquier API key');
      expect([route.path, op.responses['403'] !== undefined]).toEqual([route.path, route.scope !== undefined]);
    }
    // Reads need a resource's read scope, everything else its write scope.
    expect(routes.filter((r) => r.scope && r.scope.endsWith(':read') !== (r.method === 'get'))).toEqual([]);
  });

  it('lets answers gain fields in a later 1.x while request bodies stay closed', () => {
    const ajv = addFormats(new Ajv2020({ strict: false, multipleOfPrecision: 8 }));
    ajv.addSchema(sut, 'openapi', undefined, false);
    const answer = ajv.compile({ $ref: 'openapi#/paths/~1sales~1{id}/get/responses/200/content/application~1json/schema' });
    const example = sut.paths['/sales/{id}'].get.responses['200'].content['application/json'].example;
    expect(answer(example)).toBe(true);
    const later = { ...example, data: { ...example.data, campo_de_1_8: 'x' }, meta: { ...example.meta, otro: 1 }, extra: true };
    expect(answer(later)).toBe(true);
    const closed: string[] = [];
    const walk = (node: Json, where: string): void => {
      if (node === null || typeof node !== 'object') return;
      if (node.additionalProperties === false) closed.push(where);
      for (const [key, child] of Object.entries<Json>(node)) walk(child, `${where}/${key}`);
    };
    for (const [template, item] of Object.entries<Json>(sut.paths))
      for (const [method, op] of Object.entries<Json>(item)) walk(op.responses, `${method} ${template}`);
    walk(sut.components.schemas, 'components/schemas');
    walk(sut.components.responses, 'components/responses');
    expect(closed).toEqual([]);
    const body = ajv.compile({ $ref: 'openapi#/paths/~1sales/post/requestBody/content/application~1json/schema' });
    expect(body({ ...sut.paths['/sales'].post.requestBody.content['application/json'].example, campo_nuevo: 1 })).toBe(false);
  });

  it('gives every operation a request example and an example of each answer, all valid against their schemas', () => {
    const documents: Record<string, Json> = { openapi: sut, webhooks: webhooksDocument() };
    const ajv = addFormats(new Ajv2020({ strict: false, multipleOfPrecision: 8 }));
    for (const [id, doc] of Object.entries(documents)) ajv.addSchema(doc, id, undefined, false);
    const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const resolve = (doc: Json, value: Json) =>
      value.$ref
        ? String(value.$ref)
            .slice(2)
            .split('/')
            .reduce((node: Json, part: string) => node[part.replace(/~1/g, '/')], doc)
        : value;
    const problems: string[] = [];
    const check = (where: string, schemaRef: string, example: unknown) => {
      if (example === undefined) return void problems.push(`${where}: no example`);
      const validate = ajv.compile({ $ref: schemaRef });
      if (!validate(example)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const [id, doc] of Object.entries(documents)) {
      for (const [template, item] of Object.entries<Json>(doc.paths)) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete'].filter((m) => item[m])) {
          const op = item[method];
          const at = `${id}#/${pointer('paths', template, method)}`;
          const name = `${method.toUpperCase()} ${template}`;
          (op.parameters ?? []).forEach((param: Json, i: number) => {
            if (param.required || param.example !== undefined)
              check(`${name} parameter ${param.name}`, `${at}/parameters/${i}/schema`, param.example);
          });
          if (op.requestBody)
            check(
              `${name} request`,
              `${at}/requestBody/content/application~1json/schema`,
              op.requestBody.content['application/json'].example,
            );
          for (const [status, ref] of Object.entries<Json>(op.responses)) {
            const response = resolve(doc, ref);
            const base = ref.$ref ? `${id}${ref.$ref}` : `${at}/responses/${status}`;
            for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
              const schema = `${base}/content/${pointer(type)}/schema`;
              if (type === 'application/json' && media.examples)
                for (const [reason, { value }] of Object.entries<Json>(media.examples)) check(`${name} ${status} ${reason}`, schema, value);
              else if (type === 'application/json') check(`${name} ${status}`, schema, media.example);
              else if (media.example === undefined) problems.push(`${name} ${status} ${type}: no example`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
