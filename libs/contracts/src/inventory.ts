import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';
import { ItemError } from './errors';
import { ClearableText, DecimalText, Id, NonNegativeDecimal, NonZeroQuantity, PositiveQuantity } from './fields';
import {
  DecimalNumber,
  DeltaSyncFields,
  ListPagination,
  PaginationQuery,
  QueryBoolean,
  Timestamp,
  documentAs,
  pageReply,
  refuseOutsideCursorMode,
  CURSOR_MODE_REFUSALS,
} from './http';
import { PLATAFORMAS } from './webhooks';

export const TIPOS_PRODUCTO = ['Producto', 'Servicio'] as const;
export type TipoProducto = (typeof TIPOS_PRODUCTO)[number];

export const StockEntry = z.object({
  id_producto: z.number().int(),
  id_bodega: z.number().int(),
  id_sucursal: z.number().int(),
  stock: DecimalNumber,
  stock_minimo: DecimalNumber,
  stock_maximo: DecimalNumber,
  nota: z.string().nullable(),
  nombre_bodega: z.string(),
  nombre_sucursal: z.string(),
  created_at: Timestamp.optional(),
  updated_at: Timestamp.optional(),
});

export const Product = z.object({
  id: z.number().int(),
  nombre: z.string(),
  descripcion: z.string().nullable(),
  codigo: z.string(),
  barcode: z.string().nullable(),
  nombre_categoria: z.string().nullable(),
  precio: DecimalNumber,
  costo: DecimalNumber,
  costo_anterior: DecimalNumber,
  costo_promedio: DecimalNumber,
  marca: z.string().nullable(),
  tipo: z.enum(TIPOS_PRODUCTO),
  enable: z.union([z.literal(0), z.literal(1)]),
  img: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp.meta({
    description:
      'Cuándo cambió por última vez el producto o cualquiera de sus existencias: el momento que `updated_since` filtra y `order_by=updated_at` ordena.',
  }),
  inventarios: z.array(StockEntry),
});
export type Product = z.output<typeof Product>;

/** `GET /branches`: an active branch of the company with its active warehouses (the ids `POST /sales` takes). */
export const Branch = z.object({
  id: z.number().int(),
  nombre: z.string(),
  bodegas: z.array(z.object({ id: z.number().int(), nombre: z.string() })),
});
export type Branch = z.output<typeof Branch>;

/** Orderings of `GET /inventory`; `id` in the same direction always breaks ties. */
export const INVENTORY_ORDER_BY = ['nombre', 'codigo', 'precio', 'costo', 'created_at', 'updated_at'] as const;
export const ORDER_DIRECTIONS = ['asc', 'desc'] as const;

/** A partial-match text filter: trimmed; blank means "not sent". */
const FilterText = z
  .string()
  .trim()
  .max(100, 'Debe tener como máximo 100 caracteres')
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/** Query string of `GET /inventory`, as the gateway validates it (problems answer 400 with details). */
export const InventoryListQuery = PaginationQuery.extend({
  ...DeltaSyncFields,
  codigo: FilterText,
  nombre: FilterText,
  categoria: FilterText,
  marca: FilterText,
  tipo: z.enum(TIPOS_PRODUCTO, { message: 'Debe ser Producto o Servicio' }).optional(),
  enable: documentAs(
    z.enum(['0', '1'], { message: 'Debe ser 1 o 0' }).transform((v) => (v === '1' ? 1 : 0) as 0 | 1),
    { type: 'integer', enum: [0, 1], description: '`1` productos activos, `0` inactivos.' },
  ).optional(),
  con_stock: QueryBoolean.optional(),
  stock_minimo: QueryBoolean.optional(),
  order_by: z.enum(INVENTORY_ORDER_BY, { message: `Debe ser uno de: ${INVENTORY_ORDER_BY.join(', ')}` }).optional(),
  order_direction: z
    .enum(ORDER_DIRECTIONS, { message: 'Debe ser asc o desc' })
    .meta({ description: `En modo cursor solo \`asc\`; \`desc\` es 400: «${CURSOR_MODE_REFUSALS.order_direction}».` })
    .optional(),
})
  .refine((q) => q.cursor === undefined || q.order_by === 'updated_at', {
    message: 'El cursor solo se usa con order_by=updated_at',
    path: ['cursor'],
  })
  .superRefine(refuseOutsideCursorMode);

