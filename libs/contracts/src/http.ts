import { z } from 'zod';
import { REASONS, REASON_VALUES } from './errors';

/** Base path of the partner API. */
export const API_BASE = '/api/external/v1';
/** Version the interface description carries. */
export const API_VERSION = '1.7.0';

/** A query-string integer: digits only (no "1e3", no "1.0"), then bounds. */
export function queryInt(bounds: { min?: number; max?: number } = {}) {
  let n = z.number().int();
  if (bounds.min !== undefined) n = n.min(bounds.min, `Debe ser mayor o igual a ${bounds.min}`);
  if (bounds.max !== undefined) n = n.max(bounds.max, `Debe ser menor o igual a ${bounds.max}`);
  return z
    .string()
    .regex(/^-?\d{1,15}$/, 'Debe ser un número entero')
    .transform(Number)
    .pipe(n);
}

/**
 * Renders `schema` in the OpenAPI document as `json`: what a client sends, where zod would derive
 * the parser's input (a query string is text to zod, a boolean or an integer to the spec).
 */
export function documentAs<T extends z.ZodType>(schema: T, json: Record<string, unknown>): T {
  return schema.meta({
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
      Object.assign(jsonSchema, json);
    },
  });
}

/** A query-string boolean, documented as a boolean: true/false, also 1/0. */
export const QueryBoolean = documentAs(
  z.enum(['true', 'false', '1', '0'], { message: 'Debe ser true, false, 1 o 0' }).transform((v) => v === 'true' || v === '1'),
  { type: 'boolean', description: 'Se escribe `true` o `false`; también se aceptan `1` y `0`.' },
);

/** Path parameter `{id}`: a positive integer that fits Postgres `integer`. */
export const IdParam = z.object({
  id: queryInt({ min: 1, max: 2_147_483_647 }),
});

/** Common list parameters; the lists extend it, and an unknown parameter is refused by name. */
export const PaginationQuery = z.strictObject({
  page: queryInt({ min: 1, max: 1_000_000 }).default(1),
  per_page: queryInt({ min: 1, max: 200 }).default(100),
});

/** What a service needs to page: already validated numbers. */
export const PageRequest = z.object({
  page: z.number().int().min(1),
  per_page: z.number().int().min(1).max(200),
});
export type PageRequest = z.infer<typeof PageRequest>;

export const Pagination = z.object({
  current_page: z.number().int(),
  per_page: z.number().int(),
  total: z.number().int(),
  total_pages: z.number().int(),
  has_next: z.boolean(),
  has_prev: z.boolean(),
  from: z.number().int().nullable(),
  to: z.number().int().nullable(),
});
export type Pagination = z.infer<typeof Pagination>;

/**
 * Pagination of a list in cursor mode (`order_by=updated_at` or `cursor`): only what is true of a
 * page read by change. Numbered pages, totals and a way back have no meaning there.
 */
export const CursorPagination = z.object({
  per_page: z.number().int().meta({ description: 'Filas pedidas por página; una página puede traer menos.' }),
  next_cursor: z.string().nullable().meta({
    description:
      'Mientras `has_more`: envíelo como `cursor` (con los mismos filtros) para leer la página siguiente. `null` cuando esta página llega al final.',
  }),
  resume_cursor: z.string().meta({
    description:
      'Guárdelo y envíelo más tarde como `cursor` (con los mismos filtros): la lista responde solo lo que cambió después de esta página, sin saltar ni repetir un cambio. Al final de la lista es la marca de agua de la sincronización.',
  }),
  has_more: z.boolean().meta({ description: '`true` cuando hay más cambios después de esta página; se leen con `next_cursor`.' }),
});
export type CursorPagination = z.infer<typeof CursorPagination>;

/** Pagination of a list that also reads by change: numbered pages, or cursor mode. */
export const ListPagination = z.union([Pagination, CursorPagination]);
export type ListPagination = z.infer<typeof ListPagination>;

/** Why a parameter is refused where cursor mode (`order_by=updated_at` or `cursor`) would ignore it. */
export const CURSOR_MODE_REFUSALS = {
  page: 'No se usa en modo cursor (order_by=updated_at o cursor): la página siguiente se pide con cursor=pagination.next_cursor',
  order_direction: 'El modo cursor (order_by=updated_at o cursor) solo ordena asc',
  updated_since: 'Solo se usa en modo cursor: agregue order_by=updated_at',
};

/** Why a cursor is refused: by its shape here, by its content in the service that reads it. */
export const INVALID_CURSOR = 'Cursor inválido: use el de pagination.next_cursor o resume_cursor';

