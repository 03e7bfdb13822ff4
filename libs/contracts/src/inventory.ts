import { z } from 'zod';
import { defineCatalog } from './catalog';
import { DecimalNumber, Timestamp } from './http';

export const TIPOS_PRODUCTO = ['Producto', 'Servicio'] as const;

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
