import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiOverrideContext,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import {
  API_BASE,
  API_VERSION,
  Branch,
  Channel,
  Customer,
  CursorPagination,
  DecimalNumber,
  DeliveredEvent,
  DocumentType,
  EVENT_TYPES,
  PingEvent,
  TYPED_EVENTS,
  ErrorEnvelope,
  InventorySummary,
  Meta,
  Pagination,
  Product,
  RateLimitStatus,
  SCOPES,
  Return,
  ReturnsSummary,
  Sale,
  SalesSummary,
  ShopifyOrder,
  Timestamp,
  WEBHOOK_BASE,
  WebhookPing,
  WebhookReceipt,
  WooCommerceOrder,
  WooCommerceProduct,
  envelope,
  listEnvelope,
  type EventType,
} from '@erp/contracts';
import { MAX_HEADER_BYTES, MAX_URL_BYTES, PARSER_MAX_HEADER_BYTES } from '../http/edges';
import { IDEMPOTENCY_KEY_PATTERN, MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/idempotency-key';
import { MESSAGES } from '../http/errors';
import { IDEMPOTENCY_HEADER } from '../http/idempotency';
import { withExamples, type OpenApiDocument } from './openapi-examples';
import { bodyIsOptional, type AnyRoute, type RouteResponse } from '../http/route';
import { WEBHOOK_ROUTES } from '../http/webhooks';

/** The generated OpenAPI 3.1 document, as plain JSON. */
export type { OpenApiDocument };

/** Paths of the reference itself, below the API base: served without key or quota. */
export const REFERENCE_PATHS = { document: '/openapi.json', webhooks: '/openapi-webhooks.json', docs: '/docs' } as const;

/** `/inventory/:id` → `/inventory/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/** Headers as `components.headers`, each required where referenced; `optional()` describes one that may be absent. */
const HEADERS = {
  'X-Accepted-Scopes': {
    description: 'Con 403 `alcance_insuficiente`: el alcance que la operación necesita.',
    schema: { type: 'string' },
  },
  'X-Request-Id': {
    description:
      'Identificador de la solicitud: el enviado en `X-Request-Id` si es válido, si no uno nuevo. Aparece en los registros del servidor.',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description: 'Límite de la ventana horaria actual: 1000, o 2000 cuando la solicitud envía `fecha_inicio` y `fecha_fin`.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': { description: 'Solicitudes que quedan en la ventana actual.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': {
    description: 'Fin de la ventana actual (inicio de la próxima hora UTC), en segundos Unix.',
    schema: { type: 'integer' },
  },
  'Retry-After': { description: 'Segundos que conviene esperar antes de reintentar.', schema: { type: 'integer', minimum: 0 } },
  'X-Error-Id': { description: 'Identificador del error en los registros del servidor.', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description:
      '`true` cuando la respuesta repite, byte a byte (estado y cuerpo; solo `meta.idempotent`, donde lo hay, pasa a `true`), la de la primera solicitud enviada con el mismo `Idempotency-Key`: la operación no se ejecutó otra vez.',
    schema: { type: 'string', const: 'true' },
  },
  Location: {
    description: 'Ruta del recurso creado, p. ej. `/api/external/v1/sales/42`.',
    schema: { type: 'string', format: 'uri-reference' },
  },
  ETag: {
    description:
      'Validador fuerte de la respuesta: el SHA-256 de su cuerpo sin `meta.timestamp`. Enviado en `If-None-Match`, responde 304 mientras la respuesta no cambie.',
    schema: { type: 'string' },
  },
  'Content-Range': {
    description: 'Con 206: los bytes enviados y el tamaño del archivo, p. ej. `bytes 1048576-2097151/5242880`.',
    schema: { type: 'string' },
  },
  'Accept-Ranges': { description: '`bytes`: una descarga cortada sigue con `Range: bytes=<recibidos>-`.', schema: { type: 'string' } },
} as const;

type HeaderName = keyof typeof HEADERS;

/** Response headers: `required` by reference to the components, `optional` described in place. */
function headers(required: readonly HeaderName[], optional: readonly HeaderName[] = []) {
  return Object.fromEntries([
    ...required.map((name) => [name, { $ref: `#/components/headers/${name}` }] as const),
    ...optional.map((name) => [name, { ...HEADERS[name], required: false }] as const),
  ]);
}

const json = (schema: z.ZodType | { $ref: string }) => ({ content: { 'application/json': { schema } } });
const errorBody = json({ $ref: '#/components/schemas/Error' });

/** Errors of the partner API, shared by every operation as `components.responses`. */
const API_ERRORS = {
  BadRequest: {
    status: 400,
    description:
      'Parámetros inválidos (`parametro_invalido`) o desconocidos (`parametro_desconocido`, cada uno en `details` con «Parámetro desconocido»), o cuerpo que no es JSON o está vacío (`json_invalido`); `details` lista los problemas por campo.',
    rated: true,
  },
  Unauthorized: {
    status: 401,
    description: `«${MESSAGES.unauthorized}», con el caso en \`reason\`: sin encabezado \`Authorization\` (\`clave_ausente\`), con uno que no es \`Bearer <API key>\` (\`clave_malformada\`; en ambos \`details.Authorization\` dice cómo enviarlo), con un API key vencido (\`clave_expirada\`, desde su \`expira_el\` o el fin de la gracia tras rotarlo), o con uno que no se acepta: desconocido, revocado, con la suma de verificación errada o de una empresa inactiva, sin decir cuál (\`clave_invalida\`). Lleva \`WWW-Authenticate: Bearer\`.`,
    rated: false,
  },
  Forbidden: {
    status: 403,
    description:
      'El API key no tiene el alcance que la operación necesita (`alcance_insuficiente`): `details.alcance` y `X-Accepted-Scopes` lo nombran. Cuenta en la cuota.',
    rated: true,
  },
  NotFound: { status: 404, description: 'El id no existe en la empresa del API key (los de otras empresas tampoco).', rated: true },

  PayloadTooLarge: { status: 413, description: 'El cuerpo supera 1 MB.', rated: true },
  UriTooLong: {
    status: 414,
    description: `La URL (ruta y parámetros) supera ${MAX_URL_BYTES / 1024} KB: «${MESSAGES.uriTooLong}». Se responde antes de autenticar y no cuenta.`,
    rated: false,
  },
  Conflict: {
    status: 409,
    description:
      'La solicitud choca con una anterior o con el estado actual y no se aplicó: la `referencia_externa` ya la usa una venta creada con otro cuerpo (`details` la nombra: `id_venta`, `correlativo`), el `Idempotency-Key` se usó con otro cuerpo u otra ruta, o su primera solicitud aún está en curso (entonces lleva `Retry-After`), ya hay 5 exportaciones en curso, o la exportación aún no está completada; `reason` y `error` dicen cuál.',
    rated: true,
  },
  UnsupportedMediaType: { status: 415, description: 'El cuerpo no se envió como `application/json`.', rated: true },
  RangeNotSatisfiable: {
    status: 416,
    description: 'El `Range` pedido no está dentro del archivo, o pide varios rangos; `Content-Range: bytes */<tamaño>` da el tamaño.',
    rated: true,
  },
  UnprocessableContent: {
    status: 422,
    description:
      'El cuerpo lleva un campo desconocido (`campo_desconocido`, nombrado por su ruta en `details`: `detalles.0.cantida`), no cumple las reglas (`cuerpo_invalido`) o una regla de negocio lo impide (`stock_insuficiente`, `limite_credito`, …: ver `reason`); `details` lista los campos que fallan (p. ej. `detalles.2.cantidad`). Nada cambia.',
    rated: true,
  },
  RequestHeaderFieldsTooLarge: {
    status: 431,
    description: `Los encabezados suman más de ${MAX_HEADER_BYTES / 1024} KB, o la línea de la solicitud y los encabezados juntos más de ${PARSER_MAX_HEADER_BYTES / 1024} KB (también por una URL enorme): «${MESSAGES.headersTooLarge}». Se responde antes de autenticar y no cuenta.`,
    rated: false,
  },
  TooManyRequests: {
    status: 429,
    description: `Cuota horaria agotada: «${MESSAGES.rateLimited}». No cuenta. También, sin cabeceras de cuota, cuando la dirección del cliente acumuló demasiados intentos de autenticación fallidos: «${MESSAGES.tooManyAuthFailures}».`,
    rated: false,
  },
  InternalError: { status: 500, description: `«${MESSAGES.internal}»; \`X-Error-Id\` lo identifica en los registros.`, rated: false },
  ServiceUnavailable: {
    status: 503,
    description:
      'El gateway atiende su máximo de solicitudes simultáneas, o el servicio que atiende la solicitud no está disponible: no se procesó y puede reintentarse tras `Retry-After`.',
    rated: false,
  },
  GatewayTimeout: {
    status: 504,
    description: 'El servicio no respondió a tiempo; la operación puede haberse aplicado o no.',
    rated: false,
  },
} as const;

type ApiError = keyof typeof API_ERRORS;

function apiErrorResponse(name: ApiError) {
  const { status, description, rated } = API_ERRORS[name];
  const required: HeaderName[] = ['X-Request-Id'];
  // 401, 414 and 431 are answered before the quota is counted; 5xx may come before or after it,
  // and 429 carries them for the quota but not for an address refused after failed authentications.
  const optional: HeaderName[] = [];
  if (rated) required.push(...RATE_HEADERS);
  // A POST's refusal is kept under its Idempotency-Key and repeated like its success.
  if (rated) optional.push('Idempotent-Replayed');
  else if (status >= 500 || status === 429) optional.push(...RATE_HEADERS);
  if (status === 429 || status === 503) required.push('Retry-After');
  if (status === 409) optional.push('Retry-After');
  if (status === 500) optional.push('X-Error-Id');
  if (status === 403) optional.push('X-Accepted-Scopes');
  // Its example is a recorded answer (`withExamples`).
  return { description, headers: headers(required, optional), ...errorBody };
}

const API_ERROR_BY_STATUS = Object.fromEntries(Object.entries(API_ERRORS).map(([name, { status }]) => [status, name as ApiError]));

/** Error statuses of a route: from what the gateway checks, plus those the route declares. */
function routeErrors(route: AnyRoute): number[] {
  // 400 on every route: one without query parameters refuses any that is sent.
  const statuses = new Set<number>([400, 401, 414, 429, 431, 500, 503, 504]);
  if (route.scope) statuses.add(403);
  if (route.params) statuses.add(404);
  if (route.method !== 'get' && route.method !== 'delete')
    statuses
      .add(400)
      .add(413)
      .add(415)
      .add(route.bodyErrorStatus ?? 422);
  // Every POST honours Idempotency-Key: a key reused with another request, or still running, is 409.
  if (route.method === 'post') statuses.add(409);
  for (const status of route.errors ?? []) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

function successBody(response: RouteResponse): z.ZodType {
  if (response.kind === 'raw') return response.schema;
  if (response.kind === 'list') return listEnvelope(response.schema, response.pagination);
  const body = envelope(response.schema);
  return response.idempotent ? body.extend({ meta: Meta.extend({ idempotent: z.boolean() }) }) : body;
}

const FILE_EXAMPLE = '(bytes del archivo .ndjson.gz: 1f 8b 08 00 …; descomprimido, {"id":1,…}\\n{"id":2,…}\\n)';

/** `get /inventory/:id` → `getInventoryById`. */
function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? `by-${segment.slice(1)}` : segment))
    .join('-')
    .split(/[-_.]/)
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

const IF_NONE_MATCH = z.object({
  'If-None-Match': z
    .string()
    .optional()
    .meta({ description: 'El `ETag` de una respuesta anterior: si la respuesta sigue igual, 304 sin cuerpo, que no cuenta en la cuota.' }),
});

/** The `Idempotency-Key` request header every POST of the partner API honours (see `idempotency`). */
const IdempotencyKeyHeader = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .regex(IDEMPOTENCY_KEY_PATTERN)
    .optional()
    .meta({
      description: [
        'Clave única de esta solicitud, elegida por el cliente (p. ej. un UUID), según el borrador IETF «The Idempotency-Key HTTP Header Field»; se acepta también entre comillas, como cadena de Structured Fields. Se guarda 24 horas por empresa y clave:',
        '- Reintentar la misma solicitud (método, ruta, parámetros y cuerpo; el orden de las claves del JSON no cuenta) con la misma clave no la ejecuta otra vez: responde la primera respuesta byte a byte (estado y cuerpo; solo `meta.idempotent`, donde lo hay, pasa a `true`) con `Idempotent-Replayed: true`. Las respuestas 5xx no se guardan: el reintento se ejecuta.',
        '- La misma clave con otra solicitud: 409 y nada cambia (el borrador sugiere 422; se usa 409, como para una `referencia_externa` usada con otro cuerpo).',
        '- La misma clave mientras la primera solicitud sigue en curso: 409 con `Retry-After`.',
        `- Vacía, de más de ${MAX_IDEMPOTENCY_KEY_LENGTH} caracteres o con caracteres fuera de ASCII visible (los espacios tampoco): 400 con \`details\` que nombran el encabezado.`,
      ].join('\n'),
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    }),
});

