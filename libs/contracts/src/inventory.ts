import { z } from 'zod';
import { defineCatalog } from './catalog';
import { DecimalNumber, PaginationQuery, QueryBoolean, Timestamp, pageReply } from './http';

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
  updated_at: Timestamp,
  inventarios: z.array(StockEntry),
});
export type Product = z.output<typeof Product>;

/** Orderings of `GET /inventory`; `id` in the same direction always breaks ties. */
export const INVENTORY_ORDER_BY = ['nombre', 'codigo', 'precio', 'costo', 'created_at'] as const;
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
  codigo: FilterText,
  nombre: FilterText,
  categoria: FilterText,
  marca: FilterText,
  tipo: z.enum(TIPOS_PRODUCTO, { message: 'Debe ser Producto o Servicio' }).optional(),
  enable: z
    .enum(['0', '1'], { message: 'Debe ser 1 o 0' })
    .transform((v) => (v === '1' ? 1 : 0) as 0 | 1)
    .optional(),
  con_stock: QueryBoolean.optional(),
  stock_minimo: QueryBoolean.optional(),
  order_by: z.enum(INVENTORY_ORDER_BY, { message: `Debe ser uno de: ${INVENTORY_ORDER_BY.join(', ')}` }).optional(),
  order_direction: z
    .string()
    .toLowerCase()
    .pipe(z.enum(ORDER_DIRECTIONS, { message: 'Debe ser asc o desc' }))
    .optional(),
});

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

export const inventorySubjects = defineCatalog({
  'inventory.product.get': {
    tenant: true,
    errors: ['NOT_FOUND'],
    request: z.object({ id: z.number().int().positive() }),
    reply: Product,
  },
  /** Resolves a branch of the company by id or by name (trimmed, case-insensitive, active, unambiguous). */
  'inventory.sucursal.resolve': {
    tenant: true,
    errors: [],
    request: z.object({
      items: z
        .array(
          z.union([
            z.object({ id_sucursal: z.number().int().positive() }),
            z.object({ sucursal: z.string().min(1) }),
          ]),
        )
        .max(1000),
    }),
    /** One answer per item, in order: the branch id, or why it could not be resolved. */
    reply: z.array(
      z.union([
        z.object({ ok: z.literal(true), id_sucursal: z.number().int(), nombre: z.string() }),
        z.object({ ok: z.literal(false), message: z.string() }),
      ]),
    ),
  },
  'inventory.product.list': {
    tenant: true,
    errors: [],
    request: InventoryListRequest,
    reply: pageReply(Product),
  },
  'inventory.summary': {
    tenant: true,
    errors: [],
    request: z.object({}),
    reply: InventorySummary,
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
