import { z } from 'zod';
import { AppError, REASONS, REASON_VALUES } from './errors';

/** Base path of the partner API. */
export const API_BASE = '/api/external/v1';
/** Version the interface description carries. */
export const API_VERSION = '1.5.0';

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
  /** With `order_by=updated_at`: send it as `cursor` for the next page; null at the end. */
  next_cursor: z.string().nullable().optional(),
  /** With `order_by=updated_at`: send it as `cursor` later to get only what changed after this page. */
  resume_cursor: z.string().optional(),
});
export type Pagination = z.infer<typeof Pagination>;

/**
 * Position in a list ordered by change (delta sync): the change's transaction id (`xid8`, as
 * text) and the row id. Opaque to partners: base64url of JSON.
 */
export interface ChangeCursor {
  xid: string;
  id: number;
}

export function encodeChangeCursor(cursor: ChangeCursor): string {
  return Buffer.from(JSON.stringify([cursor.xid, cursor.id])).toString('base64url');
}

/** The position a cursor names, or undefined when it is not one this API issued. */
export function decodeChangeCursor(raw: string): ChangeCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [xid, id] = value as [unknown, unknown];
    if (typeof xid !== 'string' || !/^\d{1,20}$/.test(xid) || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
      return undefined;
    return { xid, id };
  } catch {
    return undefined;
  }
}

/** Where a delta-sync request resumes: undefined without a cursor; a cursor this API did not issue is refused (400). */
export function requestedChangeCursor(cursor: string | undefined): ChangeCursor | undefined {
  if (cursor === undefined) return undefined;
  const after = decodeChangeCursor(cursor);
  if (!after) throw new AppError('BAD_REQUEST', 'Parámetros inválidos', { cursor: ['Cursor inválido'] });
  return after;
}

/**
 * Pagination of a page ordered by change: `next_cursor` while more rows follow (null at the end),
 * `resume_cursor` always (where to ask later for what changed after this page).
 */
export function changePagination(
  perPage: number,
  total: number,
  positions: readonly ChangeCursor[],
  more: boolean,
  after: ChangeCursor | undefined,
): Pagination {
  const last = positions.at(-1) ?? after;
  return {
    current_page: 1,
    per_page: perPage,
    total,
    total_pages: Math.ceil(total / perPage),
    has_next: more,
    has_prev: after !== undefined,
    from: positions.length > 0 ? 1 : null,
    to: positions.length > 0 ? positions.length : null,
    next_cursor: more && last ? encodeChangeCursor(last) : null,
    ...(last ? { resume_cursor: encodeChangeCursor(last) } : {}),
  };
}

/** Query fields of delta sync, shared by the lists that offer it. */
export const DeltaSyncFields = {
  updated_since: z.iso
    .datetime({ offset: true, message: 'Debe ser una fecha y hora ISO 8601 (por ejemplo 2026-01-31T12:00:00Z)' })
    .optional(),
  cursor: z
    .string()
    .max(200)
    .refine((v) => decodeChangeCursor(v) !== undefined, 'Cursor inválido: use el de pagination.next_cursor o resume_cursor')
    .meta({
      description:
        'El `pagination.next_cursor` o `resume_cursor` de una respuesta anterior, sin cambios (otro valor: «Cursor inválido: use el de pagination.next_cursor o resume_cursor»). ' +
        'El cursor solo se usa con order_by=updated_at.',
    })
    .optional(),
};

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

/** Success envelope of a list. */
export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), pagination: Pagination, meta: Meta });
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

/** A list page as a service replies it: the rows, the total and the normalised filters. */
export function pageReply<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    pagination: Pagination,
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
