import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { Amount, DateRangeEnd, DateString, Id, MAX_ID, MoneyText } from './fields';
import {
  DecimalNumber,
  DeltaSyncFields,
  ListPagination,
  PaginationQuery,
  Timestamp,
  pageReply,
  queryInt,
  refuseOutsideCursorMode,
} from './http';
import { STOCK_SCALE } from './money';

/**
 * Kinds of return document: goods back (`devolucion`), a price adjustment that moves no stock
 * (`descuento_ajuste`), and the annulment of the invoice (`anulacion_factura`, goods back too).
 */
export const TIPOS_DEVOLUCION = ['devolucion', 'descuento_ajuste', 'anulacion_factura'] as const;
export type TipoDevolucion = (typeof TIPOS_DEVOLUCION)[number];

/** `estado` of a return (DESIGN §4): `Confirmada` while `enable` is 1, `Anulada` once it is 0. */
export const ESTADOS_DEVOLUCION = ['Confirmada', 'Anulada'] as const;
export type EstadoDevolucion = (typeof ESTADOS_DEVOLUCION)[number];

/** Returned quantities keep three decimals, as stock does. */
export const RETURN_QUANTITY_SCALE = STOCK_SCALE;
export const MAX_LINES_PER_RETURN = 100;

/** The document type a company's returns are numbered with unless another is named. */
export const DEFAULT_RETURN_DOCUMENT = { nombre: 'Nota de crédito', prefijo: 'NC-' } as const;

/** Unit of measure of every return line: the catalog keeps no other unit. */
export const MEDIDA_UNIDAD = 'Unidad';

/** A line of a return as returned (spec "Return detail", plus ids, tax split and rate). */
export const ReturnLine = z.object({
  id: z.number().int(),
  id_detalle_venta: z.number().int(),
  id_producto: z.number().int(),
  nombre_producto: z.string(),
  codigo_producto: z.string(),
  marca_producto: z.string(),
  descripcion: z.string(),
  cantidad: DecimalNumber,
  precio: DecimalNumber,
  costo: DecimalNumber,
  descuento: DecimalNumber,
  porcentaje_impuesto: DecimalNumber,
  sub_total: DecimalNumber,
  iva: DecimalNumber,
  no_sujeta: DecimalNumber,
  cuenta_a_terceros: DecimalNumber,
  exenta: DecimalNumber,
  total: DecimalNumber,
  medida: z.string(),
});

/** A return as every returns endpoint answers it (spec "Return"). */
export const Return = z.object({
  id: z.number().int(),
  fecha: z.string(),
  correlativo: z.string(),
  tipo: z.enum(TIPOS_DEVOLUCION),
  sub_total: DecimalNumber,
  no_sujeta: DecimalNumber,
  exenta: DecimalNumber,
  cuenta_a_terceros: DecimalNumber,
  total: DecimalNumber,
  iva: DecimalNumber,
  iva_retenido: DecimalNumber,
  descuento: DecimalNumber,
  observaciones: z.string(),
  enable: z.union([z.literal(0), z.literal(1)]),
  estado: z.enum(ESTADOS_DEVOLUCION),
  id_venta: z.number().int(),
  nombre_cliente: z.string(),
  nombre_usuario: z.string(),
  nombre_documento: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
  detalles: z.array(ReturnLine),
});
export type Return = z.output<typeof Return>;
export type ReturnInput = z.input<typeof Return>;

const dateOrder = (v: { fecha_inicio?: string | undefined; fecha_fin?: string | undefined }) =>
  !v.fecha_inicio || !v.fecha_fin || v.fecha_fin >= v.fecha_inicio;
const DATE_ORDER_ISSUE = { message: 'No puede ser anterior a fecha_inicio', path: ['fecha_fin'] };

const DateFilters = {
  fecha_inicio: DateString.optional(),
  fecha_fin: DateRangeEnd.optional(),
};

/** Query string of `GET /returns` (problems answer 400 with details). `id_venta` filters by the originating sale. */
export const ReturnsListQuery = PaginationQuery.extend({
  ...DateFilters,
  ...DeltaSyncFields,
  id_venta: queryInt({ min: 1, max: MAX_ID }).optional(),
  /** `updated_at`: by change, oldest first, paged with `cursor` (delta sync). */
  order_by: z.enum(['updated_at'], { message: 'Debe ser updated_at' }).optional(),
})
  .refine(dateOrder, DATE_ORDER_ISSUE)
  .refine((q) => q.cursor === undefined || q.order_by === 'updated_at', {
    message: 'El cursor solo se usa con order_by=updated_at',
    path: ['cursor'],
  })
  .superRefine(refuseOutsideCursorMode);