/** The filters of the product list, already typed; what `filters_applied` echoes. */
export const InventoryFilters = z.object({
  codigo: z.string().min(1).max(100).optional(),
  nombre: z.string().min(1).max(100).optional(),
  categoria: z.string().min(1).max(100).optional(),
  marca: z.string().min(1).max(100).optional(),
  tipo: z.enum(TIPOS_PRODUCTO).optional(),
  enable: z.union([z.literal(0), z.literal(1)]).optional(),
  /** true: stock above zero in at least one active warehouse. */
  con_stock: z.boolean().optional(),
  /** true: stock at or below its minimum in at least one active warehouse. */
  stock_minimo: z.boolean().optional(),
});
export type InventoryFilters = z.output<typeof InventoryFilters>;

export const InventoryListRequest = InventoryFilters.extend({
  page: z.number().int().min(1).default(1),
  per_page: z.number().int().min(1).max(200).default(100),
  order_by: z.enum(INVENTORY_ORDER_BY).default('nombre'),
  order_direction: z.enum(ORDER_DIRECTIONS).default('asc'),
  updated_since: z.string().optional(),
  cursor: z.string().optional(),
});
export type InventoryListRequest = z.output<typeof InventoryListRequest>;

export const InventorySummary = z.object({
  productos: z.object({ total: z.number().int(), activos: z.number().int(), inactivos: z.number().int() }),
  inventario: z.object({
    stock_total: DecimalNumber,
    valor_total: DecimalNumber,
    productos_con_stock: z.number().int(),
    productos_sin_stock: z.number().int(),
    productos_stock_bajo: z.number().int(),
  }),
  productos_por_categoria: z.array(z.object({ categoria: z.string(), cantidad: z.number().int() })),
});
export type InventorySummary = z.output<typeof InventorySummary>;

/** Name under which products without a category are counted. */
export const SIN_CATEGORIA = 'Sin categoría';

/** Idempotency key of a stock operation: the same key never moves stock twice. */
const OperationKey = z.string().trim().min(1).max(200);

/**
 * What a stock operation was made for, as partners see it in `stock.changed`: the sale (also one
 * made from a platform order, which names that order too), the return, or the platform whose stock
 * update it applies. Recorded with the operation's key, so releasing or reverting it later names
 * the same cause.
 */
export const CausaStock = z.strictObject({
  id_venta: Id.optional(),
  id_devolucion: Id.optional(),
  plataforma: z.enum(PLATAFORMAS).optional(),
  /** The platform's own id of the order (`727`), when a sale was made from one. */
  id_pedido_plataforma: z.string().min(1).max(255).optional(),
});
export type CausaStock = z.output<typeof CausaStock>;

/** Who owns a reservation's key, and so who is asked whether the operation exists. */
export const ORIGENES_RESERVA = ['venta'] as const;
export const ESTADOS_RESERVA = ['reservada', 'confirmada', 'liberada'] as const;
export type EstadoReserva = (typeof ESTADOS_RESERVA)[number];

/** What a sale needs of a product. Decimals are exact strings. */
export const ResolvedProduct = z.object({
  id: z.number().int(),
  codigo: z.string(),
  barcode: z.string().nullable(),
  nombre: z.string(),
  descripcion: z.string().nullable(),
  marca: z.string().nullable(),
  tipo: z.enum(TIPOS_PRODUCTO),
  enable: z.union([z.literal(0), z.literal(1)]),
  precio: z.string(),
  costo: z.string(),
  costo_promedio: z.string(),
  porcentaje_impuesto: z.string().nullable(),
  /** Stock in the warehouse asked for; null when none was asked or the product has no entry there. */
  stock: z.string().nullable(),
});
export type ResolvedProduct = z.output<typeof ResolvedProduct>;

const Failure = z.object({ ok: z.literal(false), message: z.string() });

export const ResolvedBodega = z.object({
  ok: z.literal(true),
  id_bodega: z.number().int(),
  nombre: z.string(),
  id_sucursal: z.number().int(),
  nombre_sucursal: z.string(),
});

