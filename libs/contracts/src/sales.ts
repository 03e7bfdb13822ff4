import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { Amount, BlankAsAbsentText, DateRangeEnd, DateString, Id, MAX_ID, NonEmptyText, RequiredDate, missingOr } from './fields';
import {
  DecimalNumber,
  DeltaSyncFields,
  ErrorEnvelope,
  ListPagination,
  PageRequest,
  PaginationQuery,
  Timestamp,
  pageReply,
  queryInt,
  refuseOutsideCursorMode,
  CURSOR_MODE_REFUSALS,
} from './http';
import { ItemError } from './errors';
import { ORDER_DIRECTIONS } from './inventory';

/** Values of `estado` accepted by `POST /sales`. */
export const ESTADOS_VENTA_CREACION = ['Pagada', 'Completada', 'Pendiente', 'Cotizacion'] as const;
/** Values of `estado` a sale is stored and returned with (DESIGN §4): `Pagada` is stored as `Completada`. */
export const ESTADOS_VENTA = ['Completada', 'Pendiente', 'Anulada', 'Cotizacion'] as const;
export type EstadoVenta = (typeof ESTADOS_VENTA)[number];
export type EstadoVentaCreacion = (typeof ESTADOS_VENTA_CREACION)[number];
/** Values of `estado` accepted by `PUT /sales/{id}`: those of create plus `Pre-venta`, stored as `Cotizacion`. */
export const ESTADOS_VENTA_ACTUALIZACION = [...ESTADOS_VENTA_CREACION, 'Pre-venta'] as const;
export type EstadoVentaActualizacion = (typeof ESTADOS_VENTA_ACTUALIZACION)[number];
/** Stored states in which `PUT /sales/{id}` may change a sale (while no fiscal document is emitted). */
export const ESTADOS_VENTA_EDITABLES = ['Pendiente', 'Cotizacion'] as const;

/** Where a sale came from: the partner API, an e-commerce platform, or the fixture loader. */
export const ORIGENES_VENTA = ['api', 'woocommerce', 'shopify', 'fixture'] as const;

/** Orderings of `GET /sales`; `id` in the same direction always breaks ties. */
export const SALES_ORDER_BY = ['fecha', 'total', 'correlativo', 'created_at', 'updated_at'] as const;

export const MAX_LINES_PER_SALE = 100;
/** Largest amount a sale or line may reach: what `numeric(18,2)` keeps with room for sums. */
export const MAX_SALE_AMOUNT = '9999999999999.99';

const isObject = (payload: { value: unknown }) =>
  typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value);

/** JSON Schema of "at least one of these fields" (none of them nullable). */
const oneOfFields = (...fields: string[]) => ({ anyOf: fields.map((field) => ({ required: [field] })) });

const SaleLineFields = z.strictObject(
  {
    id: Id.optional(),
    id_producto: Id.optional(),
    codigo_producto: NonEmptyText(255).optional(),
    cantidad: Amount({ min: 0.0001, max: 999_999_999, scale: 4 }).meta({
      description: `Hasta 4 decimales. El total de la línea (cantidad × precio − descuento, con impuestos) no puede superar ${MAX_SALE_AMOUNT}.`,
    }),
    precio: Amount({ min: 0, max: 999_999_999_999, scale: 4 })
      .meta({ description: 'Precio unitario con impuestos, hasta 4 decimales; por omisión el del producto.' })
      .optional(),
    descuento: Amount({ min: 0, max: 999_999_999_999, scale: 2 })
      .meta({ description: 'Descuento de la línea en dinero, hasta 2 decimales; no puede superar cantidad × precio.' })
      .optional(),
    id_presentacion: Id.optional(),
    porcentaje_impuesto: Amount({ min: 0, max: 100, scale: 4 }).optional(),
  },
  { error: 'Cada línea debe ser un objeto JSON' },
);

/** One line of `detalles` in `POST /sales`. */
export const SaleLineInput = SaleLineFields.refine((l) => l.id_producto !== undefined || l.codigo_producto !== undefined, {
  message: 'Debe indicar id_producto o codigo_producto',
  path: ['id_producto'],
  when: isObject,
}).meta({
  ...oneOfFields('id_producto', 'codigo_producto'),
  description: 'Lleva `id_producto` o `codigo_producto` (código o SKU de un producto activo de la empresa).',
});
export type SaleLineInput = z.output<typeof SaleLineInput>;