/** Query fields of delta sync, shared by the lists that offer it; with them `page` has no default, so cursor mode can tell it was sent. */
export const DeltaSyncFields = {
  page: documentAs(queryInt({ min: 1, max: 1_000_000 }), {
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    default: 1,
    description: `En modo cursor, 400: «${CURSOR_MODE_REFUSALS.page}».`,
  }).optional(),
  updated_since: z.iso
    .datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601 (por ejemplo 2026-01-31T12:00:00Z)' })
    .meta({
      description: `Solo lo que cambió desde este momento (\`updated_at\` ≥ \`updated_since\`). Sin modo cursor, 400: «${CURSOR_MODE_REFUSALS.updated_since}».`,
    })
    .optional(),
  cursor: z
    .string()
    // A cursor handed over from a snapshot names the transactions running then (at most one per connection).
    .max(4000)
    // The shape only: the service that issued it reads it, and refuses one it did not issue alike.
    .regex(/^[A-Za-z0-9_-]+$/, INVALID_CURSOR)
    .meta({
      description:
        'El `pagination.next_cursor` o `resume_cursor` de una respuesta anterior, sin cambios (otro valor: «Cursor inválido: use el de pagination.next_cursor o resume_cursor»). ' +
        'El cursor solo se usa con order_by=updated_at.',
    })
    .optional(),
};

/**
 * Cursor mode (`order_by=updated_at` or a `cursor`) reads by change, oldest first, one page after
 * another by `cursor`: a `page` or `order_direction=desc` would be ignored there, and
 * `updated_since` is read only there, so each is refused by name (400) where it would be ignored.
 * For `superRefine` of a list query that offers delta sync.
 */
export function refuseOutsideCursorMode(
  q: {
    page?: number | undefined;
    order_by?: string | undefined;
    order_direction?: string | undefined;
    cursor?: string | undefined;
    updated_since?: string | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  if (q.order_by !== 'updated_at' && q.cursor === undefined) {
    if (q.updated_since !== undefined)
      ctx.addIssue({ code: 'custom', path: ['updated_since'], message: CURSOR_MODE_REFUSALS.updated_since });
    return;
  }
  if (q.page !== undefined) ctx.addIssue({ code: 'custom', path: ['page'], message: CURSOR_MODE_REFUSALS.page });
  if (q.order_direction === 'desc')
    ctx.addIssue({ code: 'custom', path: ['order_direction'], message: CURSOR_MODE_REFUSALS.order_direction });
}

/** Builds the spec's pagination block from the page asked for and the total count. */
export function paginate(page: PageRequest, total: number): Pagination {
  const totalPages = Math.ceil(total / page.per_page);
  const first = (page.page - 1) * page.per_page + 1;
  const onPage = Math.max(0, Math.min(page.per_page, total - first + 1));
  return {
    current_page: page.page,
    per_page: page.per_page,
    total,
    total_pages: totalPages,
    has_next: page.page < totalPages,
    has_prev: page.page > 1,
    from: onPage > 0 ? first : null,
    to: onPage > 0 ? first + onPage - 1 : null,
  };
}

export const Meta = z.object({
  empresa: z.string(),
  timestamp: z.string(),
  filters_applied: z.record(z.string(), z.unknown()),
  idempotent: z.boolean().optional(),
});
export type Meta = z.infer<typeof Meta>;

/** Success envelope around a data schema. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data, meta: Meta });
}

/** Success envelope of a list (`ListPagination` for one that also reads by change). */
export function listEnvelope<T extends z.ZodType>(item: T, pagination: z.ZodType = Pagination) {
  return z.object({ success: z.literal(true), data: z.array(item), pagination, meta: Meta });
}

export const ErrorEnvelope = z.object({
  success: z.literal(false),
  error: z.string().meta({ description: 'Qué falló, para personas; puede cambiar de redacción: los programas usan `reason`.' }),
  code: z.number().int().meta({ description: 'El estado HTTP de la respuesta.' }),
  reason: z.enum(REASON_VALUES).meta({
    description: [
      'La causa del rechazo, para programas: un valor estable de esta lista cerrada (no cambia de nombre ni de significado).',
      '',
      ...Object.entries(REASONS).map(([value, meaning]) => `- \`${value}\`: ${meaning}`),
    ].join('\n'),
  }),
  details: z
    .record(z.string(), z.array(z.string()))
    .meta({ description: 'Mensajes por campo o parámetro, por su ruta (`detalles.2.cantidad`); `_` para el conjunto.' })
    .optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** A list page as a service replies it: the rows, the pagination and the normalised filters. */
export function pageReply<T extends z.ZodType, P extends z.ZodType = typeof Pagination>(
  item: T,
  pagination: P = Pagination as unknown as P,
) {
  return z.object({
    items: z.array(item),
    pagination,
    filters_applied: z.record(z.string(), z.unknown()),
  });
}

/** Money and quantities leave the services as JSON numbers, parsed from exact decimal strings. */
export const DecimalNumber = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: `Decimal inválido: ${String(v)}` });
    return z.NEVER;
  }
  return n;
});

/** Timestamps leave the services as ISO 8601 UTC strings. */
export const Timestamp = z
  .union([z.date(), z.string()])
  .transform((v) => (v instanceof Date ? v.toISOString() : new Date(v).toISOString()));