function apiOperation(route: AnyRoute): ZodOpenApiOperationObject {
  const responses: ZodOpenApiResponsesObject = {};
  // A download's bytes are resumed with Range, not revalidated with an ETag.
  const isGet = route.method === 'get' && route.response?.kind !== 'file';
  const rated = headers(['X-Request-Id', ...RATE_HEADERS, ...(isGet ? (['ETag'] as const) : [])]);
  const statuses = route.response?.statuses ?? { 200: 'OK' };
  for (const [status, description] of Object.entries(statuses)) {
    const file = route.response?.kind === 'file';
    const replayed: HeaderName[] = route.method === 'post' ? ['Idempotent-Replayed'] : [];
    responses[status as '200'] = {
      description: description ?? 'OK',
      headers:
        status === '201'
          ? headers(['X-Request-Id', ...RATE_HEADERS, 'Location'], replayed)
          : status === '202'
            ? headers(['X-Request-Id', ...RATE_HEADERS], ['Location', ...replayed])
            : file
              ? headers(['X-Request-Id', ...RATE_HEADERS, 'Accept-Ranges', ...(status === '206' ? (['Content-Range'] as const) : [])])
              : isGet
                ? rated
                : headers(['X-Request-Id', ...RATE_HEADERS], replayed),
      ...(route.response
        ? file
          ? // Bytes have no JSON example: the example says what they are.
            { content: { [route.response.contentType!]: { schema: route.response.schema, example: FILE_EXAMPLE } } }
          : json(successBody(route.response))
        : {}),
    };
  }
  if (isGet) {
    responses['304'] = {
      description: '`If-None-Match` coincide con el `ETag` de la respuesta: sin cuerpo, y no cuenta en la cuota.',
      headers: rated,
    };
  }
  for (const status of routeErrors(route)) {
    const name = API_ERROR_BY_STATUS[status];
    responses[String(status) as '400'] = name
      ? { $ref: `#/components/responses/${name}` }
      : { description: `HTTP ${status}`, ...errorBody };
  }
  const body = route.documentedBody ?? route.body;
  // The scope shows in the security requirement (OpenAPI 3.1 lets a bearer scheme list role names) and
  // in the description, which the generated clients carry into their types' comments.
  const scopeLine = route.scope ? `Alcance: \`${route.scope}\`.` : 'Alcance: cualquier API key vigente.';
  return {
    operationId: operationId(route.method, route.path),
    summary: route.summary,
    description: route.description ? `${route.description}\n\n${scopeLine}` : scopeLine,
    security: [{ bearerAuth: route.scope ? [route.scope] : [] }],
    tags: [route.path.split('/')[1]!],
    ...(route.params || route.query || isGet || route.method === 'post'
      ? {
          requestParams: {
            ...(route.params ? { path: route.params } : {}),
            ...(route.query ? { query: route.query } : {}),
            ...(isGet ? { header: IF_NONE_MATCH } : route.method === 'post' ? { header: IdempotencyKeyHeader } : {}),
          },
        }
      : {}),
    ...(body ? { requestBody: { required: !bodyIsOptional(route), ...json(body) } } : {}),
    responses,
  };
}