/** Fields of `POST /sales` (spec "POST /sales", limits of "Limits"). */
const SaleFields = z.strictObject(
  {
    referencia_externa: BlankAsAbsentText(255),
    referencia: BlankAsAbsentText(255),
    fecha: RequiredDate,
    estado: z.enum(ESTADOS_VENTA_CREACION, { error: missingOr(`Debe ser uno de: ${ESTADOS_VENTA_CREACION.join(', ')}`) }),
    id_sucursal: Id.optional(),
    sucursal: NonEmptyText(255).optional(),
    id_bodega: Id,
    id_documento: Id,
    id_canal: Id.optional(),
    id_cliente: Id.optional(),
    cotizacion: z.boolean({ error: 'Debe ser true o false' }).optional(),
    fecha_expiracion: RequiredDate.optional(),
    forma_pago: BlankAsAbsentText(100),
    observaciones: BlankAsAbsentText(1000),
    monto_pago: Amount({ min: 0, max: 9_999_999_999_999, scale: 2 }).optional(),
    cambio: Amount({ min: 0, max: 9_999_999_999_999, scale: 2 }).optional(),
    detalles: z
      .array(SaleLineInput, { error: missingOr('Debe ser una lista de líneas') })
      .min(1, 'Debe incluir al menos 1 línea')
      .max(MAX_LINES_PER_SALE, `Debe incluir como máximo ${MAX_LINES_PER_SALE} líneas`),
  },
  { error: 'El cuerpo debe ser un objeto JSON' },
);

type SaleFieldsOut = z.output<typeof SaleFields>;

/**
 * The rules between fields, checked even when some field fails, so one answer names every
 * problem (`when` lets a refinement run past other issues).
 */
function withSaleRules<T extends z.ZodType<SaleFieldsOut>>(schema: T) {
  const when = isObject;
  return schema
    .refine((v) => v.id_sucursal !== undefined || v.sucursal !== undefined, {
      message: 'Debe indicar id_sucursal o sucursal',
      path: ['id_sucursal'],
      when,
    })
    .refine((v) => v.estado === 'Cotizacion' || v.id_canal !== undefined, {
      message: 'Es obligatorio salvo cuando el estado es Cotizacion',
      path: ['id_canal'],
      when,
    })
    .refine((v) => v.estado !== 'Pendiente' || v.id_cliente !== undefined, {
      message: 'Es obligatorio cuando el estado es Pendiente',
      path: ['id_cliente'],
      when,
    })
    .refine((v) => v.cotizacion !== true || v.estado === 'Cotizacion', {
      message: 'Solo puede ser true cuando el estado es Cotizacion',
      path: ['cotizacion'],
      when,
    })
    .refine((v) => !v.referencia || !v.referencia_externa || v.referencia === v.referencia_externa, {
      message: 'Es un alias de referencia_externa y no coincide con ella',
      path: ['referencia'],
      when,
    })
    .refine((v) => !v.fecha_expiracion || typeof v.fecha !== 'string' || v.fecha_expiracion >= v.fecha, {
      message: 'No puede ser anterior a fecha',
      path: ['fecha_expiracion'],
      when,
    })
    .meta({
      allOf: [
        oneOfFields('id_sucursal', 'sucursal'),
        { if: { required: ['estado'], properties: { estado: { const: 'Cotizacion' } } }, else: { required: ['id_canal'] } },
        { if: { required: ['estado'], properties: { estado: { const: 'Pendiente' } } }, then: { required: ['id_cliente'] } },
        {
          if: { required: ['cotizacion'], properties: { cotizacion: { const: true } } },
          then: { properties: { estado: { const: 'Cotizacion' } } },
        },
      ],
      description: [
        'Reglas entre campos (422 con `details` cuando no se cumplen):',
        '- `id_sucursal` o `sucursal`; `id_canal` salvo con `estado` `Cotizacion`; `id_cliente` con `estado` `Pendiente`; `cotizacion: true` solo con `estado` `Cotizacion` (las cuatro también en el esquema).',
        '- `referencia`, si se envía junto con `referencia_externa`, debe ser igual a ella: si no, «Es un alias de referencia_externa y no coincide con ella».',
        '- `fecha_expiracion` no puede ser anterior a `fecha`.',
        '- Lo que depende de datos guardados: sucursal, bodega, tipo de documento, canal, cliente y productos existentes y activos en la empresa; la bodega y el tipo de documento de esa sucursal; un tipo de documento solo de cotizaciones solo con `Cotizacion`; el límite de crédito del cliente en `Pendiente`; stock suficiente en la bodega (salvo `Cotizacion`); el total de la venta hasta ' +
          `${MAX_SALE_AMOUNT}.`,
      ].join('\n'),
    });
}

/** Body of `POST /sales` as the gateway validates it (problems answer 422 with details per field). */
export const SaleCreateBody = withSaleRules(SaleFields);
export type SaleCreateBody = z.output<typeof SaleCreateBody>;

/**
 * What `sales.create` accepts: the body of `POST /sales`, plus what other callers of the same
 * pipeline need (webhook orders may sell without stock; every sale records its origin).
 */
