import type { Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { TipoDevolucion } from '@erp/contracts';

/** The Postgres schema this service owns. */
export const RETURNS_SCHEMA = 'returns';

/** Numeric columns are read as exact decimal strings; they are written as strings too. */
type Decimal = string;

export interface DocumentosTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  prefijo: Generated<string>;
  /** Next number to issue. */
  correlativo: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DevolucionesTable {
  id: Generated<number>;
  empresa_id: number;
  venta_id: number;
  bodega_id: number;
  documento_id: number;
  numero: number;
  correlativo: string;
  /** `YYYY-MM-DD`. */
  fecha: string;
  tipo: TipoDevolucion;
  referencia: string | null;
  observaciones: string | null;
  sub_total: Decimal;
  iva: Decimal;
  total: Decimal;
  descuento: Decimal;
  exenta: Decimal;
  no_sujeta: Generated<Decimal>;
  cuenta_a_terceros: Generated<Decimal>;
  iva_retenido: Generated<Decimal>;
  enable: Generated<boolean>;
  anulada_at: Date | null;
  usuario_id: number | null;
  nombre_usuario: string;
  nombre_cliente: string;
  nombre_documento: string;
  clave_stock: string | null;
  /** The key it registered with its sale under before committing (null before registration existed). */
  clave_registro: string | null;
  stock_aplicado_at: Date | null;
  stock_revertido_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface DevolucionDetallesTable {
  id: Generated<number>;
  devolucion_id: number;
  empresa_id: number;
  /** Position of the line in the return. */
  linea: number;
  venta_detalle_id: number;
  id_producto: number;
  codigo_producto: string;
  nombre_producto: string;
  marca_producto: string;
  descripcion: string;
  medida: string;
  mueve_stock: boolean;
  cantidad: Decimal;
  precio: Decimal;
  costo: Decimal;
  descuento: Decimal;
  porcentaje_impuesto: Decimal;
  sub_total: Decimal;
  iva: Decimal;
  total: Decimal;
  exenta: Decimal;
  no_sujeta: Generated<Decimal>;
  cuenta_a_terceros: Generated<Decimal>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ReturnsDb extends OutboxTables {
  documentos: DocumentosTable;
  devoluciones: DevolucionesTable;
  devolucion_detalles: DevolucionDetallesTable;
}
