import { sql, type Generated } from 'kysely';
import type { OutboxTables } from '@erp/bus';
import type { EstadoVenta } from '@erp/contracts';

export const SALES_SCHEMA = 'sales';

/** Numeric columns are read as exact decimal strings; they are written as strings too. */
type Decimal = string;

export interface DocumentosTable {
  id: Generated<number>;
  empresa_id: number;
  sucursal_id: number;
  nombre: string;
  prefijo: Generated<string>;
  /** Next number to issue. */
  correlativo: Generated<number>;
  activo: Generated<boolean>;
  solo_cotizacion: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface CanalesTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ClientesTable {
  id: Generated<number>;
  empresa_id: number;
  nombre: string;
  email: string | null;
  /** Identity or tax document number (migration 0010). */
  numero_documento: string | null;
  limite_credito: Generated<Decimal>;
  activo: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface VentasTable {
  id: Generated<number>;
  empresa_id: number;
  sucursal_id: number;
  bodega_id: number;
  documento_id: number;
  canal_id: number | null;
  cliente_id: number | null;
  usuario_id: number | null;
  /** `YYYY-MM-DD`. */
  fecha: string;
  correlativo: string;
  numero: number;
  referencia_externa: string | null;
  estado: EstadoVenta;
  cotizacion: boolean;
  origen: string;
  forma_pago: string | null;
  observaciones: string | null;
  monto_pago: Decimal | null;
  cambio: Decimal;
  fecha_expiracion: string | null;
  sub_total: Decimal;
  iva: Decimal;
  total: Decimal;
  descuento: Decimal;
  exenta: Decimal;
  saldo: Decimal;
  nombre_cliente: string | null;
  nombre_usuario: string | null;
  nombre_vendedor: string | null;
  nombre_documento: string;
  documento: unknown;
  documento_fiscal_emitido: Generated<boolean>;
  clave_reserva: string | null;
  /** Fingerprint of the creating request (`huellaOf`); null for sales written before it was kept. */
  huella: string | null;
  stock_devuelto_at: Date | null;
  /** Stock changes after creation, each adjusted under `venta-<id>-rev-<n>`. */
  revision_stock: Generated<number>;
  /** The document type that issued `numero`, once an update moved the sale to another type. */
  documento_emisor_id: number | null;
  /** Sum of the totals of the sale's active returns, and their count (kept by the returns consumer). */
  monto_devuelto: Generated<Decimal>;
  devoluciones_activas: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface VentaDetallesTable {
  id: Generated<number>;
  venta_id: number;
  empresa_id: number;
  /** Position of the line in the sale as sent. */
  linea: number;
  id_producto: number;
  codigo: string | null;
  nombre_producto: string | null;
  descripcion: string | null;
  mueve_stock: boolean;
  id_presentacion: number | null;
  cantidad: Decimal;
  precio: Decimal;
  descuento: Decimal;
  porcentaje_impuesto: Decimal;
  sub_total: Decimal;
  iva: Decimal;
  total: Decimal;
  exenta: Decimal;
  costo: Decimal;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/**
 * Count and sums of the sales of one company, date, state and document type, kept by triggers on
 * `ventas`. A row can hold a count of 0 (its sales moved elsewhere): readers skip those.
 */
export interface VentasResumenDiarioTable {
  empresa_id: number;
  /** `YYYY-MM-DD`. */
  fecha: string;
  estado: EstadoVenta;
  documento_id: number;
  cantidad: number;
  total: Decimal;
  iva: Decimal;
  descuento: Decimal;
}

/** A return registered with its sale before it committed (migration 0006). */
export interface DevolucionesRegistradasTable {
  empresa_id: number;
  clave: string;
  venta_id: number;
  estado: Generated<'registrada' | 'confirmada' | 'descartada'>;
  id_devolucion: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** A change of a sale that may move its stock and has not committed yet (see migration 0010). */
export interface CambiosEnCursoTable {
  empresa_id: number;
  clave: string;
  venta_id: number;
  created_at: Generated<Date>;
}

export interface SalesDb extends OutboxTables {
  devoluciones_registradas: DevolucionesRegistradasTable;
  cambios_en_curso: CambiosEnCursoTable;
  documentos: DocumentosTable;
  canales: CanalesTable;
  clientes: ClientesTable;
  ventas: VentasTable;
  venta_detalles: VentaDetallesTable;
  ventas_resumen_diario: VentasResumenDiarioTable;
}

/** A table named for raw `sql`, which is not bound to the service's schema as the query builder is: qualified. */
export const salesTable = (name: keyof SalesDb) => sql.table(`${SALES_SCHEMA}.${name}`);