export const SaleCreateRequest = withSaleRules(
  SaleFields.extend({
    permitir_sin_stock: z.boolean().optional(),
    origen: z.enum(ORIGENES_VENTA).default('api'),
  }),
);
export type SaleCreateRequest = z.output<typeof SaleCreateRequest>;

/** One line of `detalles` in `PUT /sales/{id}`: a line with the `id` of a line of the sale may omit its product (it keeps it). */
export const SaleUpdateLineInput = SaleLineFields.refine(
  (l) => l.id !== undefined || l.id_producto !== undefined || l.codigo_producto !== undefined,
  {
    message: 'Debe indicar id_producto o codigo_producto (o el id de una línea de la venta)',
    path: ['id_producto'],
    when: isObject,
  },
).meta({
  ...oneOfFields('id', 'id_producto', 'codigo_producto'),
  description: 'Con `id` (una línea de esta venta) modifica esa línea; sin él agrega una, con `id_producto` o `codigo_producto`.',
});

/** Text an update may clear: `null` or an empty string clears it, an omitted field keeps it. */
const ClearableText = (max: number) =>
  z
    .string({ error: 'Debe ser texto' })
    .trim()
    .max(max, `Debe tener como máximo ${max} caracteres`)
    .nullable()
    .optional()
    .transform((v) => (v === '' ? null : v));

/**
 * Body of `PUT /sales/{id}` (spec "PUT /sales/{id}"): every field optional, an omitted field
 * keeps its value, `null` clears the fields that may be empty. The rules that need the stored
 * sale (a channel for a sale, a customer for Pendiente, …) are checked by the sales service on
 * the sale as it would be after the change; the ones the body alone decides are checked here.
 */
export const SaleUpdateBody = z
  .strictObject(
    {
      fecha: RequiredDate.optional(),
      estado: z.enum(ESTADOS_VENTA_ACTUALIZACION, { error: `Debe ser uno de: ${ESTADOS_VENTA_ACTUALIZACION.join(', ')}` }).optional(),
      id_sucursal: Id.optional(),
      sucursal: NonEmptyText(255).optional(),
      id_bodega: Id.optional(),
      id_documento: Id.optional(),
      id_canal: Id.optional(),
      id_cliente: Id.nullable().optional(),
      cotizacion: z.boolean({ error: 'Debe ser true o false' }).optional(),
      fecha_expiracion: RequiredDate.nullable().optional(),
      forma_pago: ClearableText(100),
      observaciones: ClearableText(1000),
      monto_pago: Amount({ min: 0, max: 9_999_999_999_999, scale: 2 }).nullable().optional(),
      cambio: Amount({ min: 0, max: 9_999_999_999_999, scale: 2 }).nullable().optional(),
      detalles: z
        .array(SaleUpdateLineInput, { error: 'Debe ser una lista de líneas' })
        .min(1, 'Debe incluir al menos 1 línea')
        .max(MAX_LINES_PER_SALE, `Debe incluir como máximo ${MAX_LINES_PER_SALE} líneas`)
        .optional(),
    },
    { error: 'El cuerpo debe ser un objeto JSON' },
  )
  .refine((v) => v.cotizacion !== true || v.estado === undefined || v.estado === 'Cotizacion' || v.estado === 'Pre-venta', {
    message: 'Solo puede ser true cuando el estado es Cotizacion o Pre-venta',
    path: ['cotizacion'],
    when: isObject,
  })
  .refine((v) => v.estado !== 'Pendiente' || v.id_cliente !== null, {
    message: 'Es obligatorio cuando el estado es Pendiente',
    path: ['id_cliente'],
    when: isObject,
  })
  .refine((v) => !v.fecha_expiracion || typeof v.fecha !== 'string' || v.fecha_expiracion >= v.fecha, {
    message: 'No puede ser anterior a fecha',
    path: ['fecha_expiracion'],
    when: isObject,
  })
  .superRefine((v, ctx) => {
    const seen = new Set<number>();
    (Array.isArray(v.detalles) ? v.detalles : []).forEach((line, i) => {
      if (!line || typeof line.id !== 'number') return;
      if (seen.has(line.id))
        ctx.addIssue({ code: 'custom', message: `La línea ${line.id} aparece más de una vez`, path: ['detalles', i, 'id'] });
      seen.add(line.id);
    });
  })
  .meta({
    allOf: [
      {
        if: { required: ['cotizacion'], properties: { cotizacion: { const: true } } },
        then: { properties: { estado: { enum: ['Cotizacion', 'Pre-venta'] } } },
      },
      {
        if: { required: ['estado'], properties: { estado: { const: 'Pendiente' } } },
        then: { properties: { id_cliente: { type: 'integer' } } },
      },
    ],
    description: [
      'Reglas entre campos (422 con `details` cuando no se cumplen):',
      '- `cotizacion: true` solo con `estado` `Cotizacion` o `Pre-venta` (o sin `estado`); `estado` `Pendiente` no admite `id_cliente: null` (ambas también en el esquema).',
      '- `fecha_expiracion` no puede ser anterior a `fecha`; el `id` de una línea no puede repetirse en `detalles`.',
      '- Sobre la venta como quedaría después del cambio: `id_canal` salvo en cotizaciones, `id_cliente` en `Pendiente` (dentro de su límite de crédito), y las mismas reglas de datos guardados que al crearla.',
    ].join('\n'),
  });