function webhookOperations(): ZodOpenApiPathsObject {
  const paths: ZodOpenApiPathsObject = {};
  const onlyRequestId = headers(['X-Request-Id']);
  const failure = (description: string, options: { required?: HeaderName[]; optional?: HeaderName[] } = {}) => ({
    description,
    headers: headers(['X-Request-Id', ...(options.required ?? [])], options.optional ?? []),
    ...errorBody,
  });
  for (const route of WEBHOOK_ROUTES) {
    const payload = route.plataforma === 'shopify' ? ShopifyOrder : route.recurso === 'producto' ? WooCommerceProduct : WooCommerceOrder;
    paths[openApiPath(route.path)] = {
      post: {
        operationId: operationId('post', `/${route.plataforma}/${route.recurso}`).replace('Pedido', 'Order').replace('Producto', 'Product'),
        summary: route.summary,
        description:
          'Sin API key ni cuota: autoriza el token de la integración en la ruta. Con un secreto configurado se verifica la firma (HMAC-SHA256 del cuerpo tal como llega, en base64). ' +
          'La entrega se guarda antes de responder y se procesa después, una sola vez aunque la plataforma la reintente.',
        tags: ['webhooks'],
        // No API key: the token in the path authorises the delivery.
        security: [],
        requestParams: { path: z.object({ token: z.string().meta({ description: 'Token de la integración del usuario (secreto).' }) }) },
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: payload },
            ...(route.plataforma === 'woocommerce' ? { 'application/x-www-form-urlencoded': { schema: WebhookPing } } : {}),
          },
        },
        responses: {
          200: {
            description: 'Entrega guardada (o reconocida como duplicada, ping o tema que no requiere nada).',
            headers: onlyRequestId,
            ...json(WebhookReceipt),
          },
          401: failure('Token desconocido o desactivado (`token_invalido`), o firma inválida (`firma_invalida`).'),
          413: failure(
            'El cuerpo supera 1 MB, o en base64 no cabe en un mensaje del bus interno (`max_payload` de NATS): con el máximo por omisión de 1 MB, cuerpos de más de unos 750 KB.',
          ),
          414: { $ref: '#/components/responses/UriTooLong' },
          422: failure('La entrega no se pudo aceptar; `details` dice por qué.'),
          431: { $ref: '#/components/responses/RequestHeaderFieldsTooLarge' },
          500: failure(MESSAGES.internal, { optional: ['X-Error-Id'] }),
          503: failure(
            'El gateway está al máximo de solicitudes simultáneas o el servicio de webhooks no está disponible: la entrega no se guardó y la plataforma debe reintentarla.',
            { required: ['Retry-After'] },
          ),
          504: failure('El servicio de webhooks no respondió a tiempo.'),
        },
      },
    };
  }
  return paths;
}