export const Reservation = z.object({
  clave: z.string(),
  estado: z.enum(ESTADOS_RESERVA),
  origen: z.enum(ORIGENES_RESERVA),
  /** Null only for a release that arrived before its reservation (kept so a late reserve moves nothing). */
  id_bodega: z.number().int().nullable(),
  lineas: z.array(z.object({ id_producto: z.number().int(), cantidad: z.string(), mueve_stock: z.boolean() })),
  /** Whether this call changed the reservation; a redelivered call answers false. */
  aplicado: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Reservation = z.output<typeof Reservation>;

/** Takes stock for a set of lines under a key (see `inventory.stock.reserve`). */
const ReserveRequest = z.object({
  clave: OperationKey,
  origen: z.enum(ORIGENES_RESERVA).default('venta'),
  causa: CausaStock.default({}),
  id_bodega: Id,
  permitir_sin_stock: z.boolean().optional(),
  lineas: z
    .array(z.object({ id_producto: Id, cantidad: PositiveQuantity }))
    .min(1)
    .max(500),
});

/** Reservations per `inventory.stock.reserve-many` request: the sales of one batch request. */
export const MAX_RESERVATIONS_PER_REQUEST = 100;

const StockMovement = z.object({
  id_producto: z.number().int(),
  id_bodega: z.number().int(),
  cantidad: z.string(),
  stock_resultante: z.string(),
});

export const AdjustLine = z
  .object({
    id_producto: Id,
    id_bodega: Id,
    /** Relative change, signed. */
    cantidad: NonZeroQuantity.optional(),
    /** Absolute stock to set. */
    stock: DecimalText.optional(),
  })
  .refine((l) => (l.cantidad === undefined) !== (l.stock === undefined), {
    message: 'Indique cantidad (relativa) o stock (absoluto), uno de los dos',
  });

/** Product fields the back office and platform updates may set. Decimals are exact strings. */
const ProductFields = z.object({
  nombre: z.string().trim().min(1).max(255),
  descripcion: ClearableText(2000),
  barcode: ClearableText(255),
  /** Category by name: created for the company when it does not exist. */
  categoria: ClearableText(255),
  marca: ClearableText(255),
  precio: NonNegativeDecimal,
  costo: NonNegativeDecimal.optional(),
  costo_anterior: NonNegativeDecimal.optional(),
  costo_promedio: NonNegativeDecimal.optional(),
  porcentaje_impuesto: DecimalText.refine((v) => Number(v) >= 0 && Number(v) <= 100, 'Debe estar entre 0 y 100')
    .nullable()
    .optional(),
  img: ClearableText(2000),
  enable: z.union([z.literal(0), z.literal(1)]).optional(),
});

const SeedBodega = z.object({ ref: z.string().min(1), nombre: z.string().min(1), activo: z.boolean().default(true) });
const SeedSucursal = z.object({
  ref: z.string().min(1),
  nombre: z.string().min(1),
  activo: z.boolean().default(true),
  bodegas: z.array(SeedBodega).default([]),
});
const Decimal = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)]).transform(String);
const SeedProducto = z.object({
  ref: z.string().min(1),
  nombre: z.string().min(1),
  descripcion: z.string().optional(),
  codigo: z.string().min(1),
  barcode: z.string().optional(),
  categoria: z.string().optional(),
  marca: z.string().optional(),
  tipo: z.enum(TIPOS_PRODUCTO).default('Producto'),
  precio: Decimal,
  costo: Decimal.default('0'),
  costo_anterior: Decimal.default('0'),
  costo_promedio: Decimal.default('0'),
  enable: z.union([z.literal(0), z.literal(1)]).default(1),
  porcentaje_impuesto: Decimal.optional(),
  img: z.string().optional(),
  inventarios: z
    .array(
      z.object({
        bodega: z.string().min(1),
        stock: Decimal,
        stock_minimo: Decimal.default('0'),
        stock_maximo: Decimal.default('0'),
        nota: z.string().optional(),
      }),
    )
    .default([]),
});

const RefMap = z.record(z.string(), z.number().int());

const BranchQuery = z.union([z.object({ id_sucursal: z.number().int().positive() }), z.object({ sucursal: z.string().min(1) })]);
const BranchResolution = z.union([
  z.object({ ok: z.literal(true), id_sucursal: z.number().int(), nombre: z.string() }),
  z.object({ ok: z.literal(false), message: z.string() }),
]);