export type SaleUpdateBody = z.output<typeof SaleUpdateBody>;

/** What `sales.update` accepts: the sale's id and the body of `PUT /sales/{id}`. */
export const SaleUpdateRequest = z.object({ id: Id, cambios: SaleUpdateBody });
export type SaleUpdateRequest = z.output<typeof SaleUpdateRequest>;

/** A sale line as returned (spec "Sale detail" plus DESIGN §4's extra fields). */
export const SaleLine = z.object({
  id: z.number().int(),
  id_producto: z.number().int(),
  codigo: z.string().nullable(),
  nombre_producto: z.string().nullable(),
  descripcion: z.string().nullable(),
  cantidad: DecimalNumber,
  precio: DecimalNumber,
  descuento: DecimalNumber,
  porcentaje_impuesto: DecimalNumber,
  sub_total: DecimalNumber,
  iva: DecimalNumber,
  exenta: DecimalNumber,
  total: DecimalNumber,
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** A sale as returned by every sales endpoint. */
export const Sale = z.object({
  id: z.number().int(),
  fecha: z.string(),
  correlativo: z.string().nullable(),
  referencia: z.string().nullable(),
  referencia_externa: z.string().nullable(),
  cotizacion: z.boolean(),
  estado: z.enum(ESTADOS_VENTA),
  forma_pago: z.string().nullable(),
  total: DecimalNumber,
  iva: DecimalNumber.nullable(),
  sub_total: DecimalNumber.nullable(),
  descuento: DecimalNumber.nullable(),
  exenta: DecimalNumber,
  monto_pago: DecimalNumber.nullable(),
  cambio: DecimalNumber,
  saldo: DecimalNumber.nullable(),
  nombre_cliente: z.string().nullable(),
  nombre_usuario: z.string().nullable(),
  nombre_vendedor: z.string().nullable(),
  id_sucursal: z.number().int(),
  id_bodega: z.number().int(),
  id_documento: z.number().int(),
  nombre_documento: z.string(),
  id_canal: z.number().int().nullable(),
  id_cliente: z.number().int().nullable(),
  fecha_expiracion: z.string().nullable(),
  observaciones: z.string().nullable(),
  documento_fiscal_emitido: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
  detalles: z.array(SaleLine),
});
export type Sale = z.output<typeof Sale>;
export type SaleInput = z.input<typeof Sale>;

/** Sales one `POST /sales/batch` may carry. */
export const MAX_SALES_PER_BATCH = 100;

/**
 * Body of `POST /sales/batch` as the gateway checks it before anything is written: a list of 1 to
 * 100 objects, each with its `referencia_externa` (a retried batch must find what it made). The
 * rest of each item is checked alone, as the body of `POST /sales`, and answered in its result.
 */
export const SaleBatchBody = z.strictObject(
  {
    ventas: z
      .array(
        z.looseObject(
          { referencia_externa: NonEmptyText(255).meta({ description: 'Obligatoria en cada venta de un lote.' }) },
          { error: 'Cada venta debe ser un objeto JSON' },
        ),
        { error: missingOr('Debe ser una lista de ventas') },
      )
      .min(1, 'Debe incluir al menos 1 venta')
      .max(MAX_SALES_PER_BATCH, `Debe incluir como máximo ${MAX_SALES_PER_BATCH} ventas`),
  },
  { error: 'El cuerpo debe ser un objeto JSON' },
);

/** The body of `POST /sales/batch` as the reference shows it: each item is a body of `POST /sales` with its reference. */
export const SaleBatchDocumentedBody = z.strictObject({
  ventas: z
    .array(withSaleRules(SaleFields.extend({ referencia_externa: NonEmptyText(255) })))
    .min(1)
    .max(MAX_SALES_PER_BATCH),
});

/**
 * One item's outcome in `POST /sales/batch`, in the order sent: `status` is what `POST /sales`
 * would have answered it, with its sale in `data` (201 created, 200 already made with that body)
 * or the fields of its error envelope.
 */
export const SaleBatchResult = ErrorEnvelope.omit({ success: true })
  .partial()
  .extend({
    indice: z.number().int().min(0).meta({ description: 'Posición de la venta en `ventas`, desde 0.' }),
    referencia_externa: z.string(),
    status: z.number().int().meta({ description: 'El estado HTTP que `POST /sales` habría respondido a esta venta sola.' }),
    data: Sale.optional(),
  });
export type SaleBatchResult = z.input<typeof SaleBatchResult>;

export const SaleBatchData = z.object({
  resultados: z.array(SaleBatchResult),
  creadas: z.number().int().meta({ description: 'Ventas creadas (status 201).' }),
  existentes: z.number().int().meta({ description: 'Ventas que ya existían con el mismo cuerpo (status 200).' }),
  rechazadas: z.number().int().meta({ description: 'Ventas rechazadas (status 4xx o 5xx).' }),
});

const dateOrder = (v: { fecha_inicio?: string | undefined; fecha_fin?: string | undefined }) =>
  !v.fecha_inicio || !v.fecha_fin || v.fecha_fin >= v.fecha_inicio;
const DATE_ORDER_ISSUE = { message: 'No puede ser anterior a fecha_inicio', path: ['fecha_fin'] };

const SalesFilterFields = {
  fecha_inicio: DateString.optional(),
  fecha_fin: DateRangeEnd.optional(),
  estado: z.enum(ESTADOS_VENTA, { message: `Debe ser uno de: ${ESTADOS_VENTA.join(', ')}` }).optional(),
};

/** Query string of `GET /sales` (problems answer 400 with details). */
export const SalesListQuery = PaginationQuery.extend({
  ...SalesFilterFields,
  ...DeltaSyncFields,
  order_by: z.enum(SALES_ORDER_BY, { message: `Debe ser uno de: ${SALES_ORDER_BY.join(', ')}` }).optional(),
  order_direction: z
    .enum(ORDER_DIRECTIONS, { message: 'Debe ser asc o desc' })
    .meta({ description: `En modo cursor solo \`asc\`; \`desc\` es 400: «${CURSOR_MODE_REFUSALS.order_direction}».` })
    .optional(),
})
  .refine(dateOrder, DATE_ORDER_ISSUE)
  .refine((q) => q.cursor === undefined || q.order_by === 'updated_at', {
    message: 'El cursor solo se usa con order_by=updated_at',
    path: ['cursor'],
  })
  .superRefine(refuseOutsideCursorMode);

/** Query string of `GET /sales/summary`. */
export const SalesSummaryQuery = z.strictObject(SalesFilterFields).refine(dateOrder, DATE_ORDER_ISSUE);

/** The filters of sale lists and summaries, typed; what `filters_applied` echoes. */
export const SalesFilters = z
  .object({
    fecha_inicio: DateString.optional(),
    fecha_fin: DateString.optional(),
    estado: z.enum(ESTADOS_VENTA).optional(),
  })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type SalesFilters = z.output<typeof SalesFilters>;

export const SalesListRequest = z
  .object({
    fecha_inicio: DateString.optional(),
    fecha_fin: DateString.optional(),
    estado: z.enum(ESTADOS_VENTA).optional(),
    page: z.number().int().min(1).default(1),
    per_page: z.number().int().min(1).max(200).default(100),
    order_by: z.enum(SALES_ORDER_BY).default('fecha'),
    order_direction: z.enum(ORDER_DIRECTIONS).default('desc'),
    updated_since: z.string().optional(),
    cursor: z.string().optional(),
  })
  .refine(dateOrder, DATE_ORDER_ISSUE);
export type SalesListRequest = z.output<typeof SalesListRequest>;

/** `filters_applied` of a sales list or summary: the filters sent, without paging or ordering. */
export function salesFiltersApplied(request: SalesFilters): Record<string, string> {
  const applied: Record<string, string> = {};
  if (request.fecha_inicio !== undefined) applied.fecha_inicio = request.fecha_inicio;
  if (request.fecha_fin !== undefined) applied.fecha_fin = request.fecha_fin;
  if (request.estado !== undefined) applied.estado = request.estado;
  return applied;
}

/**
 * `GET /sales/summary` (DESIGN §4 "Sales summary"): every state counts unless `estado` filters,
 * as the original does, so the totals include annulled sales and quotations; the per-state
 * breakdown beside them lets a partner take out what it does not want.
 */
export const SalesSummary = z
  .object({
    cantidad_ventas: z.number().int().meta({ description: 'Ventas contadas: las de todos los estados salvo que `estado` filtre.' }),
    total_ventas: DecimalNumber.meta({
      description:
        'Suma de `total` de las ventas contadas: sin el filtro `estado` incluye los cuatro estados (`Completada`, `Pendiente`, `Anulada` y `Cotizacion`); `ventas_por_estado` da el total de cada uno.',
    }),
    total_iva: DecimalNumber.meta({ description: 'Suma de `iva` de las mismas ventas que `total_ventas`.' }),
    total_descuentos: DecimalNumber.meta({ description: 'Suma de los descuentos de las líneas de las mismas ventas.' }),
    promedio_venta: DecimalNumber.meta({ description: '`total_ventas` / `cantidad_ventas`, al centavo (0 sin ventas).' }),
    ventas_por_estado: z.array(z.object({ estado: z.enum(ESTADOS_VENTA), cantidad: z.number().int(), total: DecimalNumber })).meta({
      description:
        'Cantidad y total de cada estado contado (todos los estados, con ceros los que no tienen ventas; solo el filtrado con `estado`): su suma es `cantidad_ventas` y `total_ventas`.',
    }),
  })
  .meta({
    description:
      'Resumen de las ventas de los filtros. Cuentan todos los estados, también `Anulada` y `Cotizacion`, salvo que `estado` filtre; `ventas_por_estado` desglosa cada uno para excluir los que no interesen.',
  });
export type SalesSummary = z.output<typeof SalesSummary>;

/** Path parameter `{id}` of `GET /sales/{id}`. */
export const SaleIdParam = z.object({ id: queryInt({ min: 1, max: MAX_ID }) });

const RefMap = z.record(z.string(), z.number().int());
const SeedDecimal = z.union([z.number(), z.string().regex(/^\d+(\.\d{1,2})?$/)]).transform(String);

const SeedDocumento = z.object({
  ref: z.string().min(1),
  nombre: z.string().trim().min(1).max(255),
  /** The branch, already resolved to its id by the loader. */
  id_sucursal: z.number().int().positive(),
  prefijo: z.string().max(50).default(''),
  /** Next number to issue. */
  correlativo: z.number().int().min(0).max(MAX_ID).default(1),
  activo: z.boolean().default(true),
  solo_cotizacion: z.boolean().default(false),
});
const SeedCanal = z.object({ ref: z.string().min(1), nombre: z.string().trim().min(1).max(255), activo: z.boolean().default(true) });
const SeedCliente = z.object({
  ref: z.string().min(1),
  nombre: z.string().trim().min(1).max(255),
  email: z.string().max(255).optional(),
  numero_documento: z.string().trim().max(50).optional(),
  limite_credito: SeedDecimal.default('0'),
  activo: z.boolean().default(true),
});

const VentaRef = z.object({ empresa_id: z.number().int().positive(), id_venta: z.number().int().positive().max(MAX_ID) });

/** A sale as the returns service reads it (`sales.sale.returnable`). Decimals are exact strings. */
export const ReturnableSale = z.object({
  id: z.number().int(),
  estado: z.enum(ESTADOS_VENTA),
  fecha: z.string(),
  correlativo: z.string(),
  id_bodega: z.number().int(),
  nombre_cliente: z.string().nullable(),
  detalles: z.array(
    z.object({
      id: z.number().int(),
      id_producto: z.number().int(),
      codigo: z.string().nullable(),
      nombre_producto: z.string().nullable(),
      descripcion: z.string().nullable(),
      /** False for services: they never move stock. */
      mueve_stock: z.boolean(),
      cantidad: z.string(),
      precio: z.string(),
      descuento: z.string(),
      porcentaje_impuesto: z.string(),
      sub_total: z.string(),
      iva: z.string(),
      exenta: z.string(),
      total: z.string(),
      costo: z.string(),
    }),
  ),
});
export type ReturnableSale = z.output<typeof ReturnableSale>;

/**
 * Subjects the sales service answers for other services. `sales.sale.exists` tells the owner of
 * a stock reservation's key whether the sale it was taken for was committed.
 */
export const salesSubjects = defineCatalog({
  'sales.sale.exists': {
    tenant: false,
    errors: [],
    request: z.object({ empresa_id: z.number().int().positive(), clave: z.string().min(1).max(200) }),
    reply: z.object({ exists: z.boolean() }),
  },
});

/** What the sales service answers the returns service. */
export const salesForReturnsSubjects = defineCatalog({
  /**
   * What the returns service needs of a sale of the company to return it: its state, warehouse,
   * names, and every line with its price, cost and tax as exact decimal strings.
   */
  'sales.sale.returnable': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id_venta: z.number().int().positive().max(MAX_ID) }),
    reply: ReturnableSale,
  },
  /**
   * A return about to commit registers with its sale, under the sale's row lock: from then on the
   * sale counts it as active, so an annulment or an update of its lines waits for it or is refused,
   * and the lines answered are the ones it may return. A sale that cannot be returned (annulled, a
   * quotation) is answered without registering. The same key again registers once.
   */
  'sales.sale.return.register': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id_venta: z.number().int().positive().max(MAX_ID), clave: z.string().min(1).max(200) }),
    reply: ReturnableSale,
  },
  /**
   * Squares the sale's registrations with the returns service: each one whose return committed is
   * confirmed, each one whose return never will is discarded (and no longer counts as active).
   * Called by a return that registered and then failed; annulments and updates do the same.
   */
  'sales.sale.return.square': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id_venta: z.number().int().positive().max(MAX_ID) }),
    reply: z.object({ devoluciones_activas: z.number().int() }),
  },
});