/** Query string of `GET /returns/summary`. */
export const ReturnsSummaryQuery = z.strictObject(DateFilters).refine(dateOrder, DATE_ORDER_ISSUE);

/** Path parameter `{id}` of `GET /returns/{id}`. */
export const ReturnIdParam = z.object({ id: queryInt({ min: 1, max: MAX_ID }) });

export const ReturnsFilters = z
  .object({ ...DateFilters, id_venta: z.number().int().positive().max(MAX_ID).optional() })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type ReturnsFilters = z.output<typeof ReturnsFilters>;

/** A page of returns: newest `fecha` first, `id` descending as the tie-breaker. */
export const ReturnsListRequest = z
  .object({
    ...DateFilters,
    id_venta: z.number().int().positive().max(MAX_ID).optional(),
    page: z.number().int().min(1).default(1),
    per_page: z.number().int().min(1).max(200).default(100),
    order_by: z.enum(['updated_at']).optional(),
    updated_since: z.string().optional(),
    cursor: z.string().optional(),
  })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type ReturnsListRequest = z.output<typeof ReturnsListRequest>;

export const ReturnsSummaryRequest = z.object(DateFilters).refine(dateOrder, DATE_ORDER_ISSUE);
export type ReturnsSummaryRequest = z.output<typeof ReturnsSummaryRequest>;

/** `filters_applied` of a returns list or summary: the filters sent, without paging. */
export function returnsFiltersApplied(request: ReturnsFilters): Record<string, string | number> {
  const applied: Record<string, string | number> = {};
  if (request.fecha_inicio !== undefined) applied.fecha_inicio = request.fecha_inicio;
  if (request.fecha_fin !== undefined) applied.fecha_fin = request.fecha_fin;
  if (request.id_venta !== undefined) applied.id_venta = request.id_venta;
  return applied;
}

/** Spec "GET /returns/summary": over active returns only (`enable` 1). */
export const ReturnsSummary = z.object({
  cantidad_devoluciones: z.number().int(),
  total_devuelto: DecimalNumber,
  total_iva: DecimalNumber,
  total_descuentos: DecimalNumber,
  promedio_devolucion: DecimalNumber,
  devoluciones_por_tipo: z.array(z.object({ tipo: z.enum(TIPOS_DEVOLUCION), cantidad: z.number().int(), total: DecimalNumber })),
});
export type ReturnsSummary = z.output<typeof ReturnsSummary>;

/** Subjects of the partner API's returns endpoints. */
export const returnsApiSubjects = defineCatalog({
  'returns.return.list': {
    tenant: true,
    json: true,
    errors: [],
    request: ReturnsListRequest,
    reply: pageReply(Return, ListPagination),
  },
  'returns.return.get': {
    tenant: true,
    json: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Return,
  },
  'returns.summary': {
    tenant: true,
    errors: [],
    request: ReturnsSummaryRequest,
    reply: ReturnsSummary,
  },
});

/**
 * One line of a return request: the sale line by its id, or by product (the sale's lines of that
 * product in order, each up to what is left of it). `precio` credits another unit price (at most
 * the line's effective price); by default the sale's price and a share of its discount.
 */
export const ReturnLineRequest = z
  .object({
    id_detalle: Id.optional(),
    id_producto: Id.optional(),
    cantidad: Amount({ min: 0, max: 999_999_999, scale: RETURN_QUANTITY_SCALE, positive: true }),
    precio: Amount({ min: 0, max: 999_999_999_999, scale: 4 }).optional(),
  })
  .refine((l) => (l.id_detalle === undefined) !== (l.id_producto === undefined), {
    message: 'Indique id_detalle o id_producto, uno de los dos',
    path: ['id_detalle'],
  });
export type ReturnLineRequest = z.output<typeof ReturnLineRequest>;