/** What the gateway answers on any path before routing: an oversized URL or headers. */
const BEFORE_ANY_ROUTE = {
  414: { $ref: '#/components/responses/UriTooLong' },
  431: { $ref: '#/components/responses/RequestHeaderFieldsTooLarge' },
} as const;

function referenceOperations(): ZodOpenApiPathsObject {
  const onlyRequestId = headers(['X-Request-Id']);
  return {
    [REFERENCE_PATHS.document]: {
      get: {
        operationId: 'getOpenApiDocument',
        summary: 'Este documento OpenAPI (sin API key ni cuota)',
        tags: ['referencia'],
        security: [],
        responses: {
          200: {
            description: 'El documento OpenAPI 3.1.',
            headers: onlyRequestId,
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          ...BEFORE_ANY_ROUTE,
          503: { $ref: '#/components/responses/ServiceUnavailable' },
        },
      },
    },
    [REFERENCE_PATHS.webhooks]: {
      get: {
        operationId: 'getWebhooksOpenApiDocument',
        summary: 'El documento OpenAPI de los webhooks entrantes, con su propio servidor (sin API key ni cuota)',
        tags: ['referencia'],
        security: [],
        responses: {
          200: {
            description: `El documento OpenAPI 3.1 de los webhooks, bajo \`${WEBHOOK_BASE}\`.`,
            headers: onlyRequestId,
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          ...BEFORE_ANY_ROUTE,
          503: { $ref: '#/components/responses/ServiceUnavailable' },
        },
      },
    },
    [REFERENCE_PATHS.docs]: {
      get: {
        operationId: 'getDocsPage',
        summary: 'Esta referencia en HTML (sin API key ni cuota)',
        tags: ['referencia'],
        security: [],
        responses: {
          200: {
            description: 'Página HTML que muestra el documento.',
            headers: onlyRequestId,
            content: { 'text/html': { schema: { type: 'string' }, example: '<!doctype html>\n<html lang="es">…</html>' } },
          },
          ...BEFORE_ANY_ROUTE,
          503: { $ref: '#/components/responses/ServiceUnavailable' },
        },
      },
    },
  };
}

/**
 * Fixes what JSON Schema cannot read from a zod transform: the contract's exact-decimal and
 * timestamp parsers answer plain numbers and ISO strings, and a query string parsed into a number
 * or an enum is documented as that number or enum (with its bounds).
 */
function describeTransforms(ctx: ZodOpenApiOverrideContext): void {
  const schema = ctx.zodSchema as unknown as z.ZodType;
  const replace = (next: Record<string, unknown>) => {
    for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
    Object.assign(ctx.jsonSchema, next);
  };
  if (schema === DecimalNumber) return replace({ type: 'number' });
  if (schema === Timestamp || schema === Meta.shape.timestamp) return replace({ type: 'string', format: 'date-time' });
  const json = ctx.jsonSchema as Record<string, unknown>;
  const def = defOf(schema);
  if (ctx.io === 'input' && def.type === 'pipe' && def.out && defOf(def.out).type !== 'transform') {
    const { $schema: _ignored, ...target } = z.toJSONSchema(def.out, { io: 'input' }) as Record<string, unknown>;
    void _ignored;
    replace(target);
  }
  // zod leaves out the default of a transformed input (its type is the output's): it is the parsed value here.
  if (ctx.io === 'input' && def.type === 'default' && json.default === undefined) json.default = def.defaultValue;
  // Answers may gain fields in a later 1.x: a validator generated from this document must accept
  // them. Inputs stay closed (an unknown field is refused by name).
  if (ctx.io === 'output' && json.additionalProperties === false) delete json.additionalProperties;
  // `.int()` adds the safe-integer range, which says nothing to a reader.
  if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
}

function defOf(schema: z.ZodType): { type: string; out?: z.ZodType; defaultValue?: unknown } {
  return (schema as unknown as { _zod: { def: { type: string; out?: z.ZodType; defaultValue?: unknown } } })._zod.def;
}

const INFO_DESCRIPTION = `Acceso de sistemas externos a las ventas, el inventario y las devoluciones de una empresa, creación de ventas y cotizaciones con el mismo proceso de facturación que la aplicación, importación de paquetes y webhooks de pedidos de las plataformas de comercio electrónico.

**Autenticación.** Cada solicitud a \`${API_BASE}\` lleva \`Authorization: Bearer <API_KEY>\`. La clave determina la empresa; \`meta.empresa\` es su nombre. Sin encabezado \`Authorization\`: 401 con \`reason\` \`clave_ausente\`; con uno que no es \`Bearer <API_KEY>\`: \`clave_malformada\`; clave desconocida o revocada, o empresa inactiva: \`clave_invalida\`, «${MESSAGES.unauthorized}» (sin decir cuál).

**Cuota.** Por empresa (todos sus API keys juntos) y por hora UTC fija (se reinicia a la hora en punto): 1000 solicitudes, o 2000 cuando se envían \`fecha_inicio\` y \`fecha_fin\`. Toda respuesta autenticada lleva \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` y \`X-RateLimit-Reset\`; al agotarla, 429 con \`Retry-After\`. Un 304 no cuenta.

**Lecturas condicionales y comprimidas.** Cada \`GET\` responde un \`ETag\` fuerte (el SHA-256 del cuerpo sin \`meta.timestamp\`; en \`GET /sales\` fuera del modo cursor, el de la versión de la página: las marcas de cambio de sus ventas y el total, de modo que el 304 se responde sin construir la página); repetido en \`If-None-Match\`, la respuesta es 304 sin cuerpo, con el \`ETag\` y los encabezados de la cuota, mientras nada haya cambiado, y no cuenta en la cuota. Las respuestas JSON de 1 KB o más se comprimen con gzip o br cuando \`Accept-Encoding\` lo admite (\`Vary: Accept-Encoding\`).

**Respuestas.** Éxito: \`{success: true, data, meta}\`, y \`pagination\` en las listas (\`page\` ≥ 1, \`per_page\` de 1 a 200, 100 por omisión). Ventas, devoluciones e inventario también se leen por cambio (modo cursor, \`order_by=updated_at\`): entonces \`pagination\` es \`{per_page, next_cursor, resume_cursor, has_more}\` (\`CursorPagination\`). Error: \`{success: false, error, code, reason, details?}\` con \`code\` igual al estado HTTP, \`reason\` la causa para programas (un valor estable de la lista cerrada del esquema \`Error\`; \`error\` es para personas y puede cambiar de redacción) y \`details\` que asocia cada campo a sus mensajes. Ruta desconocida: 404; método no admitido en una ruta existente: 405 con \`Allow\`. Una URL de más de ${MAX_URL_BYTES / 1024} KB: 414; encabezados de más de ${MAX_HEADER_BYTES / 1024} KB: 431.

**Nada se ignora.** Un parámetro de consulta que la operación no admite es 400 y un campo del cuerpo que no admite es 422 (\`reason\` \`parametro_desconocido\` o \`campo_desconocido\`), cada uno nombrado en \`details\` (los de objetos anidados por su ruta: \`detalles.0.cantida\`); los esquemas de los cuerpos declaran \`additionalProperties: false\`. Las respuestas, en cambio, pueden ganar campos en una versión 1.x posterior: sus esquemas no los cierran, y un cliente debe ignorar los que no conozca.

**Parámetros.** Cada parámetro de consulta se envía una sola vez y sin corchetes (\`nombre=a&nombre=b\`, \`nombre[]=a\` y \`nombre[a]=b\` responden 400 nombrando el parámetro). Los enteros se escriben en decimal (\`page=2\`; no \`2.0\` ni \`2e0\`) y los booleanos como \`true\` o \`false\` (también \`1\` y \`0\`). Los valores de las enumeraciones se comparan exactamente, distinguiendo mayúsculas (\`order_direction=DESC\` es 400). El texto debe ser Unicode válido: el carácter nulo o un sustituto UTF-16 sin pareja es 400 en un parámetro y 422 en el cuerpo, con el campo en \`details\`.

**Formatos.** Fechas \`AAAA-MM-DD\`, marcas de tiempo ISO 8601 en UTC, importes como números JSON (dinero con 2 decimales, cantidades y stock con hasta 4). En las solicitudes los decimales admitidos se declaran con \`multipleOf\` (0.01 o 0.0001): un validador en coma flotante binaria debe comparar con tolerancia (en ajv, \`multipleOfPrecision\`), porque 1.2345 / 0.0001 no da un entero exacto.

**Webhooks.** Los pedidos y productos que envían las plataformas llegan bajo \`${WEBHOOK_BASE}\`, fuera de esta base: se describen en su propio documento, \`${API_BASE}${REFERENCE_PATHS.webhooks}\`, que la referencia muestra junto a este.

**Versión.** La versión forma parte de la ruta (\`/api/external/v1\`); esta descripción corresponde a la interfaz ${API_VERSION}.`;

/**
 * One outbound event as the partner's URL receives it (the document's `webhooks`): one entry per
 * type, and `evento` with the union discriminated by `type` that a single receiver handles.
 */
function partnerEventOperation(type: EventType | 'ping' | 'evento'): ZodOpenApiOperationObject {
  const body = type === 'evento' ? DeliveredEvent : type === 'ping' ? PingEvent : TYPED_EVENTS[type];
  return {
    operationId: `event${type
      .split('.')
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join('')}`,
    summary:
      type === 'evento'
        ? 'Cualquier evento entregado a la URL de una suscripción: una unión discriminada por `type` (`data` es el objeto que nombra)'
        : `Evento ${type} entregado a la URL de una suscripción`,
    description:
      'Firmado según Standard Webhooks: verifique `webhook-signature` (`v1,` + base64 del HMAC-SHA256 de `<webhook-id>.<webhook-timestamp>.<cuerpo>` con el secreto `whsec_…`) con cualquier biblioteca de la especificación. ' +
      'El mismo `webhook-id` puede llegar más de una vez (reintentos, reenvíos): procéselo una sola vez.',
    tags: ['event-subscriptions'],
    requestParams: {
      header: z.object({
        'webhook-id': z.string().meta({ description: 'El id del evento (evt_…)' }),
        'webhook-timestamp': z.string().meta({ description: 'Segundos Unix del envío' }),
        'webhook-signature': z.string().meta({ description: 'v1,<base64 HMAC-SHA256>' }),
      }),
    },
    requestBody: {
      required: true,
      content: { 'application/json': { schema: body } },
    },
    responses: {
      '200': { description: 'Cualquier 2xx en 10 s es una entrega exitosa; otra respuesta o ninguna se reintenta.' },
    },
  };
}

/** The OpenAPI 3.1 document of the partner API, generated from the route table and the contracts' zod schemas. */
export function openApiDocument(routes: readonly AnyRoute[]): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: apiOperation(route) };
  }
  Object.assign(paths, referenceOperations());
  const webhooks: ZodOpenApiPathsObject = Object.fromEntries(
    (['evento', ...EVENT_TYPES, 'ping'] as const).map((type) => [type, { post: partnerEventOperation(type) }]),
  );

  const document = createDocument(
    {
      openapi: '3.1.0',
      info: { title: 'API externa de ventas, inventario y devoluciones', version: API_VERSION, description: INFO_DESCRIPTION },
      servers: [{ url: API_BASE, description: 'Este servidor' }],
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'sales', description: 'Ventas y cotizaciones' },
        { name: 'returns', description: 'Devoluciones de ventas' },
        { name: 'inventory', description: 'Productos y stock por bodega' },
        { name: 'packages', description: 'Importación de paquetes' },
        { name: 'system', description: 'Estado de la cuota' },
        {
          name: 'event-subscriptions',
          description: 'Suscripciones a los eventos de la empresa (webhooks salientes firmados según Standard Webhooks)',
        },
        { name: 'events', description: 'Los eventos de la empresa para consultarlos sin webhooks' },
        { name: 'branches', description: 'Sucursales y bodegas donde se registran las ventas' },
        { name: 'document-types', description: 'Tipos de documento con los que se emiten las ventas' },
        { name: 'channels', description: 'Canales de venta' },
        { name: 'customers', description: 'Clientes de la empresa' },
        { name: 'exports', description: 'Exportaciones completas de un recurso de la empresa' },
        { name: 'api-keys', description: 'Los API keys de la empresa: alcances, rotación, vencimiento y revocación' },
        { name: 'referencia', description: 'Esta documentación' },
      ],
      paths,
      webhooks,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `API key de la empresa. Cada operación nombra el alcance que necesita (\`recurso:nivel\`; \`write\` incluye \`read\`): ${SCOPES.map((x) => `\`${x}\``).join(', ')}.`,
          },
        },
        headers: Object.fromEntries(Object.entries(HEADERS).map(([name, header]) => [name, { ...header, required: true }])),
        responses: Object.fromEntries(Object.keys(API_ERRORS).map((name) => [name, apiErrorResponse(name as ApiError)])),
        schemas: {
          Error: ErrorEnvelope,
          Meta,
          Pagination,
          CursorPagination,
          Product,
          InventorySummary,
          Sale,
          SalesSummary,
          Return,
          ReturnsSummary,
          RateLimitStatus,
          Branch,
          DocumentType,
          Channel,
          Customer,
        },
      },
    },
    { override: describeTransforms },
  );
  return withExamples(document);
}

const WEBHOOKS_DESCRIPTION = `Lo que las plataformas de comercio electrónico envían al ERP: pedidos de WooCommerce y Shopify, que se convierten en ventas, y productos de WooCommerce, que actualizan el catálogo y el stock.