/** `GET /document-types`: an active document type of the company, with the branch whose sales may use it. */
export const DocumentType = z.object({
  id: z.number().int(),
  nombre: z.string(),
  prefijo: z.string().meta({ description: 'Lo que precede al número en el `correlativo` de las ventas (puede estar vacío).' }),
  id_sucursal: z.number().int(),
  solo_cotizacion: z.boolean().meta({ description: 'Solo para cotizaciones (`estado` `Cotizacion`).' }),
});
export type DocumentType = z.output<typeof DocumentType>;

/** `GET /channels`: an active sales channel of the company. */
export const Channel = z.object({ id: z.number().int(), nombre: z.string() });
export type Channel = z.output<typeof Channel>;

/** `GET /customers`: an active customer of the company. */
export const Customer = z.object({
  id: z.number().int(),
  nombre: z.string(),
  email: z.string().nullable(),
  numero_documento: z.string().nullable().meta({ description: 'Documento de identidad o número fiscal del cliente.' }),
  limite_credito: DecimalNumber.meta({ description: 'Crédito máximo de sus ventas `Pendiente`; 0 es sin límite.' }),
});
export type Customer = z.output<typeof Customer>;

const LookupText = z
  .string()
  .trim()
  .max(100, 'Debe tener como máximo 100 caracteres')
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** Query string of `GET /customers`. */
export const CustomersListQuery = PaginationQuery.extend({
  email: z
    .string()
    .trim()
    .max(255, 'Debe tener como máximo 255 caracteres')
    .optional()
    .transform((v) => (v ? v.toLowerCase() : undefined))
    .meta({ description: 'El email exacto, sin distinguir mayúsculas.' }),
  q: LookupText.meta({ description: 'Parte del nombre o del número de documento, sin distinguir mayúsculas.' }),
});
export const CustomersListRequest = PageRequest.extend({ email: z.string().optional(), q: z.string().optional() });
export type CustomersListRequest = z.infer<typeof CustomersListRequest>;