export const ReturnCreateRequest = z
  .object({
    empresa_id: Id,
    id_venta: Id,
    fecha: DateString,
    tipo: z.enum(TIPOS_DEVOLUCION, { message: `Debe ser uno de: ${TIPOS_DEVOLUCION.join(', ')}` }),
    observaciones: z.string().trim().max(1000, 'Debe tener como máximo 1000 caracteres').optional(),
    /** Makes the request idempotent: a reference the company already used answers its return. */
    referencia: z.string().trim().min(1).max(255).optional(),
    /** The operator; the back office itself when absent. */
    usuario: z
      .object({ id: Id, nombre: z.string().trim().min(1).max(255) })
      .nullable()
      .optional(),
    /**
     * The document type whose series numbers the return, found by name and prefix or created
     * starting at `correlativo`; `DEFAULT_RETURN_DOCUMENT` when absent.
     */
    documento: z
      .object({
        nombre: z.string().trim().min(1).max(255),
        prefijo: z.string().max(50).default(''),
        correlativo: z.number().int().min(1).max(MAX_ID).optional(),
      })
      .optional(),
    /** The lines; `anulacion_factura` may leave them out to return everything not yet returned. */
    detalles: z.array(ReturnLineRequest).max(MAX_LINES_PER_RETURN, `Debe incluir como máximo ${MAX_LINES_PER_RETURN} líneas`).default([]),
  })
  .refine((r) => r.tipo === 'anulacion_factura' || r.detalles.length > 0, { message: 'Debe incluir al menos 1 línea', path: ['detalles'] });
export type ReturnCreateRequest = z.output<typeof ReturnCreateRequest>;

const ReturnRef = z.object({ empresa_id: Id, id_devolucion: Id });

/** Back-office subjects of the returns service (admin CLI and fixture loader). Never exposed over HTTP. */
export const returnsAdminSubjects = defineCatalog({
  /**
   * Creates a return from a sale's lines: prices, costs and tax taken from the sale, quantities
   * at most what was sold minus what active returns already took (422 otherwise, nothing
   * changed), a correlative from its document type's series, and the stock back in the sale's
   * warehouse once (except `descuento_ajuste`).
   */
  'returns.admin.create': {
    tenant: false,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'BUSINESS_RULE'],
    request: ReturnCreateRequest,
    reply: z.object({ devolucion: Return, idempotent: z.boolean() }),
  },
  /** Annuls a return: `enable` 0, its stock movement reversed once (a repeated call changes nothing). */
  'returns.admin.annul': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: ReturnRef,
    reply: Return,
  },
});

/**
 * What webhook-ingest asks of returns: a platform's refund booked as a return, under the same rules
 * as `returns.admin.create` (its `referencia` keeps a refund delivered twice to one return).
 */
export const returnsPlatformSubjects = defineCatalog({
  'returns.platform.create': returnsAdminSubjects['returns.admin.create'],
});

/**
 * What the returns service answers the sales service. `returns.sale.registrations` says which of
 * a sale's registrations (`sales.sale.return.register`) became a committed return. It answers
 * only when no return of that sale is being made (`ocupada` otherwise), so an answer that a
 * registration has no return is final: the transaction that registered it is over.
 */
export const returnsForSalesSubjects = defineCatalog({
  'returns.sale.registrations': {
    tenant: false,
    errors: [],
    request: z.object({ empresa_id: Id, id_venta: Id, claves: z.array(z.string().min(1).max(200)).min(1).max(1000) }),
    reply: z.object({
      ocupada: z.boolean(),
      /** Each committed return with its total, so the sale books its amount when it confirms the registration. */
      devoluciones: z.array(z.object({ clave: z.string(), id_devolucion: z.number().int(), total: MoneyText })),
    }),
  },
});

const ReturnEvent = z.object({
  empresa_id: z.number().int().positive(),
  id_devolucion: z.number().int().positive(),
  id_venta: z.number().int().positive(),
  /** The return's total, an exact decimal string. */
  total: MoneyText,
  /** The return as `GET /returns/{id}` answered it when the event was recorded. */
  devolucion: z.record(z.string(), z.unknown()).optional(),
  /** The key the return registered with its sale under before it committed (absent on returns made before registration). */
  clave_registro: z.string().min(1).max(200).optional(),
});

export const returnsEvents = defineEvents({
  /** A return was committed: the sale's returned amount grows by `total`; its stock is owed back. */
  'events.returns.return.created': { payload: ReturnEvent },
  /** A return was annulled: the sale's returned amount shrinks by `total`; its stock movement is owed reversed. */
  'events.returns.return.annulled': { payload: ReturnEvent },
});
