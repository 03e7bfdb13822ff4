import type { Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';

/** Numeric columns are read as exact decimal strings; they are written as strings too. */
type Decimal = string;

export interface SucursalesTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface BodegasTable {
  id: Generated<number>;
  empresa_id: number;
  sucursal_id: number;
  nombre: string;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
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
}

export interface InventoryDb extends OutboxTables {
  sucursales: SucursalesTable;
  bodegas: BodegasTable;
  categorias: CategoriasTable;
  productos: ProductosTable;
  inventarios: InventariosTable;
}