/** Subjects of the partner API's sales endpoints (and of the other callers of the invoicing pipeline). */
export const salesApiSubjects = defineCatalog({
  /**
   * The invoicing pipeline: validation, branch, products, warehouse, document type, channel,
   * customer and acting user; tax; the stock reserved in inventory (released if the sale fails;
   * inside the transaction, after the reference's lock, when the sale has a reference); then one
   * transaction that checks the credit, takes the correlative and writes the sale, its lines and
   * the created event. A reference already used by the company answers its sale with
   * `idempotent: true` when the request is the one that made it (same fingerprint, or a sale kept
   * before fingerprints were), and CONFLICT naming the sale when a partner's body differs.
   */
  'sales.create': {
    tenant: true,
    errors: ['VALIDATION_FAILED', 'BUSINESS_RULE', 'CONFLICT'],
    request: SaleCreateRequest,
    reply: z.object({ venta: Sale, idempotent: z.boolean() }),
  },
  /**
   * `PUT /sales/{id}`: edits a Pendiente sale or a quotation without an emitted fiscal document,
   * under the sale's row lock. The plan, tax and sale document are computed as on creation (the
   * correlative stays); stock moves by the difference between what the sale held and what it
   * will hold, in one inventory adjustment keyed by the sale and its stock revision.
   */
  /**
   * The sales of `POST /sales/batch`, in order, each through `sales.create`'s pipeline as if sent
   * alone. Items are started only while the batch has run less than `plazo_ms`, so the reply comes
   * well within the caller's request timeout: the results answer a prefix of `ventas`, and the
   * caller sends the rest again.
   */
  'sales.batch.create': {
    tenant: true,
    errors: [],
    request: z.object({
      ventas: z
        .array(z.object({ indice: z.number().int().min(0), venta: SaleCreateRequest }))
        .min(1)
        .max(MAX_SALES_PER_BATCH),
      plazo_ms: z.number().int().min(0).max(60_000).default(5_000),
    }),
    reply: z.object({
      resultados: z.array(
        z.object({ indice: z.number().int(), venta: Sale.optional(), idempotent: z.boolean().optional(), error: ItemError.optional() }),
      ),
    }),
  },
  'sales.update': {
    tenant: true,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'BUSINESS_RULE'],
    request: SaleUpdateRequest,
    reply: Sale,
  },
  'sales.sale.get': {
    tenant: true,
    json: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Sale,
  },
  /**
   * A page of sales. Outside cursor mode it carries `version`, the validator of what the page was
   * built from (the rows' change stamps and the total), as `sales.sale.version` reads it.
   */
  'sales.sale.list': {
    tenant: true,
    json: true,
    errors: [],
    request: SalesListRequest,
    reply: pageReply(Sale, ListPagination).extend({ version: z.string().optional() }),
  },
  /**
   * The `version` the same page of `sales.sale.list` would carry, without building the page: a
   * conditional GET that still holds it is answered 304 for the cost of an index read. Not in
   * cursor mode (`version` absent).
   */
  'sales.sale.version': {
    tenant: true,
    errors: [],
    request: SalesListRequest,
    reply: z.object({ version: z.string().optional() }),
  },
  'sales.summary': {
    tenant: true,
    errors: [],
    request: SalesFilters,
    reply: SalesSummary,
  },
  /** The company's active document types, by branch, name and id. */
  'sales.documento.list': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: z.array(DocumentType),
  },
  /** The company's active sales channels, by name and id. */
  'sales.canal.list': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: z.array(Channel),
  },
  /** The company's active customers, by name and id, filtered by email (exact) and `q` (name or document number). */
  'sales.cliente.list': {
    tenant: true,
    errors: [],
    request: CustomersListRequest,
    reply: pageReply(Customer),
  },
});

