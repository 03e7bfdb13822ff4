import type { ColumnType, Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { CausaStock, EstadoReserva } from '@erp/contracts';

/** The Postgres schema the inventory service owns. */
export const INVENTORY_SCHEMA = 'inventory';

/** Numeric columns are read as exact decimal strings; they are written as strings too. */
type Decimal = string;

export interface SucursalesTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Set by a change of `activo` until its stock entries are all counted as it says (migration 0006). */
  conteo_pendiente: Generated<number | null>;
}

export interface BodegasTable {
  id: Generated<number>;
  empresa_id: number;
  sucursal_id: number;
  nombre: string;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** As in `sucursales`. */
  conteo_pendiente: Generated<number | null>;
}

export interface CategoriasTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
}

export interface ProductosTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  descripcion: string | null;
  codigo: string;
  barcode: string | null;
  categoria_id: number | null;
  marca: string | null;
  tipo: 'Producto' | 'Servicio';
  precio: Decimal;
  costo: Decimal;
  costo_anterior: Decimal;
  costo_promedio: Decimal;
  enable: Generated<boolean>;
  porcentaje_impuesto: Decimal | null;
  img: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: Date | null;
  /** Σ stock of its entries in active warehouses of active branches (kept by triggers, never written). */
  stock_activo: Generated<Decimal>;
  /** How many of those entries have stock > 0. */
  bodegas_con_stock: Generated<number>;
  /** How many of those entries have stock ≤ stock_minimo. */
  bodegas_stock_bajo: Generated<number>;
}

export interface InventariosTable {
  id: Generated<number>;
  empresa_id: number;
  producto_id: number;
  bodega_id: number;
  stock: Decimal;
  stock_minimo: Generated<Decimal>;
  stock_maximo: Generated<Decimal>;
  nota: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Whether the entry is in its product's stock_activo and counts (set by triggers and `countInventarios`, never written). */
  contado: Generated<boolean>;
}

export const TIPOS_MOVIMIENTO = ['inventario_inicial', 'reserva', 'liberacion', 'ajuste'] as const;
export type TipoMovimiento = (typeof TIPOS_MOVIMIENTO)[number];

export interface MovimientosTable {
  id: Generated<string>;
  empresa_id: number;
  producto_id: number;
  bodega_id: number;
  tipo: TipoMovimiento;
  /** Signed: negative takes stock out. */
  cantidad: Decimal;
  stock_resultante: Decimal;
  origen: string;
  clave: string | null;
  concepto: string | null;
  created_at: Generated<Date>;
}

/** A line of a reservation as it was asked (quantities exact). */
export interface ReservaLinea {
  id_producto: number;
  cantidad: Decimal;
  mueve_stock: boolean;
}

type Json<T> = ColumnType<T, string, string>;

export interface ReservasTable {
  id: Generated<string>;
  empresa_id: number;
  clave: string;
  origen: string;
  bodega_id: number | null;
  estado: EstadoReserva;
  lineas: Json<ReservaLinea[]>;
  /** What the reservation was made for (migration 0009). */
  causa: Json<CausaStock>;
  revisar_en: ColumnType<Date, Date | string, Date | string>;
  revisiones: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  confirmed_at: Date | null;
  released_at: Date | null;
}

export interface AjusteMovimiento {
  id_producto: number;
  id_bodega: number;
  cantidad: Decimal;
  stock_resultante: Decimal;
}

export interface AjustesTable {
  id: Generated<string>;
  empresa_id: number;
  clave: string;
  origen: string;
  concepto: string | null;
  /** What the adjustment was made for (migration 0009). */
  causa: Json<CausaStock>;
  movimientos: Json<AjusteMovimiento[]>;
  /** When the adjustment was reverted (its movements reversed, `movimientos` emptied): the key is spent. */
  revertido_at: Date | null;
  created_at: Generated<Date>;
}

/**
 * A company's summary counters over its live products, split in rows (`ranura`) that are summed
 * on read; kept by triggers, never written by the service.
 */
export interface ResumenInventarioTable {
  empresa_id: number;
  ranura: number;
  productos: number;
  activos: number;
  con_stock: number;
  stock_bajo: number;
  stock_total: Decimal;
  valor_total: Decimal;
}

/** Live products per category (`categoria_id` 0: none), split like `resumen_inventario`. */
export interface ResumenCategoriasTable {
  empresa_id: number;
  categoria_id: number;
  ranura: number;
  productos: number;
}

export interface InventoryDb extends OutboxTables {
  sucursales: SucursalesTable;
  bodegas: BodegasTable;
  categorias: CategoriasTable;
  productos: ProductosTable;
  inventarios: InventariosTable;
  movimientos: MovimientosTable;
  reservas: ReservasTable;
  ajustes: AjustesTable;
  resumen_inventario: ResumenInventarioTable;
  resumen_categorias: ResumenCategoriasTable;
}