export const inventorySubjects = defineCatalog({
  'inventory.product.get': {
    tenant: true,
    json: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Product,
  },
  /** Resolves a branch of the company by id or by name (trimmed, case-insensitive, active, unambiguous). */
  'inventory.sucursal.resolve': {
    tenant: true,
    errors: [],
    request: z.object({ items: z.array(BranchQuery).max(1000) }),
    /** One answer per item, in order: the branch id, or why it could not be resolved. */
    reply: z.array(BranchResolution),
  },
  /** The company's active branches with their active warehouses, by name then id. */
  'inventory.sucursal.list': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: z.array(Branch),
  },
  'inventory.product.list': {
    tenant: true,
    json: true,
    errors: [],
    request: InventoryListRequest,
    reply: pageReply(Product, ListPagination),
  },
  'inventory.summary': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: InventorySummary,
  },
  /**
   * Resolves products of the company (by id, or by `codigo` then `barcode`) and checks a warehouse
   * (of the company, active, of an active branch, of `id_sucursal` when given). One answer per item.
   * With `sucursal`, also resolves that branch as `inventory.sucursal.resolve` does, so a sale
   * learns everything it needs from inventory in one request.
   */
  'inventory.product.resolve': {
    tenant: true,
    errors: [],
    request: z.object({
      id_bodega: Id.optional(),
      id_sucursal: Id.optional(),
      sucursal: BranchQuery.optional(),
      items: z.array(z.union([z.object({ id_producto: Id }), z.object({ codigo: z.string().trim().min(1).max(255) })])).max(500),
    }),
    reply: z.object({
      bodega: z.union([ResolvedBodega, Failure]).nullable(),
      sucursal: BranchResolution.optional(),
      items: z.array(z.union([z.object({ ok: z.literal(true), producto: ResolvedProduct }), Failure])),
    }),
  },
  /**
   * Takes stock for a set of lines under a key, all or nothing. When selling without stock is
   * forbidden (the company's setting, unless `permitir_sin_stock` overrides it) lines short of
   * stock are refused with BUSINESS_RULE and details per line (`lineas.N.cantidad`). Services
   * never move stock. Redelivery answers the recorded reservation and moves nothing.
   */
  'inventory.stock.reserve': {
    tenant: true,
    errors: ['VALIDATION_FAILED', 'BUSINESS_RULE', 'CONFLICT'],
    request: ReserveRequest,
    reply: Reservation,
  },
  /**
   * Many reservations in one transaction, decided in the order sent as if each were sent alone to
   * `inventory.stock.reserve` one after another: each all or nothing under its own key, each
   * seeing the stock the ones before it left. One refused is its result (the error
   * `inventory.stock.reserve` would have given) and stops nothing else.
   */
  'inventory.stock.reserve-many': {
    tenant: true,
    errors: ['CONFLICT'],
    request: z.object({ reservas: z.array(ReserveRequest).min(1).max(MAX_RESERVATIONS_PER_REQUEST) }),
    /** One result per reservation, in order: the reservation, or why it was refused. */
    reply: z.object({ resultados: z.array(z.object({ clave: z.string(), reserva: Reservation.optional(), error: ItemError.optional() })) }),
  },
  /** Makes a reservation final. A reservation released earlier takes its stock again. */
  'inventory.stock.confirm': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ clave: OperationKey }),
    reply: Reservation,
  },
  /** Gives a reservation's stock back once. Releasing an unknown key records it, so a late reserve moves nothing. */
  'inventory.stock.release': {
    tenant: true,
    errors: ['CONFLICT'],
    request: z.object({ clave: OperationKey }),
    reply: Reservation,
  },
  /**
   * Applies relative (`cantidad`) or absolute (`stock`) changes under a key, all or nothing:
   * returns, edits of sales by difference, platform stock updates, the back office. A key
   * already applied answers its recorded movements and moves nothing. With no lines it only
   * records its key: how a sale's final change learns whether a crashed change moved stock
   * under the revision it is about to claim.
   */
  'inventory.stock.adjust': {
    tenant: true,
    errors: ['VALIDATION_FAILED', 'BUSINESS_RULE'],
    request: z.object({
      clave: OperationKey,
      origen: z.string().regex(/^[a-z_]{1,40}$/, 'Debe ser un identificador en minúsculas'),
      causa: CausaStock.default({}),
      concepto: z.string().trim().max(200).optional(),
      permitir_sin_stock: z.boolean().optional(),
      lineas: z.array(AdjustLine).max(500),
    }),
    reply: z.object({ clave: z.string(), aplicado: z.boolean(), movimientos: z.array(StockMovement) }),
  },
  /**
   * Undoes an adjustment whose caller never recorded it (a sale's stock revision whose transaction
   * died after inventory applied it): its movements are reversed, and the key is spent, so an
   * adjustment sent under it later answers that nothing moved. A key never seen is spent as well,
   * in case its adjustment is still on its way. Idempotent.
   */
  'inventory.stock.revert': {
    tenant: true,
    errors: [],
    request: z.object({ clave: OperationKey }),
    reply: z.object({
      clave: z.string(),
      /** Whether the key was known before (false: it was spent now, unused). */
      existia: z.boolean(),
      /** Whether this call reversed it (false: already reverted, or never used). */
      revertido: z.boolean(),
      movimientos: z.array(StockMovement),
    }),
  },
  /**
   * Creates a product of the company (no stock: that enters through `inventory.stock.adjust`).
   * A live product with the same `codigo` is answered instead, with `creado: false`, so a retried
   * creation never makes two.
   */
  'inventory.product.create': {
    tenant: true,
    errors: ['VALIDATION_FAILED'],
    request: ProductFields.extend({ codigo: z.string().trim().min(1).max(255), tipo: z.enum(TIPOS_PRODUCTO).default('Producto') }),
    reply: z.object({ id: z.number().int(), creado: z.boolean() }),
  },
  /** Changes some fields of a product of the company (`enable` 0/1 disables and enables it). */
  'inventory.product.update': {
    tenant: true,
    errors: ['NOT_FOUND', 'CONFLICT', 'VALIDATION_FAILED'],
    request: z.object({
      id: Id,
      cambios: ProductFields.partial()
        .extend({ codigo: z.string().trim().min(1).max(255).optional() })
        .refine((c) => Object.values(c).some((v) => v !== undefined), 'Indique al menos un cambio'),
    }),
    reply: Product,
  },
  /** Back office: a branch of a company. */
  'inventory.admin.sucursal.create': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({ empresa_id: Id, nombre: z.string().trim().min(1).max(255), activo: z.boolean().default(true) }),
    reply: z.object({ id: z.number().int() }),
  },
  /** Back office: a warehouse in a branch of the same company. */
  'inventory.admin.bodega.create': {
    tenant: false,
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
    request: z.object({ empresa_id: Id, id_sucursal: Id, nombre: z.string().trim().min(1).max(255), activo: z.boolean().default(true) }),
    reply: z.object({ id: z.number().int() }),
  },
  /** Back office: an inactive branch hides its warehouses' stock from reads and refuses reservations. */
  'inventory.admin.sucursal.set-active': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ empresa_id: Id, id: Id, activo: z.boolean() }),
    reply: z.object({ id: z.number().int(), activo: z.boolean() }),
  },
  'inventory.admin.bodega.set-active': {
    tenant: false,
    errors: ['NOT_FOUND'],
    request: z.object({ empresa_id: Id, id: Id, activo: z.boolean() }),
    reply: z.object({ id: z.number().int(), activo: z.boolean() }),
  },
  'inventory.admin.seed': {
    tenant: false,
    errors: ['VALIDATION_FAILED'],
    request: z.object({
      empresa_id: z.number().int().positive(),
      sucursales: z.array(SeedSucursal).default([]),
      productos: z.array(SeedProducto).default([]),
    }),
    reply: z.object({ sucursales: RefMap, bodegas: RefMap, productos: RefMap }),
  },
});

export const inventoryEvents = defineEvents({
  /** Stock of products in warehouses changed, in one committed ledger write: one entry per product and warehouse. */
  'events.inventory.stock.changed': {
    payload: z.object({
      empresa_id: z.number().int().positive(),
      /** What the operation was made for; absent in events written before the cause was recorded. */
      causa: CausaStock.optional(),
      movimientos: z.array(
        z.object({
          id_producto: z.number().int(),
          codigo: z.string(),
          id_bodega: z.number().int(),
          /** Stock after the change and the change itself, exact decimal strings. */
          stock: z.string(),
          cambio: z.string(),
          /** The ledger's kind of movement: reserva, liberacion, ajuste. */
          motivo: z.string(),
          /** What moved it (e.g. `venta`, `devolucion`) and its key. */
          origen: z.string(),
          referencia: z.string().nullable(),
        }),
      ),
    }),
  },
});