/** Back-office subjects of the sales service (admin CLI and fixture loader). Never exposed over HTTP. */
export const salesAdminSubjects = defineCatalog({
  'sales.admin.seed': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({
      empresa_id: z.number().int().positive(),
      documentos: z.array(SeedDocumento).default([]),
      canales: z.array(SeedCanal).default([]),
      clientes: z.array(SeedCliente).default([]),
    }),
    reply: z.object({ documentos: RefMap, canales: RefMap, clientes: RefMap }),
  },
  /** Annuls a sale: state `Anulada`, its stock returned once (a repeated call moves nothing). */
  'sales.admin.annul': {
    tenant: false,
    errors: ['NOT_FOUND', 'BUSINESS_RULE'],
    request: VentaRef,
    reply: Sale,
  },
  /** Marks the sale's fiscal document emitted: from then on the sale cannot be edited. */
  'sales.admin.fiscal-emitted': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: VentaRef,
    reply: Sale,
  },
});

/** The sale as `GET /sales/{id}` answered it when the event was recorded (what partner events carry). */
const SaleSnapshot = z.record(z.string(), z.unknown());

const SaleChange = z.object({
  empresa_id: z.number().int().positive(),
  id_venta: z.number().int().positive(),
  venta: SaleSnapshot,
});

export const salesEvents = defineEvents({
  /** A sale was committed. `clave_reserva` is the key its stock was reserved under (null when it took none). */
  'events.sales.sale.created': {
    payload: z.object({
      empresa_id: z.number().int().positive(),
      id_venta: z.number().int().positive(),
      clave_reserva: z.string().min(1).max(200).nullable(),
      venta: SaleSnapshot.optional(),
    }),
  },
  /** A sale was changed by `PUT /sales/{id}` (committed). */
  'events.sales.sale.updated': { payload: SaleChange },
  /** A sale was annulled (committed; its stock is back). */
  'events.sales.sale.annulled': { payload: SaleChange },
});