Cada integración tiene una URL con su token (\`${WEBHOOK_BASE}/woocommerce/{token}\`); no se usa API key ni cuenta en la cuota. Las respuestas de error llevan el mismo sobre que la API externa: \`{success: false, error, code, reason, details?}\`. A diferencia de la API externa, los campos que el esquema no nombra se aceptan: las plataformas agregan campos a sus pedidos. La API externa se describe en \`${API_BASE}${REFERENCE_PATHS.document}\`.`;

/**
 * The inbound webhooks as their own OpenAPI document, with `WEBHOOK_BASE` as its server: generic
 * clients ignore a path's own `servers`, so in the partner document they would call these paths
 * below the API base.
 */
export function webhooksDocument(): OpenApiDocument {
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: { title: 'Webhooks entrantes de las plataformas', version: API_VERSION, description: WEBHOOKS_DESCRIPTION },
      servers: [{ url: WEBHOOK_BASE, description: 'Este servidor' }],
      tags: [{ name: 'webhooks', description: 'Pedidos y productos enviados por las plataformas' }],
      paths: webhookOperations(),
      components: {
        headers: Object.fromEntries((['X-Request-Id', 'Retry-After'] as const).map((name) => [name, { ...HEADERS[name], required: true }])),
        responses: {
          UriTooLong: apiErrorResponse('UriTooLong'),
          RequestHeaderFieldsTooLarge: apiErrorResponse('RequestHeaderFieldsTooLarge'),
        },
        schemas: { Error: ErrorEnvelope },
      },
    },
    { override: describeTransforms },
  );
  return withExamples(document);
}