/**
 * What e-commerce integrations need of sales besides `sales.create`, scoped to the caller's
 * company like every partner operation (the back-office catalog is for the admin CLI only).
 */
export const salesPlatformSubjects = defineCatalog({
  /** The company's customer with this email (case-insensitive), created with this name when missing. */
  'sales.customer.find-or-create': {
    tenant: true,
    errors: [],
    request: z.object({
      email: z.string().trim().toLowerCase().max(255).pipe(z.email()),
      nombre: z.string().trim().min(1).max(255).nullable(),
    }),
    reply: z.object({ id: z.number().int(), creado: z.boolean() }),
  },
  /** The company's sale with this external reference, if any. */
  'sales.sale.by-reference': {
    tenant: true,
    errors: [],
    request: z.object({ referencia_externa: z.string().min(1).max(255) }),
    reply: z.object({ id: z.number().int(), estado: z.enum(ESTADOS_VENTA) }).nullable(),
  },
  /** Annuls a sale of the company: state Anulada, its stock returned once (repeating moves nothing). */
  'sales.sale.annul': {
    tenant: true,
    errors: ['NOT_FOUND', 'BUSINESS_RULE'],
    request: z.object({ id_venta: z.number().int().positive().max(MAX_ID) }),
    reply: Sale,
  },
});
